/* A program built outside the library: it links the shared libcubert and sees only its
   installed headers and exported symbols, registers the null backend (null_backend.c), and
   runs a kernel of the library on it. Exit 0 when every value verifies. */
#include <cubert/backend.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdio.h>
#include <string.h>

#include "cubert/backend.h"
#include "null_backend.h"

#define CHECK(expr)                                                      \
  do {                                                                   \
    cubert_status s_ = (expr);                                           \
    if (s_) {                                                            \
      fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, \
              cubert_status_message(s_));                                \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(void) {
  CHECK(cubert_backend_register(&cubert_null_backend));
  /* A second registration of the name is refused, naming it. */
  cubert_status again = cubert_backend_register(&cubert_null_backend);
  if (cubert_status_code(again) != CUBERT_CODE_INVALID_ARGUMENT ||
      !strstr(cubert_status_message(again), "\"null\" exists already")) {
    fprintf(stderr, "FAIL: a second registration gave: %s\n", cubert_status_message(again));
    return 1;
  }
  cubert_status_free(again);
  size_t count = 0;
  CHECK(cubert_devices_count("null", &count));
  if (count != 1) {
    fprintf(stderr, "FAIL: cubert_devices_count(\"null\") = %zu, expected 1\n", count);
    return 1;
  }
  cubert_client *client = NULL;
  CHECK(cubert_client_create("null", &client));
  enum { N = 1000 };
  float a[N], b[N], out[N];
  for (int i = 0; i < N; ++i) a[i] = (float)i, b[i] = 0.5f * (float)i;
  cubert_handle *ha = NULL, *hb = NULL, *ho = NULL;
  CHECK(cubert_client_create_buffer(client, a, sizeof a, &ha));
  CHECK(cubert_client_create_buffer(client, b, sizeof b, &hb));
  CHECK(cubert_client_empty(client, sizeof out, &ho));
  cubert_handle *const bufs[] = {ha, hb, ho};
  const uint64_t n = N;
  cubert_kernel_args args = {.buffers = bufs, .buffer_count = 3, .info = &n, .info_count = 1};
  cubert_cube_count_selection sel;
  CHECK(cubert_cube_count_select(client, (N + 63) / 64, &sel));
  CHECK(cubert_client_launch(client, &cubert_kernel_add_f32, sel.cube_count,
                             (cubert_cube_dim){64, 1, 1}, &args));
  CHECK(cubert_client_read(client, ho, out, sizeof out));
  for (int i = 0; i < N; ++i)
    if (out[i] != 1.5f * (float)i) {
      fprintf(stderr, "FAIL: out[%d] = %g, expected %g\n", i, out[i], 1.5 * i);
      return 1;
    }
  cubert_handle_release(ha);
  cubert_handle_release(hb);
  cubert_handle_release(ho);
  cubert_client_release(client);
  printf("null backend: registered, listed, ran add_f32 on %d elements: verified\n", N);
  return 0;
}

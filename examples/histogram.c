/* cubert example: a 256-bin histogram of random bytes (examples/histogram.cube.c), checked
   against the host's count.

   Usage: histogram [device] [N]     device: "cpu" (default), "opencl", ...; N bytes (default
                                     10000019, a prime: the last row is partial)
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist. */
#include <cubert/cubert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(expr)                                                         \
  do {                                                                      \
    cubert_status s_ = (expr);                                              \
    if (s_) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #expr, cubert_status_message(s_)); \
      cubert_status_free(s_);                                               \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

/* The kernel of examples/histogram.cube.c (compiled into this program by cubert_add_kernels). */
extern const cubert_kernel_def histogram256;

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : "cpu";
  const uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000019u;
  if (n == 0) {
    fprintf(stderr, "usage: %s [device] [N] (N > 0)\n", argv[0]);
    return 1;
  }
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(device, &client);
  if (s) {
    printf("SKIP: no device \"%s\": %s\n", device, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  const cubert_device_properties *props = cubert_client_properties(client);
  printf("histogram of %llu bytes on %s\n", (unsigned long long)n, props->name);

  uint8_t *data = malloc(n);
  if (!data) return 1;
  uint32_t state = 1, want[256] = {0}, got[256] = {0};
  for (uint64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u; /* an LCG's top byte: every bin gets hits */
    data[i] = (uint8_t)(state >> 24);
    ++want[data[i]];
  }
  cubert_handle *hd = NULL, *hh = NULL;
  CHECK(cubert_client_create_buffer(client, data, n, &hd));
  CHECK(cubert_client_create_buffer(client, got, sizeof got, &hh));
  cubert_handle *bufs[2] = {hd, hh};
  const uint64_t info[1] = {n};
  const cubert_kernel_args args = {bufs, 2, info, 1};
  /* 256 units per cube (fewer where the device allows fewer); about 64 rows per cube, at most
     256 cubes. */
  const uint32_t dim =
      props->hardware.max_units_per_cube < 256 ? props->hardware.max_units_per_cube : 256;
  uint64_t cubes = (n / dim + 63) / 64;
  cubes = cubes < 1 ? 1 : cubes > 256 ? 256 : cubes;
  CHECK(cubert_client_launch(client, &histogram256, cubert_cube_count_new_3d((uint32_t)cubes, 1, 1),
                             cubert_cube_dim_new_3d(dim, 1, 1), &args));
  CHECK(cubert_client_read(client, hh, got, sizeof got));
  int bad = 0;
  for (int b = 0; b < 256; ++b)
    if (got[b] != want[b]) {
      if (bad++ < 5) fprintf(stderr, "bin %d: %u, expected %u\n", b, got[b], want[b]);
    }
  printf("%s: %d of 256 bins differ (%llu cubes of %u units)\n", bad ? "FAILED" : "verified", bad,
         (unsigned long long)cubes, dim);
  cubert_handle_release(hd);
  cubert_handle_release(hh);
  cubert_client_release(client);
  free(data);
  return bad ? 1 : 0;
}

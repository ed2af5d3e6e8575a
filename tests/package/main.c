/* cubert package test: a host program built outside the cubert tree against an installed
   cubert (tests/package/run.sh), running the kernels of user_kernels.cube.c and checking them
   against a host reference.

   Usage: pkg_app [device]   device: a selector ("cpu", "opencl", "opencl:1", ...); default
                             $CUBERT_DEVICE, else "cpu".
   Exit status: 0 verified, 1 mismatch or error (a missing device is an error here: the package
   test names devices that must exist). */
#include <cubert/cubert.h>
#include <math.h>
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

extern const cubert_kernel_def pkg_axpy, pkg_block_sum;

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : NULL; /* NULL: $CUBERT_DEVICE, else "cpu" */
  cubert_client *client = NULL;
  CHECK(cubert_client_create(device, &client));
  printf("cubert %s on %s\n", CUBERT_VERSION_STRING, cubert_client_properties(client)->name);

  /* An odd size: a partial last cube. */
  const uint64_t n = 1000003;
  const uint32_t dim = 64;
  const uint64_t cubes = (n + dim - 1) / dim;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
  float *sums = malloc(cubes * sizeof(float));
  if (!x || !y || !sums) return 1;
  srand(7);
  for (uint64_t i = 0; i < n; ++i) {
    x[i] = (float)((double)rand() / RAND_MAX - 0.5);
    y[i] = (float)(i % 17) - 8.0f;
  }
  const float a = 1.5f;
  uint32_t a_bits;
  memcpy(&a_bits, &a, sizeof(a_bits));

  cubert_handle *hx = NULL, *hy = NULL, *hs = NULL;
  CHECK(cubert_client_create_buffer(client, x, n * sizeof(float), &hx));
  CHECK(cubert_client_create_buffer(client, y, n * sizeof(float), &hy));
  CHECK(cubert_client_empty(client, cubes * sizeof(float), &hs));
  const cubert_cube_count count = cubert_cube_count_new_1d((uint32_t)cubes);
  const cubert_cube_dim cube_dim = cubert_cube_dim_new_3d(dim, 1, 1);

  cubert_handle *axpy_bufs[2] = {hx, hy};
  const uint64_t axpy_info[2] = {n, a_bits};
  const cubert_kernel_args axpy_args = {axpy_bufs, 2, axpy_info, 2};
  CHECK(cubert_client_launch(client, &pkg_axpy, count, cube_dim, &axpy_args));
  /* The sums run over y after the axpy (same stream: in order). */
  cubert_handle *sum_bufs[2] = {hy, hs};
  const uint64_t sum_info[1] = {n};
  const cubert_kernel_args sum_args = {sum_bufs, 2, sum_info, 1};
  CHECK(cubert_client_launch(client, &pkg_block_sum, count, cube_dim, &sum_args));
  float *out = malloc(n * sizeof(float));
  if (!out) return 1;
  CHECK(cubert_client_read(client, hy, out, n * sizeof(float)));
  CHECK(cubert_client_read(client, hs, sums, cubes * sizeof(float)));

  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    /* One rounding of a*x and one of the sum, or one (a device that contracts to fma). */
    const double want = (double)a * x[i] + y[i];
    if (!(fabs(out[i] - want) <= 2.5e-7 * (fabs((double)a * x[i]) + fabs(y[i]))) && bad++ < 5)
      fprintf(stderr, "pkg_axpy: y[%llu] = %.9g, want %.9g\n", (unsigned long long)i, out[i], want);
  }
  for (uint64_t c = 0; c < cubes; ++c) {
    double want = 0, scale = 0;
    for (uint64_t i = c * dim; i < (c + 1) * dim && i < n; ++i) {
      want += (double)a * x[i] + y[i];
      scale += fabs((double)a * x[i] + y[i]);
    }
    if (!(fabs(sums[c] - want) <= 1e-5 * scale + 1e-6) && bad++ < 10)
      fprintf(stderr, "pkg_block_sum: sum[%llu] = %.9g, want %.9g\n", (unsigned long long)c,
              sums[c], want);
  }
  printf("  pkg_axpy over %llu, pkg_block_sum over %llu cubes: %s\n", (unsigned long long)n,
         (unsigned long long)cubes, bad ? "MISMATCH" : "verified");

  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_handle_release(hs);
  cubert_client_release(client);
  free(x);
  free(y);
  free(sums);
  free(out);
  return bad ? 1 : 0;
}

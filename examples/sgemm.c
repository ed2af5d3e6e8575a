/* cubert example: tiled SGEMM (examples/sgemm.cube.c), both forms, checked against the host.

   Usage: sgemm [device] [M N K]     device: "cpu" (default), "opencl", ... ; default 157 203 131
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist.

   Accuracy: the reference is computed in double. An element passes when
     |c - ref| <= K * FLT_EPSILON * sum_k |a_ik * b_kj|,
   the classical bound for a float dot product of length K (with a factor 2 to spare); the
   largest error relative to that scale is printed. */
#include <cubert/cubert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(expr)                                                         \
  do {                                                                      \
    cubert_status s_ = (expr);                                              \
    if (s_) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #expr, cubert_status_message(s_)); \
      cubert_status_free(s_);                                               \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

/* The kernels of examples/sgemm.cube.c (cubert_add_kernels compiles it into this program). */
extern const cubert_kernel_def sgemm_tiled, sgemm_tiled_fibers, sgemm_tiled_4rows;

/* Runs one kernel on the device and returns the largest scaled error against the reference. */
static double run(cubert_client *client, const cubert_kernel_def *kernel, uint32_t dim_y,
                  cubert_handle *ha, cubert_handle *hb, uint32_t m, uint32_t n, uint32_t k,
                  const double *ref, const double *scale) {
  cubert_handle *hc = NULL;
  CHECK(cubert_client_empty(client, (size_t)m * n * sizeof(float), &hc));
  cubert_handle *bufs[3] = {ha, hb, hc};
  const uint64_t info[3] = {m, n, k};
  const cubert_kernel_args args = {bufs, 3, info, 3};
  CHECK(cubert_client_launch(client, kernel,
                             cubert_cube_count_new_3d((n + 15) / 16, (m + 15) / 16, 1),
                             cubert_cube_dim_new_3d(16, dim_y, 1), &args));
  float *c = malloc((size_t)m * n * sizeof(float));
  if (!c) exit(1);
  CHECK(cubert_client_read(client, hc, c, (size_t)m * n * sizeof(float)));
  double worst = 0;
  for (size_t i = 0; i < (size_t)m * n; ++i) {
    double e = fabs(c[i] - ref[i]) / (scale[i] > 0 ? scale[i] : 1);
    if (!(e <= worst)) worst = e; /* NaN counts as the worst */
  }
  free(c);
  cubert_handle_release(hc);
  return worst;
}

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : "cpu";
  uint32_t m = 157, n = 203, k = 131;
  if (argc > 4) {
    m = (uint32_t)strtoul(argv[2], NULL, 10);
    n = (uint32_t)strtoul(argv[3], NULL, 10);
    k = (uint32_t)strtoul(argv[4], NULL, 10);
  }
  if (m == 0 || n == 0 || k == 0) {
    fprintf(stderr, "usage: %s [device] [M N K] (all > 0)\n", argv[0]);
    return 1;
  }
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(device, &client);
  if (s) {
    printf("SKIP: no device \"%s\": %s\n", device, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("sgemm %ux%ux%u on %s\n", m, n, k, cubert_client_properties(client)->name);

  float *a = malloc((size_t)m * k * sizeof(float)), *b = malloc((size_t)k * n * sizeof(float));
  double *ref = calloc((size_t)m * n, sizeof(double)),
         *scale = calloc((size_t)m * n, sizeof(double));
  if (!a || !b || !ref || !scale) return 1;
  srand(1);
  for (size_t i = 0; i < (size_t)m * k; ++i) a[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
  for (size_t i = 0; i < (size_t)k * n; ++i) b[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t p = 0; p < k; ++p)
      for (uint32_t j = 0; j < n; ++j) {
        double x = (double)a[(size_t)i * k + p] * b[(size_t)p * n + j];
        ref[(size_t)i * n + j] += x;
        scale[(size_t)i * n + j] += fabs(x);
      }

  cubert_handle *ha = NULL, *hb = NULL;
  CHECK(cubert_client_create_buffer(client, a, (size_t)m * k * sizeof(float), &ha));
  CHECK(cubert_client_create_buffer(client, b, (size_t)k * n * sizeof(float), &hb));
  const double tolerance = k * (double)FLT_EPSILON;
  /* Each kernel with its cube dim: 16 x 16 units, or 16 x 4 for the register-blocked one. */
  const cubert_kernel_def *kernels[3] = {&sgemm_tiled, &sgemm_tiled_fibers, &sgemm_tiled_4rows};
  const uint32_t dim_y[3] = {16, 16, 4};
  int bad = 0;
  for (int i = 0; i < 3; ++i) {
    double err = run(client, kernels[i], dim_y[i], ha, hb, m, n, k, ref, scale);
    int ok = err <= tolerance;
    bad |= !ok;
    printf("  %-19s max error %.2e x sum|a*b| (tolerance %.2e): %s\n", kernels[i]->name, err,
           tolerance, ok ? "verified" : "MISMATCH");
  }

  cubert_handle_release(ha);
  cubert_handle_release(hb);
  cubert_client_release(client);
  free(a);
  free(b);
  free(ref);
  free(scale);
  return bad;
}

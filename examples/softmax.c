/* cubert example: row softmax (examples/softmax.cube.c) at several cube sizes, both forms,
   checked against the host.

   Usage: softmax [device] [ROWS COLS]     device: "cpu" (default), "opencl", ...; default 37 1000
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist.

   Accuracy: the reference is computed in double from the same float inputs (in [-8, 8]). An
   element passes when its relative error is at most (COLS / 2 + 16) * FLT_EPSILON: the float
   x - max (|x - max| <= 16: 8 eps on exp's argument), exp (OpenCL allows 3 ulp), the scaling
   (2 eps) and a sum of COLS terms (COLS / 2 eps for any order of additions). */
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

/* The kernels of examples/softmax.cube.c (compiled into this program by cubert_add_kernels). */
extern const cubert_kernel_def softmax_rows, softmax_rows_fibers;

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : "cpu";
  uint32_t rows = 37, cols = 1000;
  if (argc > 3) {
    rows = (uint32_t)strtoul(argv[2], NULL, 10);
    cols = (uint32_t)strtoul(argv[3], NULL, 10);
  }
  if (rows == 0 || cols == 0) {
    fprintf(stderr, "usage: %s [device] [ROWS COLS] (both > 0)\n", argv[0]);
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
  printf("softmax %u rows x %u cols on %s\n", rows, cols, props->name);

  const size_t count = (size_t)rows * cols;
  float *x = malloc(count * sizeof(float)), *y = malloc(count * sizeof(float));
  double *ref = malloc(count * sizeof(double));
  if (!x || !y || !ref) return 1;
  srand(2);
  for (size_t i = 0; i < count; ++i) x[i] = (float)((double)rand() / RAND_MAX * 16 - 8);
  for (uint32_t r = 0; r < rows; ++r) {
    const float *xr = x + (size_t)r * cols;
    double mx = xr[0], sum = 0;
    for (uint32_t j = 1; j < cols; ++j) mx = xr[j] > mx ? xr[j] : mx;
    for (uint32_t j = 0; j < cols; ++j) sum += exp(xr[j] - mx);
    for (uint32_t j = 0; j < cols; ++j) ref[(size_t)r * cols + j] = exp(xr[j] - mx) / sum;
  }

  cubert_handle *hx = NULL, *hy = NULL;
  CHECK(cubert_client_create_buffer(client, x, count * sizeof(float), &hx));
  CHECK(cubert_client_empty(client, count * sizeof(float), &hy));
  cubert_handle *bufs[2] = {hx, hy};
  const uint64_t info[2] = {rows, cols};
  const cubert_kernel_args args = {bufs, 2, info, 2};
  /* One cube per row, spread over the axes within the device's limits. */
  cubert_cube_count_selection sel;
  CHECK(cubert_cube_count_select(client, rows, &sel));

  const double tolerance = (cols / 2.0 + 16) * FLT_EPSILON;
  const uint32_t dims[] = {64, 96, 256, 1024};
  const cubert_kernel_def *kernels[2] = {&softmax_rows, &softmax_rows_fibers};
  int bad = 0;
  for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); ++d) {
    if (dims[d] > props->hardware.max_units_per_cube) continue;
    for (int kind = 0; kind < 2; ++kind) {
      cubert_status s = cubert_client_launch(client, kernels[kind], sel.cube_count,
                                             cubert_cube_dim_new_3d(dims[d], 1, 1), &args);
      if (s && cubert_status_code(s) == CUBERT_CODE_UNITS) {
        /* The kernel's own limit (registers, shared memory) can be below the device's: a GPU
           may run this kernel with fewer units per cube than max_units_per_cube. */
        printf("  %-19s %4u units per cube: skipped, %s\n", kernels[kind]->name, dims[d],
               cubert_status_message(s));
        cubert_status_free(s);
        continue;
      }
      CHECK(s);
      CHECK(cubert_client_read(client, hy, y, count * sizeof(float)));
      double worst = 0;
      for (size_t i = 0; i < count; ++i) {
        double e = fabs(y[i] - ref[i]) / ref[i];
        if (!(e <= worst)) worst = e; /* NaN counts as the worst */
      }
      int ok = worst <= tolerance;
      bad |= !ok;
      printf("  %-19s %4u units per cube: max relative error %.2e (tolerance %.2e): %s\n",
             kernels[kind]->name, dims[d], worst, tolerance, ok ? "verified" : "MISMATCH");
    }
  }

  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_client_release(client);
  free(x);
  free(y);
  free(ref);
  return bad;
}

/* cubert quick start: saxpy and a reduction on 16M floats, verified against the host.
   Runs on the CPU server by default; any device through CUBERT_DEVICE (e.g. "opencl") or the
   first argument. */
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(expr)                                                         \
  do {                                                                      \
    cubert_status s_ = (expr);                                              \
    if (s_) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #expr, cubert_status_message(s_)); \
      cubert_status_free(s_);                                               \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One launch covering n units in cubes of `dim` units, spread within the device's limits. */
static cubert_cube_count cubes_for(cubert_client *client, uint64_t n, uint32_t dim) {
  cubert_cube_count_selection sel;
  CHECK(cubert_cube_count_select(client, (uint32_t)((n + dim - 1) / dim), &sel));
  return sel.cube_count;
}

int main(int argc, char **argv) {
  const uint64_t n = 16u << 20;
  const float a = 2.5f;
  cubert_client *client = NULL;
  CHECK(cubert_client_create(argc > 1 ? argv[1] : NULL, &client));
  const cubert_device_properties *p = cubert_client_properties(client);
  printf("device: %s (%s backend, %u cores/compute units, max %u units per cube)\n", p->name,
         p->backend,
         p->hardware.num_cpu_cores ? p->hardware.num_cpu_cores : p->hardware.num_compute_units,
         p->hardware.max_units_per_cube);

  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
  float *out = malloc(n * sizeof(float));
  if (!x || !y || !out) return 1;
  for (uint64_t i = 0; i < n; ++i) {
    x[i] = (float)(i % 1000) * 0.001f;
    y[i] = (float)(i % 7);
  }
  cubert_handle *hx = NULL, *hy = NULL;
  CHECK(cubert_client_create_buffer(client, x, n * sizeof(float), &hx));
  CHECK(cubert_client_create_buffer(client, y, n * sizeof(float), &hy));

  /* saxpy: y = a*x + y. Warm up once (compiles the kernel on OpenCL), then time one run. */
  uint32_t dim = p->hardware.max_units_per_cube < 256 ? p->hardware.max_units_per_cube : 256;
  cubert_cube_dim cube_dim = cubert_cube_dim_new_3d(dim, 1, 1);
  uint64_t info[2] = {n, cubert_kernel_info_f32(a)};
  cubert_handle *bufs[2] = {hx, hy};
  cubert_kernel_args args = {bufs, 2, info, 2};
  cubert_handle *warm = NULL;
  CHECK(cubert_client_create_buffer(client, y, n * sizeof(float), &warm));
  cubert_handle *warm_bufs[2] = {hx, warm};
  cubert_kernel_args warm_args = {warm_bufs, 2, info, 2};
  CHECK(cubert_client_launch(client, &cubert_kernel_saxpy_f32, cubes_for(client, n, dim), cube_dim,
                             &warm_args));
  CHECK(cubert_client_sync(client));
  cubert_handle_release(warm);

  double t0 = now_s();
  CHECK(cubert_client_launch(client, &cubert_kernel_saxpy_f32, cubes_for(client, n, dim), cube_dim,
                             &args));
  CHECK(cubert_client_sync(client));
  double t_saxpy = now_s() - t0;
  CHECK(cubert_client_read(client, hy, out, n * sizeof(float)));
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    float want = a * x[i] + y[i];
    if (fabsf(out[i] - want) > 1e-5f * fabsf(want) + 1e-6f) bad++;
  }
  printf("saxpy   n=%llu: %.3f ms, %.1f GB/s, %s\n", (unsigned long long)n, t_saxpy * 1e3,
         3.0 * n * sizeof(float) / t_saxpy / 1e9, bad ? "MISMATCH" : "verified");

  /* Reduction: per-cube partial sums of y on the device, then the partials on the host. */
  /* A GPU wants many cubes; the CPU server runs each cube on one core (reduce_sum_f32 is a
     phased kernel: each row of a cube's block is one vectorised loop over its units), so fewer,
     bigger blocks suit it. Both use cubes of `dim` units. */
  const int cpu_server = p->hardware.num_cpu_cores != 0;
  const uint64_t per_cube = cpu_server ? 65536 : 4096;
  uint64_t parts = cubert_kernel_reduce_cube_count(n, per_cube);
  cubert_handle *hpart = NULL;
  CHECK(cubert_client_empty(client, parts * sizeof(float), &hpart));
  uint64_t rinfo[2] = {n, per_cube};
  cubert_handle *rbufs[2] = {hy, hpart};
  cubert_kernel_args rargs = {rbufs, 2, rinfo, 2};
  cubert_cube_dim rdim = cubert_cube_dim_new_3d(dim, 1, 1);
  CHECK(cubert_client_launch(client, &cubert_kernel_reduce_sum_f32, cubes_for(client, parts, 1),
                             rdim, &rargs)); /* warm-up */
  CHECK(cubert_client_sync(client));
  t0 = now_s();
  CHECK(cubert_client_launch(client, &cubert_kernel_reduce_sum_f32, cubes_for(client, parts, 1),
                             rdim, &rargs));
  CHECK(cubert_client_sync(client));
  double t_reduce = now_s() - t0;
  float *partial = malloc(parts * sizeof(float));
  CHECK(cubert_client_read(client, hpart, partial, parts * sizeof(float)));
  double sum = 0, want = 0;
  for (uint64_t i = 0; i < parts; ++i) sum += partial[i];
  for (uint64_t i = 0; i < n; ++i) want += out[i];
  int ok = fabs(sum - want) <= 1e-4 * fabs(want);
  printf("reduce  n=%llu: %.3f ms, %.1f GB/s, sum %.6e (host %.6e), %s\n", (unsigned long long)n,
         t_reduce * 1e3, (double)n * sizeof(float) / t_reduce / 1e9, sum, want,
         ok ? "verified" : "MISMATCH");

  free(partial);
  free(x);
  free(y);
  free(out);
  cubert_handle_release(hpart);
  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_client_release(client);
  return (bad || !ok) ? 1 : 0;
}

/* cubert example: a 2-D Jacobi stencil (examples/stencil.cube.c), a few steps ping-ponging two
   buffers, checked against the host.

   Usage: stencil [device] [NX NY STEPS]   device: "cpu" (default), "opencl", ...;
                                           default 130 97 10
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist.

   Accuracy: the reference runs the same steps in double. Each float step rounds four times per
   point (three additions, one multiplication; contraction is off on both sides) and carries the
   error of its inputs, which the mean does not amplify, so after STEPS steps an element passes
   when |out - ref| <= 4 * STEPS * FLT_EPSILON * max|ref|. */
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

/* The kernel of examples/stencil.cube.c (compiled into this program by cubert_add_kernels). */
extern const cubert_kernel_def jacobi_step;

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : "cpu";
  uint32_t nx = 130, ny = 97, steps = 10;
  if (argc > 4) {
    nx = (uint32_t)strtoul(argv[2], NULL, 10);
    ny = (uint32_t)strtoul(argv[3], NULL, 10);
    steps = (uint32_t)strtoul(argv[4], NULL, 10);
  }
  if (nx == 0 || ny == 0) {
    fprintf(stderr, "usage: %s [device] [NX NY STEPS] (NX, NY > 0)\n", argv[0]);
    return 1;
  }
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(device, &client);
  if (s) {
    printf("SKIP: no device \"%s\": %s\n", device, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("stencil %ux%u, %u steps on %s\n", nx, ny, steps, cubert_client_properties(client)->name);

  /* A hot left edge, a cold right edge, noise inside. */
  const size_t count = (size_t)nx * ny;
  float *grid = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
  double *ref = malloc(count * sizeof(double)), *next = malloc(count * sizeof(double));
  if (!grid || !out || !ref || !next) return 1;
  srand(3);
  for (size_t i = 0; i < count; ++i)
    grid[i] = i % nx == 0 ? 100.0f : i % nx == nx - 1 ? 0.0f : (float)((double)rand() / RAND_MAX);
  for (size_t i = 0; i < count; ++i) ref[i] = grid[i];
  for (uint32_t t = 0; t < steps; ++t) {
    for (uint32_t y = 0; y < ny; ++y)
      for (uint32_t x = 0; x < nx; ++x) {
        const size_t i = (size_t)y * nx + x;
        next[i] = x == 0 || y == 0 || x == nx - 1 || y == ny - 1
                      ? ref[i]
                      : 0.25 * (ref[i - 1] + ref[i + 1] + ref[i - nx] + ref[i + nx]);
      }
    double *swap = ref;
    ref = next;
    next = swap;
  }

  cubert_handle *h[2] = {NULL, NULL};
  CHECK(cubert_client_create_buffer(client, grid, count * sizeof(float), &h[0]));
  CHECK(cubert_client_empty(client, count * sizeof(float), &h[1]));
  const uint64_t info[2] = {nx, ny};
  const cubert_cube_count cubes = cubert_cube_count_new_3d((nx + 15) / 16, (ny + 15) / 16, 1);
  for (uint32_t t = 0; t < steps; ++t) {
    cubert_handle *bufs[2] = {h[t % 2], h[(t + 1) % 2]};
    const cubert_kernel_args args = {bufs, 2, info, 2};
    CHECK(cubert_client_launch(client, &jacobi_step, cubes, cubert_cube_dim_new_3d(16, 16, 1),
                               &args));
  }
  CHECK(cubert_client_read(client, h[steps % 2], out, count * sizeof(float)));

  double worst = 0, top = 0;
  for (size_t i = 0; i < count; ++i) top = fmax(top, fabs(ref[i]));
  for (size_t i = 0; i < count; ++i) {
    double e = fabs(out[i] - ref[i]) / (top > 0 ? top : 1);
    if (!(e <= worst)) worst = e; /* NaN counts as the worst */
  }
  const double tolerance = 4.0 * (steps ? steps : 1) * FLT_EPSILON;
  int ok = worst <= tolerance;
  printf("  jacobi_step x %u: max error %.2e x max|ref| (tolerance %.2e): %s\n", steps, worst,
         tolerance, ok ? "verified" : "MISMATCH");

  cubert_handle_release(h[0]);
  cubert_handle_release(h[1]);
  cubert_client_release(client);
  free(grid);
  free(out);
  free(ref);
  free(next);
  return !ok;
}

/* cubert example: a large inclusive prefix sum (examples/scan.cube.c) of uint32 and float
   values, checked against the host.

   Usage: scan [device] [N]     device: "cpu" (default), "opencl", ...; N elements (default
                                10000019, a prime: the last row is partial)
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist.

   uint32 sums wrap modulo 2^32 on both sides and must match exactly. Float prefixes are compared
   with a double-precision reference: an element passes within 1e-5 of the sum of magnitudes up
   to it plus 1e-6 (the blocked order adds at most a few thousand rounded terms in a chain,
   tiles per cube + cubes + units + 16, each within half an ulp of the running sum). */
#include <cubert/cubert.h>
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

/* The kernels of examples/scan.cube.c (compiled into this program by cubert_add_kernels). */
extern const cubert_kernel_def scan_totals_u32, scan_offsets_u32, scan_tiles_u32, scan_totals_f32,
    scan_offsets_f32, scan_tiles_f32;

/* y = inclusive prefix sums of x (n elements of 4 bytes) with the three kernels of one type. */
static void scan_on_device(cubert_client *client, const cubert_kernel_def *const k[3],
                           cubert_handle *x, cubert_handle *y, uint64_t n) {
  const cubert_device_properties *props = cubert_client_properties(client);
  const uint32_t dim =
      props->hardware.max_units_per_cube < 256 ? props->hardware.max_units_per_cube : 256;
  /* About 4 tiles (of dim * 16 elements) per cube, at most 1024 cubes (launch 2 scans their
     totals in one cube). */
  uint64_t cubes = (n / dim + 63) / 64;
  cubes = cubes < 1 ? 1 : cubes > 1024 ? 1024 : cubes;
  cubert_handle *totals = NULL, *offsets = NULL;
  CHECK(cubert_client_empty(client, cubes * 4, &totals));
  CHECK(cubert_client_empty(client, cubes * 4, &offsets));
  const uint64_t info[1] = {n};
  const cubert_cube_count count = cubert_cube_count_new_3d((uint32_t)cubes, 1, 1);
  const cubert_cube_dim cube = cubert_cube_dim_new_3d(dim, 1, 1);
  cubert_handle *b1[2] = {x, totals}, *b2[2] = {totals, offsets}, *b3[3] = {x, offsets, y};
  const cubert_kernel_args a1 = {b1, 2, info, 1}, a2 = {b2, 2, NULL, 0}, a3 = {b3, 3, info, 1};
  CHECK(cubert_client_launch(client, k[0], count, cube, &a1));
  CHECK(cubert_client_launch(client, k[1], cubert_cube_count_new_3d(1, 1, 1), cube, &a2));
  CHECK(cubert_client_launch(client, k[2], count, cube, &a3));
  cubert_handle_release(totals);
  cubert_handle_release(offsets);
}

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
  printf("inclusive scan of %llu elements on %s\n", (unsigned long long)n,
         cubert_client_properties(client)->name);
  uint32_t *xu = malloc(n * 4), *yu = malloc(n * 4);
  float *xf = malloc(n * 4), *yf = malloc(n * 4);
  if (!xu || !yu || !xf || !yf) return 1;
  uint32_t state = 7;
  for (uint64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    xu[i] = state; /* large: the sums wrap */
    xf[i] = (float)(state >> 8) / 16777216.0f - 0.25f;
  }
  cubert_handle *hx = NULL, *hy = NULL;
  const cubert_kernel_def *const ku[3] = {&scan_totals_u32, &scan_offsets_u32, &scan_tiles_u32};
  const cubert_kernel_def *const kf[3] = {&scan_totals_f32, &scan_offsets_f32, &scan_tiles_f32};
  CHECK(cubert_client_create_buffer(client, xu, n * 4, &hx));
  CHECK(cubert_client_empty(client, n * 4, &hy));
  scan_on_device(client, ku, hx, hy, n);
  CHECK(cubert_client_read(client, hy, yu, n * 4));
  cubert_handle_release(hx);
  CHECK(cubert_client_create_buffer(client, xf, n * 4, &hx));
  scan_on_device(client, kf, hx, hy, n);
  CHECK(cubert_client_read(client, hy, yf, n * 4));

  uint64_t bad_u = 0, bad_f = 0;
  uint32_t su = 0;
  double sf = 0, mag = 0;
  for (uint64_t i = 0; i < n; ++i) {
    su += xu[i];
    sf += xf[i];
    mag += fabs(xf[i]);
    if (yu[i] != su && bad_u++ < 5)
      fprintf(stderr, "uint32 y[%llu] = %u, expected %u\n", (unsigned long long)i, yu[i], su);
    if (fabs(yf[i] - sf) > 1e-5 * mag + 1e-6 && bad_f++ < 5)
      fprintf(stderr, "float y[%llu] = %.9g, expected %.9g\n", (unsigned long long)i, (double)yf[i],
              sf);
  }
  printf("%s: %llu uint32 and %llu float prefixes wrong\n", bad_u + bad_f ? "FAILED" : "verified",
         (unsigned long long)bad_u, (unsigned long long)bad_f);
  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_client_release(client);
  free(xu);
  free(yu);
  free(xf);
  free(yf);
  return bad_u + bad_f ? 1 : 0;
}

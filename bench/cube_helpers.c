/* bench_cube_helpers — the examples of issue 20's cube helpers on the CPU server against a
   2-thread OpenMP loop (as many threads as the CPU server has workers), in one process, side by
   side, as a markdown report.

   1. Histogram (examples/histogram.cube.c): N bytes (default 64M) into 256 bins; the peer is an
      OpenMP loop with private bins per thread, merged at the end. Target: within 1.5x.
   2. Inclusive scan (examples/scan.cube.c: per-cube totals, a scan of the totals, a scan of
      each cube's rows from its offset) of N uint32 and of N float values; the peer is the
      OpenMP two-pass scan (each thread sums its half, then scans it from the sum of the halves
      before it). Target: within 2x.
   cubert's time is the launches and a sync (the histogram: also zeroing and reading its 1 KiB
   of bins); the data stays in device memory, as the peer's stays in its arrays. Each variant
   is verified against the other before it is timed; then the two alternate (the order reversed
   every other repetition) for --reps repetitions after one warm-up; medians and min–max.

   Usage: bench_cube_helpers [--n=N] [--reps=R]
   The process restarts itself once with OMP_WAIT_POLICY=passive, so that idle OpenMP threads
   sleep while the CPU server works. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ocl.h"
#include "bench_util.h"
#include "cubert/cubert.h"

#ifndef _OPENMP
int main(void) {
  printf("bench_cube_helpers needs OpenMP (the peer loops); this build has none\n");
  return 77;
}
#else
#include <omp.h>

#define MAX_REPS 64

/* The example kernels, compiled into this program (bench/CMakeLists.txt). */
extern const cubert_kernel_def histogram256, scan_totals_u32, scan_offsets_u32, scan_tiles_u32,
    scan_totals_f32, scan_offsets_f32, scan_tiles_f32;

/* ---- histogram ------------------------------------------------------------------------------ */

typedef struct hist_job {
  cubert_client *client;
  cubert_handle *data, *bins;
  uint64_t n, cubes;
  uint32_t dim;
  const uint8_t *host;
  uint32_t result[256];
} hist_job;

static void hist_cubert(hist_job *j) {
  static const uint32_t zeros[256] = {0};
  cubert_handle *bufs[2] = {j->data, j->bins};
  const uint64_t info[1] = {j->n};
  const cubert_kernel_args args = {bufs, 2, info, 1};
  BENCH_CHECK(cubert_client_write(j->client, j->bins, 0, zeros, sizeof zeros));
  BENCH_CHECK(cubert_client_launch(j->client, &histogram256,
                                   cubert_cube_count_new_3d((uint32_t)j->cubes, 1, 1),
                                   cubert_cube_dim_new_3d(j->dim, 1, 1), &args));
  BENCH_CHECK(cubert_client_read(j->client, j->bins, j->result, sizeof j->result));
}

static void hist_openmp(hist_job *j) {
  memset(j->result, 0, sizeof j->result);
  const uint8_t *data = j->host;
  const int64_t n = (int64_t)j->n;
#pragma omp parallel
  {
    uint32_t mine[256] = {0};
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) ++mine[data[i]];
    for (int b = 0; b < 256; ++b) {
#pragma omp atomic
      j->result[b] += mine[b];
    }
  }
}

/* ---- scan ----------------------------------------------------------------------------------- */

typedef struct scan_job {
  cubert_client *client;
  cubert_handle *x, *y, *totals, *offsets;
  uint64_t n, cubes;
  uint32_t dim;
  int is_float;
  const void *host_x;
  void *host_y;
} scan_job;

static void scan_cubert(scan_job *j) {
  const cubert_kernel_def *const *k =
      j->is_float ? (const cubert_kernel_def *const[3]){&scan_totals_f32, &scan_offsets_f32,
                                                        &scan_tiles_f32}
                  : (const cubert_kernel_def *const[3]){&scan_totals_u32, &scan_offsets_u32,
                                                        &scan_tiles_u32};
  const uint64_t info[1] = {j->n};
  const cubert_cube_count count = cubert_cube_count_new_3d((uint32_t)j->cubes, 1, 1);
  const cubert_cube_dim cube = cubert_cube_dim_new_3d(j->dim, 1, 1);
  cubert_handle *b1[2] = {j->x, j->totals}, *b2[2] = {j->totals, j->offsets},
                *b3[3] = {j->x, j->offsets, j->y};
  const cubert_kernel_args a1 = {b1, 2, info, 1}, a2 = {b2, 2, NULL, 0}, a3 = {b3, 3, info, 1};
  BENCH_CHECK(cubert_client_launch(j->client, k[0], count, cube, &a1));
  BENCH_CHECK(cubert_client_launch(j->client, k[1], cubert_cube_count_new_3d(1, 1, 1), cube, &a2));
  BENCH_CHECK(cubert_client_launch(j->client, k[2], count, cube, &a3));
  BENCH_CHECK(cubert_client_sync(j->client));
}

/* The two-pass OpenMP scan: thread t sums its static share, then scans it from the sum of the
   shares before it. The sums of pass 1 may be reassociated (omp simd reduction), as any
   OpenMP user would let them; pass 2 is the sequential chain. */
#define SCAN_OPENMP_FN(T, sfx)                                                           \
  static void scan_openmp_##sfx(const T *x, T *y, uint64_t n) {                          \
    T partial[256];                                                                      \
    _Pragma("omp parallel") {                                                            \
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();                    \
      const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;                             \
      T s = 0;                                                                           \
      _Pragma("omp simd reduction(+ : s)") for (uint64_t i = lo; i < hi; ++i) s += x[i]; \
      partial[t] = s;                                                                    \
      _Pragma("omp barrier") T run = 0;                                                  \
      for (int k = 0; k < t; ++k) run += partial[k];                                     \
      for (uint64_t i = lo; i < hi; ++i) {                                               \
        run += x[i];                                                                     \
        y[i] = run;                                                                      \
      }                                                                                  \
    }                                                                                    \
  }
SCAN_OPENMP_FN(uint32_t, u32)
SCAN_OPENMP_FN(float, f32)

static void scan_openmp(scan_job *j) {
  if (j->is_float)
    scan_openmp_f32(j->host_x, j->host_y, j->n);
  else
    scan_openmp_u32(j->host_x, j->host_y, j->n);
}

/* ---- measurement ---------------------------------------------------------------------------- */

typedef void (*variant_fn)(void *);

/* Alternates a and b (b first in odd repetitions) after one warm-up each; seconds per run. */
static void alternate(variant_fn a, variant_fn b, void *job, int reps, double *ta, double *tb) {
  a(job);
  b(job);
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 2; ++k) {
      const int first_a = (r % 2 == 0) == (k == 0);
      const uint64_t t0 = bench_now_ns();
      (first_a ? a : b)(job);
      (first_a ? ta : tb)[r] = bench_seconds_since(t0);
    }
}

static void report(const char *what, const char *peer, const double *mine, const double *theirs,
                   int reps, double target) {
  const bench_stats m = bench_stats_scaled(mine, (size_t)reps, 1e3);
  const bench_stats p = bench_stats_scaled(theirs, (size_t)reps, 1e3);
  const double ratio = m.median / p.median;
  bench_row(what, "ms", m, peer, p, bench_textf("%.2fx", ratio).s,
            bench_textf("<= %.1fx", target).s, bench_verdict(ratio <= target));
}

int main(int argc, char **argv) {
  uint64_t n = 64ull << 20;
  int reps = 9;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--n=", 4) == 0)
      n = strtoull(argv[i] + 4, NULL, 10);
    else if (strncmp(argv[i], "--reps=", 7) == 0)
      reps = atoi(argv[i] + 7);
    else {
      fprintf(stderr, "usage: %s [--n=N] [--reps=R]\n", argv[0]);
      return 2;
    }
  }
  if (n == 0) n = 1;
  if (reps < 1) reps = 1;
  if (reps > MAX_REPS) reps = MAX_REPS;
  {
    const char *names[] = {"OMP_WAIT_POLICY"};
    const char *values[] = {"passive"};
    bench_reexec_with_env(argv, "BENCH_CUBE_HELPERS_RESTARTED", names, values, 1);
  }
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create("cpu", &client));
  const cubert_device_properties *p = cubert_client_properties(client);
  const int threads = (int)(p->hardware.num_cpu_cores ? p->hardware.num_cpu_cores : 1);
  omp_set_num_threads(threads);
  printf("# bench_cube_helpers --n=%llu --reps=%d\n\n", (unsigned long long)n, reps);
  bench_print_env(stdout);
  bench_print_device(stdout, p);
  printf("\n");
  bench_compare_header(stdout);
  bench_notes notes = {.count = 0};
  const uint32_t dim = 256;
  double ta[MAX_REPS], tb[MAX_REPS];

  /* 1. Histogram. */
  {
    uint8_t *host = bench_huge_alloc(n);
    if (!host) return 1;
    uint32_t state = 1;
    for (uint64_t i = 0; i < n; ++i) {
      state = state * 1664525u + 1013904223u;
      host[i] = (uint8_t)(state >> 24);
    }
    hist_job j = {.client = client, .n = n, .dim = dim, .host = host};
    j.cubes = (n / dim + 63) / 64;
    j.cubes = j.cubes < 1 ? 1 : j.cubes > 256 ? 256 : j.cubes;
    BENCH_CHECK(cubert_client_create_buffer(client, host, n, &j.data));
    BENCH_CHECK(cubert_client_empty(client, 1024, &j.bins));
    uint32_t want[256];
    hist_openmp(&j);
    memcpy(want, j.result, sizeof want);
    hist_cubert(&j);
    if (memcmp(want, j.result, sizeof want) != 0) {
      fprintf(stderr, "histogram: cubert and OpenMP disagree\n");
      return 1;
    }
    alternate((variant_fn)hist_cubert, (variant_fn)hist_openmp, &j, reps, ta, tb);
    report(bench_textf("histogram, %llu uint8 into 256 bins", (unsigned long long)n).s,
           bench_textf("OpenMP, %d threads, private bins", threads).s, ta, tb, reps, 1.5);
    bench_note(&notes,
               "histogram: PHASED_KERNEL histogram256, %llu cubes of %u units, shared-memory "
               "sub-histograms (SHARED_ATOMIC_ADD), merged with ATOMIC_ADD",
               (unsigned long long)j.cubes, dim);
    cubert_handle_release(j.data);
    cubert_handle_release(j.bins);
    bench_huge_free(host, n);
  }

  /* 2. Scans. */
  for (int is_float = 0; is_float < 2; ++is_float) {
    void *x = bench_huge_alloc(n * 4), *y = bench_huge_alloc(n * 4), *back = malloc(n * 4);
    if (!x || !y || !back) return 1;
    uint32_t state = 7;
    for (uint64_t i = 0; i < n; ++i) {
      state = state * 1664525u + 1013904223u;
      if (is_float)
        ((float *)x)[i] = (float)(state >> 8) / 16777216.0f - 0.25f;
      else
        ((uint32_t *)x)[i] = state;
    }
    scan_job j = {
        .client = client, .n = n, .dim = dim, .is_float = is_float, .host_x = x, .host_y = y};
    j.cubes = (n / dim + 63) / 64;
    j.cubes = j.cubes < 1 ? 1 : j.cubes > 1024 ? 1024 : j.cubes;
    BENCH_CHECK(cubert_client_create_buffer(client, x, n * 4, &j.x));
    BENCH_CHECK(cubert_client_empty(client, n * 4, &j.y));
    BENCH_CHECK(cubert_client_empty(client, j.cubes * 4, &j.totals));
    BENCH_CHECK(cubert_client_empty(client, j.cubes * 4, &j.offsets));
    scan_openmp(&j);
    scan_cubert(&j);
    BENCH_CHECK(cubert_client_read(client, j.y, back, n * 4));
    uint64_t bad = 0;
    double mag = 0; /* sum of magnitudes so far: float prefixes of 64M terms drift apart */
    for (uint64_t i = 0; i < n; ++i) {
      if (is_float) {
        const float a = ((float *)back)[i], b = ((float *)y)[i];
        mag += fabsf(((const float *)x)[i]);
        bad += fabs((double)a - b) > 1e-3 * mag + 1e-3;
      } else {
        bad += ((uint32_t *)back)[i] != ((uint32_t *)y)[i];
      }
    }
    if (bad) {
      fprintf(stderr, "scan (%s): %llu prefixes disagree\n", is_float ? "float" : "uint32",
              (unsigned long long)bad);
      return 1;
    }
    alternate((variant_fn)scan_cubert, (variant_fn)scan_openmp, &j, reps, ta, tb);
    report(
        bench_textf("inclusive scan, %llu %s", (unsigned long long)n, is_float ? "float" : "uint32")
            .s,
        bench_textf("OpenMP, %d threads, two passes", threads).s, ta, tb, reps, 2.0);
    if (is_float)
      bench_note(&notes,
                 "scan: three PHASED_KERNELs (scan_totals, scan_offsets, scan_tiles), %llu cubes "
                 "of %u units, 16 consecutive elements per unit; the float results agree with the "
                 "peer's within 1e-3 of the prefix's sum of magnitudes",
                 (unsigned long long)j.cubes, dim);
    cubert_handle_release(j.x);
    cubert_handle_release(j.y);
    cubert_handle_release(j.totals);
    cubert_handle_release(j.offsets);
    bench_huge_free(x, n * 4);
    bench_huge_free(y, n * 4);
    free(back);
  }
  bench_notes_print(stdout, &notes);
  cubert_client_release(client);
  return 0;
}
#endif /* _OPENMP */

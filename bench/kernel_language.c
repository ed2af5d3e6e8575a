/* bench_kernel_language — the kernel language's cube forms on the example kernels (issue 9's
   performance bullets), in one run, with peers, as a markdown report.

   1. Tiled 16x16 SGEMM (examples/sgemm.cube.c), N x N x N f32 (default N = 1024), GFLOP/s
      (2 N^3 / time):
      - sgemm_tiled (PHASED_KERNEL, 16x16 units) on the CPU server; target >= 10x
      - sgemm_tiled_fibers (CUBE_KERNEL, the same body; the build phases it, tools/cubert_phase.py,
        so the target is within 1.5x of the hand-phased kernel; bench_natural_kernels times the
        fiber form too);
      - sgemm_tiled_4rows (the phased kernel register-blocked: 16x4 units, 4 rows each);
      - sgemm_tiled and sgemm_tiled_4rows with their kernel file built with -march=native
        (bench/sgemm_native.cube.c; cubert_add_kernels builds for the baseline ISA);
        these five alternate in this process, the order reversed every other repetition;
      - sgemm_tiled and sgemm_tiled_4rows on the "opencl" device (PoCL here; the same flattened
        kernels); target: the CPU server faster. In child processes, so PoCL's worker threads
        never coexist with the CPU server's;
      - OpenBLAS cblas_sgemm with as many threads as the CPU server has workers (informative),
        in a child process. When its median is below 100 GFLOP/s, it runs again with
        OPENBLAS_CORETYPE chosen from the CPU's flags (SkylakeX with AVX-512, else Zen on AMD,
        else Haswell) unless that is already the inherited value, and both rows are reported.
   2. Row softmax (examples/softmax.cube.c), ROWS x COLS f32 (default 4096 x 1024), one cube per
      row, softmax_rows (PHASED_KERNEL) at 32, 64, ..., 1024 units per cube, and
      softmax_rows_fibers (CUBE_KERNEL) at 256, all interleaved in this process; ms per launch.
      Target: 256 units within 1.5x of the best size.
   Every variant is checked against a double-precision host reference on sampled outputs
   before it is timed; statistics are medians and min–max over --reps repetitions after one
   warm-up.

   Usage: bench_kernel_language [--quick] [--only=12] [--reps=R] [--n=N] [--rows=ROWS] [--cols=COLS]
     --quick   N = 512, 2048 rows, 3 repetitions (a smoke test, not for the record)
     --only    the sections to run (default both: 1 SGEMM, 2 softmax)
   Children (internal): --sgemm-child DEVICE N REPS tiled|4rows, --openblas-child N REPS THREADS.
   The machine's load matters: the report prints the load average at its start and end. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench_util.h"
#include "cubert/cubert.h"

#define CHILD_EXIT_UNAVAILABLE 77
#define MAX_REPS 64

/* The example kernels, compiled into this program (bench/CMakeLists.txt). */
extern const cubert_kernel_def sgemm_tiled, sgemm_tiled_fibers, sgemm_tiled_4rows, softmax_rows,
    softmax_rows_fibers;
/* The SGEMM kernels again, their file compiled with -march=native (bench/sgemm_native.cube.c). */
extern const cubert_kernel_def native_sgemm_tiled, native_sgemm_tiled_4rows;

typedef struct config {
  uint32_t n;          /* SGEMM size */
  uint32_t rows, cols; /* softmax shape */
  int reps;            /* timed repetitions per variant */
} config;

/* ---- SGEMM -------------------------------------------------------------------------------- */

/* Inputs in [-1, 1), the same in every process (fixed seed). */
static void gemm_inputs(uint32_t n, float **out_a, float **out_b) {
  const size_t count = (size_t)n * n;
  float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float));
  if (!a || !b) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  srand(7);
  for (size_t i = 0; i < count; ++i) a[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
  for (size_t i = 0; i < count; ++i) b[i] = (float)((double)rand() / RAND_MAX * 2 - 1);
  *out_a = a;
  *out_b = b;
}

/* Checks 512 sampled elements of C = A * B against a double dot product, within the float dot
   product bound N * FLT_EPSILON * sum |a * b| (examples/sgemm.c). Returns 1 when all pass. */
static int gemm_verify(uint32_t n, const float *a, const float *b, const float *c) {
  for (int s = 0; s < 512; ++s) {
    const uint32_t i = (uint32_t)(((uint64_t)s * 7919) % n),
                   j = (uint32_t)(((uint64_t)s * 104729 + 13) % n);
    double ref = 0, scale = 0;
    for (uint32_t p = 0; p < n; ++p) {
      double x = (double)a[(size_t)i * n + p] * b[(size_t)p * n + j];
      ref += x;
      scale += fabs(x);
    }
    if (!(fabs(c[(size_t)i * n + j] - ref) <= n * (double)FLT_EPSILON * scale)) {
      fprintf(stderr, "sgemm: C[%u][%u] = %g, expected %g\n", i, j, (double)c[(size_t)i * n + j],
              ref);
      return 0;
    }
  }
  return 1;
}

typedef struct gemm {
  cubert_client *client;
  cubert_handle *a, *b, *c;
  uint32_t n;
} gemm;

static void gemm_setup(gemm *g, cubert_client *client, uint32_t n, const float *a, const float *b) {
  g->client = client;
  g->n = n;
  const size_t bytes = (size_t)n * n * sizeof(float);
  BENCH_CHECK(cubert_client_create_buffer(client, a, bytes, &g->a));
  BENCH_CHECK(cubert_client_create_buffer(client, b, bytes, &g->b));
  BENCH_CHECK(cubert_client_empty(client, bytes, &g->c));
}

static void gemm_release(gemm *g) {
  cubert_handle_release(g->a);
  cubert_handle_release(g->b);
  cubert_handle_release(g->c);
}

/* The register-blocked kernel runs 16 x 4 units per 16 x 16 tile, the others 16 x 16. */
static uint32_t gemm_dim_y(const cubert_kernel_def *kernel) {
  return kernel == &sgemm_tiled_4rows || kernel == &native_sgemm_tiled_4rows ? 4 : 16;
}

/* One launch + sync of `kernel`; seconds. */
static double gemm_time(gemm *g, const cubert_kernel_def *kernel) {
  cubert_handle *bufs[3] = {g->a, g->b, g->c};
  const uint64_t info[3] = {g->n, g->n, g->n};
  const cubert_kernel_args args = {bufs, 3, info, 3};
  const uint32_t tiles = (g->n + 15) / 16;
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_launch(g->client, kernel, cubert_cube_count_new_3d(tiles, tiles, 1),
                                   cubert_cube_dim_new_3d(16, gemm_dim_y(kernel), 1), &args));
  BENCH_CHECK(cubert_client_sync(g->client));
  return bench_seconds_since(t0);
}

/* Runs `kernel` once (the warm-up) and checks its result; exits on a mismatch. */
static void gemm_warm_and_verify(gemm *g, const cubert_kernel_def *kernel, const float *a,
                                 const float *b) {
  const size_t count = (size_t)g->n * g->n;
  float *c = malloc(count * sizeof(float));
  if (!c) exit(1);
  BENCH_CHECK(cubert_client_write(g->client, g->c, 0, a, count * sizeof(float))); /* not C */
  gemm_time(g, kernel);
  BENCH_CHECK(cubert_client_read(g->client, g->c, c, count * sizeof(float)));
  if (!gemm_verify(g->n, a, b, c)) {
    fprintf(stderr, "%s: wrong result\n", kernel->name);
    exit(1);
  }
  free(c);
}

/* --sgemm-child DEVICE N REPS KERNEL: sgemm_tiled (KERNEL "tiled") or sgemm_tiled_4rows
   ("4rows") on DEVICE; prints "# <device>" and the seconds of each repetition. */
static int child_sgemm(const char *device, uint32_t n, int reps, const char *which) {
  const cubert_kernel_def *kernel = strcmp(which, "4rows") == 0 ? &sgemm_tiled_4rows : &sgemm_tiled;
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(device, &client);
  if (s) {
    printf("# no device \"%s\": %s\n", device, cubert_status_message(s));
    cubert_status_free(s);
    return CHILD_EXIT_UNAVAILABLE;
  }
  float *a, *b;
  gemm_inputs(n, &a, &b);
  gemm g;
  gemm_setup(&g, client, n, a, b);
  gemm_warm_and_verify(&g, kernel, a, b);
  double samples[MAX_REPS];
  for (int r = 0; r < reps; ++r) samples[r] = gemm_time(&g, kernel);
  const cubert_device_properties *p = cubert_client_properties(client);
  printf("# %s (%s backend, %u compute units)\n", p->name, p->backend,
         p->hardware.num_compute_units);
  bench_emit_samples(stdout, samples, (size_t)reps);
  gemm_release(&g);
  cubert_client_release(client);
  free(a);
  free(b);
  return 0;
}

/* --openblas-child N REPS THREADS: cblas_sgemm on THREADS threads; prints "# <config>" and the
   seconds of each repetition. */
static int child_openblas(uint32_t n, int reps, int threads) {
#ifdef BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  float *a, *b;
  gemm_inputs(n, &a, &b);
  const size_t count = (size_t)n * n;
  float *c = malloc(count * sizeof(float));
  if (!c) return 1;
  double samples[MAX_REPS];
  for (int r = -1; r < reps; ++r) {
    uint64_t t0 = bench_now_ns();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a, (int)n,
                b, (int)n, 0.0f, c, (int)n);
    double t = bench_seconds_since(t0);
    if (r >= 0) samples[r] = t;
    if (r == -1 && !gemm_verify(n, a, b, c)) return 1;
  }
  const char *coretype = getenv("OPENBLAS_CORETYPE");
  printf("# OpenBLAS %s, core %s, %d threads, OPENBLAS_CORETYPE=%s\n", openblas_get_config(),
         openblas_get_corename(), openblas_get_num_threads(), coretype ? coretype : "(unset)");
  bench_emit_samples(stdout, samples, (size_t)reps);
  free(a);
  free(b);
  free(c);
  return 0;
#else
  (void)n, (void)reps, (void)threads;
  printf("# built without OpenBLAS (libopenblas-dev, tools/install-deps.sh)\n");
  return CHILD_EXIT_UNAVAILABLE;
#endif
}

/* A peer measured in a child process of this binary. */
typedef struct peer {
  double samples[MAX_REPS];
  size_t count;
  char comment[256];
  int status;
} peer;

static void peer_run(peer *p, const char *const *args, const char *const *env) {
  memset(p, 0, sizeof(*p));
  p->status =
      bench_run_self(args, env, p->samples, MAX_REPS, &p->count, p->comment, sizeof(p->comment));
  if (p->status != 0) {
    if (p->status != CHILD_EXIT_UNAVAILABLE)
      fprintf(stderr, "bench_kernel_language: child %s exited with status %d\n", args[1],
              p->status);
    p->count = 0;
  }
}

/* The OPENBLAS_CORETYPE for this CPU: SkylakeX kernels need AVX-512 (which Zen 4 and later
   have); Zen for older AMD; Haswell otherwise. */
static const char *openblas_coretype_for_cpu(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  int avx512 = 0, amd = 0;
  if (f) {
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
      if (strncmp(line, "flags", 5) == 0 && strstr(line, " avx512f")) avx512 = 1;
      if (strncmp(line, "vendor_id", 9) == 0 && strstr(line, "AuthenticAMD")) amd = 1;
    }
    fclose(f);
  }
  return avx512 ? "SkylakeX" : amd ? "Zen" : "Haswell";
}

/* ---- softmax ------------------------------------------------------------------------------ */

typedef struct softmax {
  cubert_client *client;
  cubert_handle *x, *y;
  uint32_t rows, cols;
  cubert_cube_count cubes;
} softmax;

/* One launch + sync; seconds. */
static double softmax_time(softmax *s, const cubert_kernel_def *kernel, uint32_t units) {
  cubert_handle *bufs[2] = {s->x, s->y};
  const uint64_t info[2] = {s->rows, s->cols};
  const cubert_kernel_args args = {bufs, 2, info, 2};
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_launch(s->client, kernel, s->cubes, cubert_cube_dim_new_3d(units, 1, 1),
                                   &args));
  BENCH_CHECK(cubert_client_sync(s->client));
  return bench_seconds_since(t0);
}

/* Checks 16 sampled rows of y against double, within (cols / 2 + 16) * FLT_EPSILON relative
   (examples/softmax.c). Returns 1 when all pass. */
static int softmax_verify(const softmax *s, const float *x, const float *y) {
  for (uint32_t k = 0; k < 16; ++k) {
    const uint32_t r = (uint32_t)(((uint64_t)k * 2654435761u) % s->rows);
    const float *xr = x + (size_t)r * s->cols;
    const float *yr = y + (size_t)r * s->cols;
    double mx = xr[0], sum = 0;
    for (uint32_t j = 1; j < s->cols; ++j) mx = fmax(mx, xr[j]);
    for (uint32_t j = 0; j < s->cols; ++j) sum += exp(xr[j] - mx);
    for (uint32_t j = 0; j < s->cols; ++j) {
      double ref = exp(xr[j] - mx) / sum;
      if (!(fabs(yr[j] - ref) <= (s->cols / 2.0 + 16) * FLT_EPSILON * ref)) {
        fprintf(stderr, "softmax: y[%u][%u] = %g, expected %g\n", r, j, (double)yr[j], ref);
        return 0;
      }
    }
  }
  return 1;
}

/* ---- report -------------------------------------------------------------------------------- */

static bench_text ratio_text(double r) {
  return bench_textf("%.2f\u00d7", r);
}

static void section_sgemm(const config *cfg, int threads, bench_notes *notes) {
  const uint32_t n = cfg->n;
  const double gflop = 2.0 * n * n * n * 1e-9;
  fprintf(stderr, "sgemm %u^3: PoCL child...\n", n);
  char sn[32], sr[32], st[32];
  snprintf(sn, sizeof(sn), "%u", n);
  snprintf(sr, sizeof(sr), "%d", cfg->reps);
  snprintf(st, sizeof(st), "%d", threads);
  peer pocl, pocl4;
  const char *pocl_args[] = {
      "bench_kernel_language", "--sgemm-child", "opencl", sn, sr, "tiled", NULL};
  peer_run(&pocl, pocl_args, NULL);
  pocl_args[5] = "4rows";
  peer_run(&pocl4, pocl_args, NULL);

  fprintf(stderr, "sgemm %u^3: OpenBLAS child...\n", n);
  peer blas[2];
  int blas_runs = 1;
  char threads_env[64];
  snprintf(threads_env, sizeof(threads_env), "OPENBLAS_NUM_THREADS=%d", threads);
  const char *blas_args[] = {"bench_kernel_language", "--openblas-child", sn, sr, st, NULL};
  const char *blas_env[] = {threads_env, NULL};
  peer_run(&blas[0], blas_args, blas_env);
  const char *coretype = openblas_coretype_for_cpu();
  char coretype_env[64];
  snprintf(coretype_env, sizeof(coretype_env), "OPENBLAS_CORETYPE=%s", coretype);
  const char *inherited = getenv("OPENBLAS_CORETYPE");
  if (blas[0].count && (!inherited || strcmp(inherited, coretype) != 0) &&
      gflop / bench_stats_of(blas[0].samples, blas[0].count).median < 100) {
    fprintf(stderr, "sgemm %u^3: OpenBLAS child with %s...\n", n, coretype_env);
    const char *env2[] = {threads_env, coretype_env, NULL};
    peer_run(&blas[1], blas_args, env2);
    blas_runs = 2;
  }

  fprintf(stderr, "sgemm %u^3: CPU server, phased and fibers interleaved...\n", n);
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create("cpu", &client));
  float *a, *b;
  gemm_inputs(n, &a, &b);
  gemm g;
  gemm_setup(&g, client, n, a, b);
  gemm_warm_and_verify(&g, &sgemm_tiled, a, b);
  gemm_warm_and_verify(&g, &sgemm_tiled_fibers, a, b);
  gemm_warm_and_verify(&g, &sgemm_tiled_4rows, a, b);
  gemm_warm_and_verify(&g, &native_sgemm_tiled, a, b);
  gemm_warm_and_verify(&g, &native_sgemm_tiled_4rows, a, b);
  /* Variants alternate within each repetition, the order reversed every other one. */
  enum { VARIANTS = 5 };
  const cubert_kernel_def *const kernels[VARIANTS] = {&sgemm_tiled, &sgemm_tiled_fibers,
                                                      &sgemm_tiled_4rows, &native_sgemm_tiled,
                                                      &native_sgemm_tiled_4rows};
  double t[VARIANTS][MAX_REPS];
  for (int r = 0; r < cfg->reps; ++r)
    for (int i = 0; i < VARIANTS; ++i) {
      const int v = r % 2 ? VARIANTS - 1 - i : i;
      t[v][r] = gemm_time(&g, kernels[v]);
    }
  gemm_release(&g);
  cubert_client_release(client);
  free(a);
  free(b);

  const size_t reps = (size_t)cfg->reps;
  bench_stats phased = bench_stats_rate(bench_stats_of(t[0], reps), gflop);
  bench_stats fibers = bench_stats_rate(bench_stats_of(t[1], reps), gflop);
  bench_stats rows4 = bench_stats_rate(bench_stats_of(t[2], reps), gflop);
  bench_stats native = bench_stats_rate(bench_stats_of(t[3], reps), gflop);
  bench_stats native4 = bench_stats_rate(bench_stats_of(t[4], reps), gflop);
  bench_stats pocl4_s = bench_stats_rate(bench_stats_of(pocl4.samples, pocl4.count), gflop);
  bench_stats pocl_s = bench_stats_rate(bench_stats_of(pocl.samples, pocl.count), gflop);
  char what[160];
  snprintf(what, sizeof(what), "SGEMM %u\u00b3 f32, tiled 16\u00d716, CPU server, PHASED_KERNEL",
           n);
  bench_text r = ratio_text(phased.median / fibers.median);
  bench_row(what, "GFLOP/s", phased,
            "same body as CUBE_KERNEL (phased by the build where it can: issue 37)", fibers, r.s,
            "\u2264 1.5\u00d7", bench_verdict(phased.median <= 1.5 * fibers.median));
  r = pocl.count ? ratio_text(phased.median / pocl_s.median) : bench_textf("n/a");
  bench_row(what, "GFLOP/s", phased, "same kernel on \"opencl\" (PoCL)", pocl_s, r.s,
            "CPU server faster", pocl.count ? bench_verdict(phased.median > pocl_s.median) : "n/a");
  for (int i = 0; i < blas_runs; ++i) {
    bench_stats bs = bench_stats_rate(bench_stats_of(blas[i].samples, blas[i].count), gflop);
    char peer_name[192];
    snprintf(peer_name, sizeof(peer_name), "OpenBLAS cblas_sgemm, %d threads%s", threads,
             i == 1 ? bench_textf(", OPENBLAS_CORETYPE=%s", coretype).s : "");
    r = blas[i].count ? ratio_text(phased.median / bs.median) : bench_textf("n/a");
    bench_row(what, "GFLOP/s", phased, peer_name, bs, r.s, "informative", "");
  }
  snprintf(what, sizeof(what),
           "SGEMM %u\u00b3 f32, tiled 16\u00d716, CPU server, sgemm_tiled_4rows (PHASED_KERNEL, "
           "16\u00d74 units, 4 rows each)",
           n);
  r = ratio_text(rows4.median / phased.median);
  bench_row(what, "GFLOP/s", rows4, "sgemm_tiled (PHASED_KERNEL, 16\u00d716 units)", phased, r.s,
            "informative", "");
  r = pocl4.count ? ratio_text(rows4.median / pocl4_s.median) : bench_textf("n/a");
  bench_row(what, "GFLOP/s", rows4, "sgemm_tiled_4rows on \"opencl\" (PoCL)", pocl4_s, r.s,
            "CPU server faster",
            pocl4.count ? bench_verdict(rows4.median > pocl4_s.median) : "n/a");
  snprintf(what, sizeof(what),
           "SGEMM %u\u00b3 f32, tiled 16\u00d716, CPU server, PHASED_KERNEL, kernel file built "
           "with -march=native",
           n);
  r = ratio_text(native.median / phased.median);
  bench_row(what, "GFLOP/s", native, "the same, baseline ISA (cubert_add_kernels' default)", phased,
            r.s, "informative", "");
  r = pocl.count ? ratio_text(native.median / pocl_s.median) : bench_textf("n/a");
  bench_row(what, "GFLOP/s", native, "same kernel on \"opencl\" (PoCL)", pocl_s, r.s, "informative",
            "");
  snprintf(what, sizeof(what),
           "SGEMM %u\u00b3 f32, tiled 16\u00d716, CPU server, sgemm_tiled_4rows, kernel file "
           "built with -march=native",
           n);
  r = ratio_text(native4.median / rows4.median);
  bench_row(what, "GFLOP/s", native4, "the same, baseline ISA", rows4, r.s, "informative", "");
  bench_stats best_blas = bench_stats_rate(
      bench_stats_of(blas[blas_runs - 1].samples, blas[blas_runs - 1].count), gflop);
  r = blas[blas_runs - 1].count ? ratio_text(native4.median / best_blas.median)
                                : bench_textf("n/a");
  bench_row(what, "GFLOP/s", native4, "OpenBLAS (last OpenBLAS row above)", best_blas, r.s,
            "informative", "");
  bench_note(
      notes,
      "SGEMM: %d repetitions per variant after one warm-up (checked against double on "
      "512 sampled elements); the five CPU server variants alternate in this process; PoCL and "
      "OpenBLAS each run in a child process of their own.",
      cfg->reps);
  if (pocl.comment[0]) bench_note(notes, "PoCL children: %s", pocl.comment);
  for (int i = 0; i < blas_runs; ++i)
    if (blas[i].comment[0]) bench_note(notes, "OpenBLAS child %d: %s", i + 1, blas[i].comment);
  if (blas_runs == 2)
    bench_note(notes,
               "OpenBLAS with the inherited environment (OPENBLAS_CORETYPE=%s) ran below 100 "
               "GFLOP/s, so it ran again with OPENBLAS_CORETYPE=%s (chosen from /proc/cpuinfo).",
               inherited ? inherited : "(unset)", coretype);
}

static void section_softmax(const config *cfg, bench_notes *notes) {
  enum { SIZES = 6 };
  const uint32_t dims[SIZES] = {32, 64, 128, 256, 512, 1024};
  fprintf(stderr, "softmax %ux%u: CPU server, 6 cube sizes and fibers interleaved...\n", cfg->rows,
          cfg->cols);
  softmax s;
  BENCH_CHECK(cubert_client_create("cpu", &s.client));
  s.rows = cfg->rows;
  s.cols = cfg->cols;
  const size_t count = (size_t)s.rows * s.cols;
  float *x = malloc(count * sizeof(float)), *y = malloc(count * sizeof(float));
  if (!x || !y) exit(1);
  srand(11);
  for (size_t i = 0; i < count; ++i) x[i] = (float)((double)rand() / RAND_MAX * 16 - 8);
  BENCH_CHECK(cubert_client_create_buffer(s.client, x, count * sizeof(float), &s.x));
  BENCH_CHECK(cubert_client_empty(s.client, count * sizeof(float), &s.y));
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(s.client, s.rows, &sel));
  s.cubes = sel.cube_count;

  /* Variants 0..5: phased at dims[v]; 6: fibers at 256. */
  const int variants = SIZES + 1;
  double t[SIZES + 1][MAX_REPS];
  for (int v = 0; v < variants; ++v) {
    const cubert_kernel_def *k = v < SIZES ? &softmax_rows : &softmax_rows_fibers;
    const uint32_t units = v < SIZES ? dims[v] : 256;
    softmax_time(&s, k, units); /* warm-up */
    BENCH_CHECK(cubert_client_read(s.client, s.y, y, count * sizeof(float)));
    if (!softmax_verify(&s, x, y)) {
      fprintf(stderr, "%s at %u units: wrong result\n", k->name, units);
      exit(1);
    }
  }
  for (int r = 0; r < cfg->reps; ++r)
    for (int i = 0; i < variants; ++i) {
      const int v = r % 2 ? variants - 1 - i : i;
      t[v][r] = softmax_time(&s, v < SIZES ? &softmax_rows : &softmax_rows_fibers,
                             v < SIZES ? dims[v] : 256);
    }
  cubert_handle_release(s.x);
  cubert_handle_release(s.y);
  cubert_client_release(s.client);
  free(x);
  free(y);

  bench_stats st[SIZES + 1];
  int best = 0;
  for (int v = 0; v < variants; ++v) {
    st[v] = bench_stats_scale(bench_stats_of(t[v], (size_t)cfg->reps), 1e3);
    if (v < SIZES && st[v].median < st[best].median) best = v;
  }
  char peer_name[96];
  snprintf(peer_name, sizeof(peer_name), "best size (%u units)", dims[best]);
  const bench_stats none = {0, 0, 0, 0};
  for (int v = 0; v < SIZES; ++v) {
    char what[160];
    snprintf(what, sizeof(what), "softmax %u\u00d7%u f32, CPU server, PHASED_KERNEL, %u units",
             s.rows, s.cols, dims[v]);
    bench_text r = ratio_text(st[v].median / st[best].median);
    const int headline = dims[v] == 256;
    bench_row(what, "ms", st[v], headline ? peer_name : "", headline ? st[best] : none, r.s,
              headline ? "\u2264 1.5\u00d7 best" : "",
              headline ? bench_verdict(st[v].median <= 1.5 * st[best].median) : "");
  }
  char what[160];
  snprintf(what, sizeof(what),
           "softmax %u\u00d7%u f32, CPU server, CUBE_KERNEL (fibers), 256 units", s.rows, s.cols);
  bench_text r = ratio_text(st[SIZES].median / st[3].median);
  bench_row(what, "ms", st[SIZES], "PHASED_KERNEL, 256 units", st[3], r.s, "informative", "");
  bench_note(notes,
             "softmax: %d repetitions per variant after one warm-up (each checked against "
             "double on 16 sampled rows), the 7 variants interleaved, order reversed every other "
             "round; one cube per row (cube count %u\u00d7%u\u00d7%u).",
             cfg->reps, s.cubes.x, s.cubes.y, s.cubes.z);
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--quick] [--only=12] [--reps=R] [--n=N] [--rows=ROWS] [--cols=COLS]\n",
          argv0);
  return 2;
}

int main(int argc, char **argv) {
  if (argc >= 6 && strcmp(argv[1], "--sgemm-child") == 0)
    return child_sgemm(argv[2], (uint32_t)atoi(argv[3]), atoi(argv[4]), argv[5]);
  if (argc >= 5 && strcmp(argv[1], "--openblas-child") == 0)
    return child_openblas((uint32_t)atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));

  config cfg = {.n = 1024, .rows = 4096, .cols = 1024, .reps = 7};
  const char *only = "12";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      cfg.n = 512;
      cfg.rows = 2048;
      cfg.reps = 3;
    } else if (strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      cfg.reps = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--n=", 4) == 0) {
      cfg.n = (uint32_t)atoi(argv[i] + 4);
    } else if (strncmp(argv[i], "--rows=", 7) == 0) {
      cfg.rows = (uint32_t)atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--cols=", 7) == 0) {
      cfg.cols = (uint32_t)atoi(argv[i] + 7);
    } else {
      return usage(argv[0]);
    }
  }
  if (cfg.reps < 1 || cfg.reps > MAX_REPS || cfg.n < 16 || cfg.rows < 1 || cfg.cols < 1)
    return usage(argv[0]);

  cubert_client *probe = NULL;
  BENCH_CHECK(cubert_client_create("cpu", &probe));
  const cubert_device_properties *props = cubert_client_properties(probe);
  const int threads = (int)(props->hardware.num_cpu_cores ? props->hardware.num_cpu_cores : 1);
  printf("# bench_kernel_language\n\nCommand: `");
  for (int i = 0; i < argc; ++i) printf("%s%s", i ? " " : "", argv[i]);
  printf("`\n\n");
  bench_print_env(stdout);
  printf("- cubert %s, CPU server \"%s\": %d workers\n\n", CUBERT_VERSION_STRING, props->name,
         threads);
  cubert_client_release(probe);

  bench_notes notes;
  memset(&notes, 0, sizeof(notes));
  bench_compare_header(stdout);
  if (strchr(only, '1')) section_sgemm(&cfg, threads, &notes);
  if (strchr(only, '2')) section_softmax(&cfg, &notes);
  bench_notes_print(stdout, &notes);
  return 0;
}

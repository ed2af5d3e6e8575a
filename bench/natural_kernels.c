/* bench_natural_kernels — natural CUBE_KERNELs against their hand-phased twins and PoCL (issue
   37, deliverable 4), in one run, as a markdown report.

   Six barrier kernels, each written the natural way (one body per unit, SYNC_CUBE() between
   steps) and hand-phased (PHASED_KERNEL):
     sgemm      tiled 16x16 SGEMM, N x N x N (examples/sgemm.cube.c: sgemm_tiled_fibers and
                sgemm_tiled)
     reduce     cube tree reduction, one sum per cube of 256 units (bench/natural_kernels.cube.c
                and bench/natural_kernels_phased.cube.c: reduce_tree_*)
     hotspot    one step of a hotspot-like 5-point stencil, 16x16 tile plus halo (hotspot_*)
     softmax    row softmax, one cube of 256 units per row, two tree reductions
                (examples/softmax.cube.c: softmax_rows_fibers and softmax_rows)
     scan       a cube's inclusive prefix sum, Hillis-Steele, 256 units (scan_*)
     transpose  32x32 tile padded to 33, cube dim (32, 8) (transpose_*)
   Four variants of each, on the same inputs:
     natural    the natural kernel as cubert_add_kernels builds it by default (phased by the
                build's transform where CUBERT_KERNEL_PHASES is on; fibers before it lands);
     fibers     the same file built with FIBERS (the fiber form; cubert_add_kernel_forms);
     phased     the hand-phased twin;
     PoCL       the natural kernel on the "opencl" device, in a child process (PoCL's worker
                threads never run beside the CPU server's).
   The three CPU server variants alternate in this process, the order reversed every other
   repetition. Every variant is checked against a host reference before it is timed (one
   warm-up launch); statistics are medians and min–max over --reps launches + syncs, in ms.
   Targets (issue 37): natural within 1.5x of phased; the stencil's natural faster than PoCL.

   Usage: bench_natural_kernels [--quick] [--reps=R] [--only=NAMES]
     --quick   smaller sizes, 3 repetitions (a smoke test, not for the record)
     --only    comma-separated kernel names (default: all six)
   Child (internal): --pocl-child NAME REPS QUICK. */
#include "natural_kernels.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cubert/cubert.h"

#define CHILD_EXIT_UNAVAILABLE 77
#define MAX_REPS 64
#define MAX_BUFFERS 3

/* Default builds (natural: the transform's form where it runs), the fiber copies (prefix fib_,
   bench/CMakeLists.txt) and the hand-phased twins. */
extern const cubert_kernel_def sgemm_tiled_fibers, fib_sgemm_tiled_fibers, sgemm_tiled;
extern const cubert_kernel_def softmax_rows_fibers, fib_softmax_rows_fibers, softmax_rows;
extern const cubert_kernel_def reduce_tree_natural, fib_reduce_tree_natural, reduce_tree_phased;
extern const cubert_kernel_def hotspot_natural, fib_hotspot_natural, hotspot_phased;
extern const cubert_kernel_def scan_natural, fib_scan_natural, scan_phased;
extern const cubert_kernel_def transpose_natural, fib_transpose_natural, transpose_phased;

enum { NATURAL, FIBERS, PHASED, CPU_VARIANTS };

/* One kernel of the set at one size: float buffers (the inputs first, the output last). */
typedef struct kcase {
  const char *name;
  char what[96];
  const cubert_kernel_def *defs[CPU_VARIANTS];
  uint32_t buffers;
  uint64_t elems[MAX_BUFFERS];
  uint64_t info[3];
  uint32_t info_count;
  cubert_cube_count count;
  cubert_cube_dim dim;
  /* 1 when host[buffers - 1] is the right output for the inputs host[0 ..). */
  int (*verify)(const struct kcase *k, float *const *host);
} kcase;

static double urand(void) {
  return (double)rand() / RAND_MAX * 2 - 1;
}

/* ---- host references ------------------------------------------------------------------------ */

static int report_miss(const char *name, uint64_t at, double got, double want) {
  fprintf(stderr, "%s: output[%llu] = %.9g, expected %.9g\n", name, (unsigned long long)at, got,
          want);
  return 0;
}

/* 512 sampled elements of C = A * B within the float dot-product bound N * eps * sum |a * b|. */
static int verify_sgemm(const kcase *k, float *const *host) {
  const uint64_t n = k->info[0];
  for (uint64_t s = 0; s < 512; ++s) {
    const uint64_t i = s * 7919 % n, j = (s * 104729 + 13) % n;
    double ref = 0, scale = 0;
    for (uint64_t p = 0; p < n; ++p) {
      const double x = (double)host[0][i * n + p] * host[1][p * n + j];
      ref += x;
      scale += fabs(x);
    }
    if (!(fabs(host[2][i * n + j] - ref) <= n * (double)FLT_EPSILON * scale))
      return report_miss(k->name, i * n + j, host[2][i * n + j], ref);
  }
  return 1;
}

/* Each cube's sum (reduce) or each element's cube-local prefix sum (scan), within
   units * eps * the sum of the magnitudes. */
static int verify_cube_sums(const kcase *k, float *const *host, int prefix) {
  const uint64_t n = k->info[0], units = k->dim.x;
  for (uint64_t c = 0; c * units < n; ++c) {
    double sum = 0, scale = 0;
    for (uint64_t i = c * units; i < n && i < (c + 1) * units; ++i) {
      sum += host[0][i];
      scale += fabs(host[0][i]);
      const uint64_t at = prefix ? i : c;
      const int last = i + 1 == n || i + 1 == (c + 1) * units;
      if ((prefix || last) && !(fabs(host[1][at] - sum) <= units * (double)FLT_EPSILON * scale))
        return report_miss(k->name, at, host[1][at], sum);
    }
  }
  return 1;
}

static int verify_reduce(const kcase *k, float *const *host) {
  return verify_cube_sums(k, host, 0);
}

static int verify_scan(const kcase *k, float *const *host) {
  return verify_cube_sums(k, host, 1);
}

/* Every cell, from the same float expression (edges clamped), within 1e-5 relative. */
static int verify_hotspot(const kcase *k, float *const *host) {
  const int64_t nx = (int64_t)k->info[0], ny = (int64_t)k->info[1];
  const float *t = host[0], *p = host[1], *out = host[2];
#define HS_AT(x, y) t[(y)*nx + (x)]
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      const float c = HS_AT(x, y);
      const float ns = HS_AT(x, y > 0 ? y - 1 : 0) + HS_AT(x, y + 1 < ny ? y + 1 : y) - 2.0f * c;
      const float ew = HS_AT(x > 0 ? x - 1 : 0, y) + HS_AT(x + 1 < nx ? x + 1 : x, y) - 2.0f * c;
      const float ref = c + HOTSPOT_STEP * (p[y * nx + x] + ns * HOTSPOT_RY + ew * HOTSPOT_RX +
                                            (HOTSPOT_AMBIENT - c) * HOTSPOT_RZ);
      if (!(fabsf(out[y * nx + x] - ref) <= 1e-5f * (fabsf(ref) + 1.0f)))
        return report_miss(k->name, (uint64_t)(y * nx + x), out[y * nx + x], ref);
    }
#undef HS_AT
  return 1;
}

/* 16 sampled rows against double, within (cols / 2 + 16) * eps relative. */
static int verify_softmax(const kcase *k, float *const *host) {
  const uint64_t rows = k->info[0], cols = k->info[1];
  for (uint64_t s = 0; s < 16; ++s) {
    const uint64_t r = s * 2654435761u % rows;
    const float *x = host[0] + r * cols, *y = host[1] + r * cols;
    double mx = x[0], sum = 0;
    for (uint64_t j = 1; j < cols; ++j) mx = fmax(mx, x[j]);
    for (uint64_t j = 0; j < cols; ++j) sum += exp(x[j] - mx);
    for (uint64_t j = 0; j < cols; ++j) {
      const double ref = exp(x[j] - mx) / sum;
      if (!(fabs(y[j] - ref) <= (cols / 2.0 + 16) * FLT_EPSILON * ref))
        return report_miss(k->name, r * cols + j, y[j], ref);
    }
  }
  return 1;
}

/* Exact. */
static int verify_transpose(const kcase *k, float *const *host) {
  const uint64_t rows = k->info[0], cols = k->info[1];
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c)
      if (host[1][c * rows + r] != host[0][r * cols + c])
        return report_miss(k->name, c * rows + r, host[1][c * rows + r], host[0][r * cols + c]);
  return 1;
}

/* ---- the set -------------------------------------------------------------------------------- */

#define KERNEL_NAMES "sgemm,reduce,hotspot,softmax,scan,transpose"

static void set_defs(kcase *k, const cubert_kernel_def *natural, const cubert_kernel_def *fibers,
                     const cubert_kernel_def *phased) {
  k->defs[NATURAL] = natural;
  k->defs[FIBERS] = fibers;
  k->defs[PHASED] = phased;
}

/* 1-D kernels of one element per unit, 256 units per cube: a sum per cube (reduce) or a
   prefix sum per element (scan). */
static void make_per_unit(kcase *k, uint64_t n, int scan) {
  k->buffers = 2;
  k->elems[0] = n;
  k->elems[1] = scan ? n : (n + 255) / 256;
  k->info[0] = n;
  k->info_count = 1;
  k->count = cubert_cube_count_new_3d((uint32_t)((n + 255) / 256), 1, 1);
  k->dim = cubert_cube_dim_new_3d(256, 1, 1);
  k->verify = scan ? verify_scan : verify_reduce;
  snprintf(k->what, sizeof(k->what), "%s %llu f32, 256 units", scan ? "cube scan" : "cube reduce",
           (unsigned long long)n);
}

/* The case `name` at the full or the quick size; 0 for an unknown name. */
static int case_make(const char *name, int quick, kcase *k) {
  memset(k, 0, sizeof(*k));
  k->name = name;
  const uint64_t s = quick ? 2 : 1; /* the quick mode divides the sizes by about s * s */
  if (strcmp(name, "sgemm") == 0) {
    const uint64_t n = 512 / s;
    set_defs(k, &sgemm_tiled_fibers, &fib_sgemm_tiled_fibers, &sgemm_tiled);
    k->buffers = 3;
    k->elems[0] = k->elems[1] = k->elems[2] = n * n;
    k->info[0] = k->info[1] = k->info[2] = n;
    k->info_count = 3;
    k->count = cubert_cube_count_new_3d((uint32_t)(n / 16), (uint32_t)(n / 16), 1);
    k->dim = cubert_cube_dim_new_3d(16, 16, 1);
    k->verify = verify_sgemm;
    snprintf(k->what, sizeof(k->what), "SGEMM %llu\u00b3, tiles 16\u00d716", (unsigned long long)n);
  } else if (strcmp(name, "reduce") == 0 || strcmp(name, "scan") == 0) {
    const int scan = strcmp(name, "scan") == 0;
    if (scan)
      set_defs(k, &scan_natural, &fib_scan_natural, &scan_phased);
    else
      set_defs(k, &reduce_tree_natural, &fib_reduce_tree_natural, &reduce_tree_phased);
    make_per_unit(k, ((uint64_t)1 << 20) / (s * s), scan);
  } else if (strcmp(name, "hotspot") == 0 || strcmp(name, "transpose") == 0) {
    const int hotspot = strcmp(name, "hotspot") == 0;
    const uint64_t n = (hotspot ? 1024 : 2048) / s;
    if (hotspot)
      set_defs(k, &hotspot_natural, &fib_hotspot_natural, &hotspot_phased);
    else
      set_defs(k, &transpose_natural, &fib_transpose_natural, &transpose_phased);
    k->buffers = hotspot ? 3 : 2;
    for (uint32_t b = 0; b < k->buffers; ++b) k->elems[b] = n * n;
    k->info[0] = k->info[1] = n;
    k->info_count = 2;
    const uint32_t tiles = (uint32_t)(n / (hotspot ? HOTSPOT_TILE : TRANSPOSE_TILE));
    k->count = cubert_cube_count_new_3d(tiles, tiles, 1);
    k->dim = hotspot ? cubert_cube_dim_new_3d(16, 16, 1) : cubert_cube_dim_new_3d(32, 8, 1);
    k->verify = hotspot ? verify_hotspot : verify_transpose;
    snprintf(k->what, sizeof(k->what), "%s %llu\u00b2 f32", hotspot ? "hotspot step" : "transpose",
             (unsigned long long)n);
  } else if (strcmp(name, "softmax") == 0) {
    const uint64_t rows = 1024 / (s * s), cols = 1024;
    set_defs(k, &softmax_rows_fibers, &fib_softmax_rows_fibers, &softmax_rows);
    k->buffers = 2;
    k->elems[0] = k->elems[1] = rows * cols;
    k->info[0] = rows;
    k->info[1] = cols;
    k->info_count = 2;
    k->count = cubert_cube_count_new_3d((uint32_t)rows, 1, 1);
    k->dim = cubert_cube_dim_new_3d(256, 1, 1);
    k->verify = verify_softmax;
    snprintf(k->what, sizeof(k->what), "softmax %llu\u00d7%llu, 256 units",
             (unsigned long long)rows, (unsigned long long)cols);
  } else {
    return 0;
  }
  return 1;
}

/* ---- running a case ---------------------------------------------------------------------------
 */

/* A case's buffers on one client and on the host (same inputs in every process: fixed seed). */
typedef struct run {
  const kcase *k;
  cubert_client *client;
  cubert_handle *bufs[MAX_BUFFERS];
  float *host[MAX_BUFFERS];
} run;

static void run_setup(run *r, const kcase *k, cubert_client *client) {
  memset(r, 0, sizeof(*r));
  r->k = k;
  r->client = client;
  srand(37);
  for (uint32_t b = 0; b < k->buffers; ++b) {
    r->host[b] = calloc(k->elems[b], sizeof(float));
    if (!r->host[b]) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    if (b + 1 < k->buffers)
      for (uint64_t i = 0; i < k->elems[b]; ++i) r->host[b][i] = (float)urand();
    BENCH_CHECK(
        cubert_client_create_buffer(client, r->host[b], k->elems[b] * sizeof(float), &r->bufs[b]));
  }
}

static void run_release(run *r) {
  for (uint32_t b = 0; b < r->k->buffers; ++b) {
    cubert_handle_release(r->bufs[b]);
    free(r->host[b]);
  }
}

/* One launch + sync of `def`; seconds. */
static double run_time(run *r, const cubert_kernel_def *def) {
  const cubert_kernel_args args = {r->bufs, r->k->buffers, r->k->info, r->k->info_count};
  const uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_launch(r->client, def, r->k->count, r->k->dim, &args));
  BENCH_CHECK(cubert_client_sync(r->client));
  return bench_seconds_since(t0);
}

/* The warm-up: clears the output, runs `def` once and checks the output; exits on a miss. */
static void run_warm_and_verify(run *r, const cubert_kernel_def *def) {
  const uint32_t out = r->k->buffers - 1;
  const size_t bytes = r->k->elems[out] * sizeof(float);
  memset(r->host[out], 0, bytes);
  BENCH_CHECK(cubert_client_write(r->client, r->bufs[out], 0, r->host[out], bytes));
  run_time(r, def);
  BENCH_CHECK(cubert_client_read(r->client, r->bufs[out], r->host[out], bytes));
  if (!r->k->verify(r->k, r->host)) {
    fprintf(stderr, "%s (%s): wrong result\n", def->name, r->k->name);
    exit(1);
  }
}

/* --pocl-child NAME REPS QUICK: the natural kernel on "opencl"; prints "# <device>" and the
   seconds of each repetition. */
static int child_pocl(const char *name, int reps, int quick) {
  kcase k;
  if (!case_make(name, quick, &k) || reps < 1 || reps > MAX_REPS) return 2;
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create("opencl", &client);
  if (s) {
    printf("# no device \"opencl\": %s\n", cubert_status_message(s));
    cubert_status_free(s);
    return CHILD_EXIT_UNAVAILABLE;
  }
  run r;
  run_setup(&r, &k, client);
  run_warm_and_verify(&r, k.defs[NATURAL]);
  double samples[MAX_REPS];
  for (int i = 0; i < reps; ++i) samples[i] = run_time(&r, k.defs[NATURAL]);
  const cubert_device_properties *p = cubert_client_properties(client);
  printf("# %s (%s backend, %u compute units)\n", p->name, p->backend,
         p->hardware.num_compute_units);
  bench_emit_samples(stdout, samples, (size_t)reps);
  run_release(&r);
  cubert_client_release(client);
  return 0;
}

/* ---- report -----------------------------------------------------------------------------------
 */

typedef struct config {
  int quick, reps;
  const char *only;
} config;

/* The times of one case, in ms: the three CPU server variants and PoCL (count 0: none). */
typedef struct timings {
  bench_stats cpu[CPU_VARIANTS], pocl;
  char pocl_device[256];
} timings;

static void measure_pocl(const kcase *k, const config *cfg, timings *t) {
  char reps[16], quick[4];
  snprintf(reps, sizeof(reps), "%d", cfg->reps);
  snprintf(quick, sizeof(quick), "%d", cfg->quick);
  const char *args[] = {"bench_natural_kernels", "--pocl-child", k->name, reps, quick, NULL};
  double samples[MAX_REPS];
  size_t count = 0;
  fprintf(stderr, "%s: PoCL child...\n", k->name);
  const int status =
      bench_run_self(args, NULL, samples, MAX_REPS, &count, t->pocl_device, sizeof(t->pocl_device));
  if (status != 0) {
    if (status != CHILD_EXIT_UNAVAILABLE)
      fprintf(stderr, "bench_natural_kernels: PoCL child for %s exited with %d\n", k->name, status);
    count = 0;
  }
  t->pocl = bench_stats_scaled(samples, count, 1e3);
}

static void measure_cpu(const kcase *k, const config *cfg, timings *t) {
  fprintf(stderr, "%s: CPU server, natural, fibers and phased interleaved...\n", k->name);
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create("cpu", &client));
  run r;
  run_setup(&r, k, client);
  for (int v = 0; v < CPU_VARIANTS; ++v) run_warm_and_verify(&r, k->defs[v]);
  double samples[CPU_VARIANTS][MAX_REPS];
  for (int i = 0; i < cfg->reps; ++i)
    for (int j = 0; j < CPU_VARIANTS; ++j) {
      const int v = i % 2 ? CPU_VARIANTS - 1 - j : j;
      samples[v][i] = run_time(&r, k->defs[v]);
    }
  for (int v = 0; v < CPU_VARIANTS; ++v)
    t->cpu[v] = bench_stats_scaled(samples[v], (size_t)cfg->reps, 1e3);
  run_release(&r);
  cubert_client_release(client);
}

static bench_text ms_cell(bench_stats s) {
  if (s.count == 0) return bench_textf("n/a");
  return bench_textf("%s (%s)", bench_fmt(s.median).s, bench_fmt_range(s).s);
}

static bench_text ratio_cell(bench_stats a, bench_stats b) {
  if (a.count == 0 || b.count == 0) return bench_textf("n/a");
  return bench_textf("%.2f\u00d7", a.median / b.median);
}

#define REPORT_COLUMNS 9

static void report_row(const kcase *k, const timings *t) {
  bench_text nat = ms_cell(t->cpu[NATURAL]), fib = ms_cell(t->cpu[FIBERS]),
             ph = ms_cell(t->cpu[PHASED]), pocl = ms_cell(t->pocl);
  bench_text np = ratio_cell(t->cpu[NATURAL], t->cpu[PHASED]),
             fp = ratio_cell(t->cpu[FIBERS], t->cpu[PHASED]),
             npocl = ratio_cell(t->cpu[NATURAL], t->pocl);
  const int within = t->cpu[NATURAL].median <= 1.5 * t->cpu[PHASED].median;
  const int stencil = strcmp(k->name, "hotspot") == 0;
  bench_text verdict = bench_textf(
      "%s%s%s", bench_verdict(within), stencil ? "; < PoCL: " : "",
      stencil ? (t->pocl.count ? bench_verdict(t->cpu[NATURAL].median < t->pocl.median) : "n/a")
              : "");
  const char *cells[REPORT_COLUMNS] = {k->what, nat.s, fib.s,   ph.s,     pocl.s,
                                       np.s,    fp.s,  npocl.s, verdict.s};
  bench_table_row(stdout, cells, REPORT_COLUMNS);
}

static int usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--quick] [--reps=R] [--only=%s]\n", argv0, KERNEL_NAMES);
  return 2;
}

static int parse_args(int argc, char **argv, config *cfg) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      cfg->quick = 1;
      cfg->reps = 3;
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      cfg->reps = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--only=", 7) == 0) {
      cfg->only = argv[i] + 7;
    } else {
      return 0;
    }
  }
  return cfg->reps >= 1 && cfg->reps <= MAX_REPS;
}

/* How many of the six natural kernels the build's transform phased. */
static int phased_naturals(void) {
  const cubert_kernel_def *const naturals[] = {&sgemm_tiled_fibers, &reduce_tree_natural,
                                               &hotspot_natural,    &softmax_rows_fibers,
                                               &scan_natural,       &transpose_natural};
  int count = 0;
  for (size_t i = 0; i < sizeof(naturals) / sizeof(naturals[0]); ++i)
    count += (naturals[i]->flags & CUBERT_KERNEL_PHASED) != 0;
  return count;
}

static void print_header(int argc, char **argv) {
  printf("# bench_natural_kernels\n\nCommand: `");
  for (int i = 0; i < argc; ++i) printf("%s%s", i ? " " : "", argv[i]);
  printf("`\n\n");
  bench_print_env(stdout);
  printf(
      "- natural kernels built phased (CUBERT_KERNEL_PHASED on the default build's "
      "definition): %d of 6; the others are the fiber form, the same code as the FIBERS "
      "copy\n\n",
      phased_naturals());
  const char *const titles[REPORT_COLUMNS] = {"Kernel",
                                              "natural ms (min\u2013max)",
                                              "fibers ms",
                                              "hand-phased ms",
                                              "PoCL natural ms",
                                              "natural / phased",
                                              "fibers / phased",
                                              "natural / PoCL",
                                              "natural \u2264 1.5\u00d7 phased"};
  bench_table_header(stdout, titles, REPORT_COLUMNS);
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "--pocl-child") == 0)
    return child_pocl(argv[2], atoi(argv[3]), atoi(argv[4]));
  config cfg = {.quick = 0, .reps = 7, .only = KERNEL_NAMES};
  if (!parse_args(argc, argv, &cfg)) return usage(argv[0]);
  static const char *const names[] = {"sgemm", "reduce", "hotspot", "softmax", "scan", "transpose"};
  print_header(argc, argv);
  bench_notes notes;
  memset(&notes, 0, sizeof(notes));
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    if (!strstr(cfg.only, names[i])) continue;
    kcase k;
    case_make(names[i], cfg.quick, &k);
    timings t;
    memset(&t, 0, sizeof(t));
    measure_pocl(&k, &cfg, &t);
    measure_cpu(&k, &cfg, &t);
    report_row(&k, &t);
    if (t.pocl_device[0] && notes.count == 0) bench_note(&notes, "PoCL: %s", t.pocl_device);
  }
  bench_note(&notes,
             "%d launches + syncs per variant after one checked warm-up; the CPU server's three "
             "variants alternate in this process, PoCL runs in a child process per kernel.",
             cfg.reps);
  bench_notes_print(stdout, &notes);
  return 0;
}

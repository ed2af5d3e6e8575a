/* bench/tune_cold.c — what tuning costs a user's first run (issue 24 item 2, "Tuning in
   seconds").

   Each run is a fresh process with a fresh, empty CUBERT_CACHE_DIR (and, unless
   BENCH_KEEP_POCL_CACHE=1, a fresh POCL_CACHE_DIR: PoCL's own kernel cache would otherwise hide
   the compile costs): it creates the client and runs the operations of examples/mlp.c (61 x 784
   -> 128 -> 10 by default), timing each operation's first call up to a sync (host clock, ms);
   "total" is client creation through the last read, what the user waits for. After the first
   calls, the same process times each tuned operation warm (median of 7) and, for the tuned ops
   with a force hook (matmul, softmax, argmax reduce), every candidate forced, so that
   tuned / best forced says whether the quick tuning chose well (1.00 = the best candidate).
   Under background tuning (the default on OpenCL) the warm figures are taken after
   cubert_tune_wait, whose wait after the last read is reported too;
   CUBERT_AUTOTUNE_BACKGROUND=off measures every key in its first call instead.

   BENCH_BUNDLE=FILE imports the cache bundle FILE (cubert-info --export-caches) into each
   run's empty cache folder first, in a process of its own, as a deployment would before the
   first run: the figures are then those of a first run on a machine that got the bundle. With
   a bundle holding program binaries, set CUBERT_OPENCL_BINARY_CACHE=on so that PoCL uses them.

   Output: a markdown table, median (min–max) over the runs.

   Usage: bench_tune_cold [selector] [runs] [BATCH IN HIDDEN OUT]   (default: opencl 3) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "cubert/cache_bundle.h"
#include "cubert/cubert.h"
#include "cubert/ops.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/softmax.h"

enum { OPS = 8, COLS = OPS + 2, WARM_REPS = 7, FORCED = 3 };
static const char *const op_names[OPS] = {"matmul x·W1", "add b1",  "relu",   "matmul h·W2",
                                          "add b2",      "softmax", "argmax", "read (copy)"};
/* Per run: first-call ms per op, client creation ms, total ms; then warm tuned ms and best
   forced ms for matmul 1, matmul 2, softmax, argmax; then tuning counters. */
typedef struct run_result {
  double first_ms[COLS];
  double tuned_ms[4], forced_ms[4];
  double measured, samples, eliminated;
  double wait_ms; /* cubert_tune_wait after the last read: background tuning still running */
  int ok;
} run_result;

static uint64_t dims[4] = {61, 784, 128, 10};

static cubert_tensor make(cubert_client *client, uint32_t rank, uint64_t d0, uint64_t d1,
                          cubert_dtype dtype, int fill) {
  cubert_layout_desc desc = {.rank = rank, .shape = {d0, d1}, .dtype = dtype};
  cubert_tensor t;
  if (fill) {
    size_t n = (size_t)d0 * (rank > 1 ? d1 : 1);
    float *v = malloc(n * sizeof(float));
    if (!v) exit(1);
    for (size_t i = 0; i < n; ++i) v[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    BENCH_CHECK(cubert_client_create_tensor(client, v, &desc, &t));
    free(v);
  } else {
    BENCH_CHECK(cubert_client_empty_tensor(client, &desc, &t));
  }
  return t;
}

typedef struct mlp {
  cubert_client *client;
  cubert_tensor x, w1, b1, w2, b2, h, z, label;
  float *prob;
} mlp;

static cubert_status op(mlp *m, int i) {
  switch (i) {
    case 0:
      return cubert_op_matmul(m->client, 1.0, &m->x, &m->w1, 0.0, &m->h);
    case 1:
      return cubert_op_binary(m->client, CUBERT_BINARY_ADD, &m->h, &m->b1, &m->h);
    case 2:
      return cubert_op_unary(m->client, CUBERT_UNARY_RELU, &m->h, &m->h);
    case 3:
      return cubert_op_matmul(m->client, 1.0, &m->h, &m->w2, 0.0, &m->z);
    case 4:
      return cubert_op_binary(m->client, CUBERT_BINARY_ADD, &m->z, &m->b2, &m->z);
    case 5:
      return cubert_op_softmax(m->client, &m->z, &m->z);
    case 6:
      return cubert_op_reduce(m->client, CUBERT_REDUCE_ARGMAX, &m->z, 1, 0, &m->label);
    default:
      return cubert_client_read_tensor(m->client, &m->z, m->prob,
                                       dims[0] * dims[3] * sizeof(float));
  }
}

/* ms of one call of op i up to its sync. */
static double timed(mlp *m, int i) {
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(op(m, i));
  BENCH_CHECK(cubert_client_sync(m->client));
  return (double)(bench_now_ns() - t0) / 1e6;
}

static double warm(mlp *m, int i) {
  double t[WARM_REPS];
  for (int r = 0; r < WARM_REPS; ++r) t[r] = timed(m, i);
  return bench_stats_of(t, WARM_REPS).median;
}

/* The median of op i forced to each candidate in turn (via force(k)), the best of them; the
   softmax runs in place, which is idempotent only per call, so it is timed on z as the MLP does
   (each call normalises the previous result again: same cost). */
static double best_forced(mlp *m, int i, void (*force)(int), int count) {
  double best = 0;
  for (int k = 0; k < count; ++k) {
    force(k);
    double t[WARM_REPS];
    int ok = 1;
    for (int r = 0; r < WARM_REPS && ok; ++r) {
      uint64_t t0 = bench_now_ns();
      cubert_status s = op(m, i);
      if (!s) s = cubert_client_sync(m->client);
      if (s) {
        cubert_status_free(s);
        ok = 0;
        break;
      }
      t[r] = (double)(bench_now_ns() - t0) / 1e6;
    }
    force(-1);
    if (!ok) continue;
    double med = bench_stats_of(t, WARM_REPS).median;
    if (best == 0 || med < best) best = med;
  }
  return best;
}

static void child(const char *selector, int fd) {
  run_result r = {0};
  mlp m = {0};
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_create(selector, &m.client));
  r.first_ms[OPS] = (double)(bench_now_ns() - t0) / 1e6;
  m.x = make(m.client, 2, dims[0], dims[1], CUBERT_DTYPE_F32, 1);
  m.w1 = make(m.client, 2, dims[1], dims[2], CUBERT_DTYPE_F32, 1);
  m.b1 = make(m.client, 1, dims[2], 0, CUBERT_DTYPE_F32, 1);
  m.w2 = make(m.client, 2, dims[2], dims[3], CUBERT_DTYPE_F32, 1);
  m.b2 = make(m.client, 1, dims[3], 0, CUBERT_DTYPE_F32, 1);
  m.h = make(m.client, 2, dims[0], dims[2], CUBERT_DTYPE_F32, 0);
  m.z = make(m.client, 2, dims[0], dims[3], CUBERT_DTYPE_F32, 0);
  m.label = make(m.client, 1, dims[0], 0, CUBERT_DTYPE_I32, 0);
  m.prob = malloc(dims[0] * dims[3] * sizeof(float));
  if (!m.prob) _exit(1);
  for (int i = 0; i < OPS; ++i) r.first_ms[i] = timed(&m, i);
  r.first_ms[OPS + 1] = (double)(bench_now_ns() - t0) / 1e6;
  /* The steady state is that of the tuned winners: wait for the background measurements. */
  uint64_t w0 = bench_now_ns();
  BENCH_CHECK(cubert_tune_wait(m.client));
  r.wait_ms = (double)(bench_now_ns() - w0) / 1e6;
  cubert_tune_stats st = {0};
  BENCH_CHECK(cubert_tune_stats_get(m.client, &st));
  r.measured = (double)st.candidates_measured;
  r.samples = (double)st.samples;
  r.eliminated = (double)st.candidates_eliminated;
  const int mm_count = (int)cubert_ops_matmul_tune_set()->candidate_count;
  r.forced_ms[0] = best_forced(&m, 0, cubert_ops_matmul_force_candidate, mm_count);
  r.forced_ms[1] = best_forced(&m, 3, cubert_ops_matmul_force_candidate, mm_count);
  r.forced_ms[2] = best_forced(&m, 5, cubert_ops_softmax_force_candidate,
                               (int)cubert_ops_softmax_tune_set()->candidate_count);
  r.forced_ms[3] = best_forced(&m, 6, cubert_ops_reduce_force_candidate,
                               (int)cubert_ops_reduce_tune_set()->candidate_count);
  /* The tuned calls last, after every forced candidate ran: the device and caches are as warm
     for them as for the last forced ones (timed first, they came out up to 2x slower). */
  static const int tuned_ops[4] = {0, 3, 5, 6};
  for (int j = 0; j < 4; ++j) r.tuned_ms[j] = warm(&m, tuned_ops[j]);
  r.ok = 1;
  if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
  _exit(0);
}

/* Imports `bundle` into the cache folder `dir` in a child process (this process must not
   initialise a driver before it forks the measured runs). 0 on success. */
static int import_bundle(const char *dir, const char *bundle) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CUBERT_CACHE_DIR", dir, 1);
    cubert_cache_bundle_counts c;
    cubert_status s = cubert_cache_bundle_import(bundle, &c);
    if (s) fprintf(stderr, "import of %s failed: %s\n", bundle, cubert_status_message(s));
    _exit(s || c.tune_files + c.program_files == 0 ? 1 : 0);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0
             ? 0
             : 1;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "opencl";
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (runs < 1 || runs > 64) runs = 3;
  for (int i = 0; i < 4 && argc > 6; ++i) dims[i] = strtoull(argv[3 + i], NULL, 10);
  const char *tmp = getenv("TMPDIR");
  run_result *all = calloc((size_t)runs, sizeof *all);
  if (!all) return 1;
  for (int r = 0; r < runs; ++r) {
    char dir[512], pocl[600];
    snprintf(dir, sizeof dir, "%s/cubert-tune-cold-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return 1;
    snprintf(pocl, sizeof pocl, "%s/pocl", dir);
    const char *bundle = getenv("BENCH_BUNDLE");
    if (bundle && *bundle && import_bundle(dir, bundle)) return 1;
    int fds[2];
    if (pipe(fds)) return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      setenv("CUBERT_CACHE_DIR", dir, 1);
      const char *keep = getenv("BENCH_KEEP_POCL_CACHE");
      if (!keep || strcmp(keep, "1") != 0) setenv("POCL_CACHE_DIR", pocl, 1);
      child(selector, fds[1]);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], &all[r], sizeof all[r]);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof all[r] || !all[r].ok) {
      fprintf(stderr, "run %d failed (status %d)\n", r, status);
      return 1;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  }
  const char *bundle = getenv("BENCH_BUNDLE");
  printf("bench_tune_cold %s, %d cold runs%s%s, mlp %llu x %llu -> %llu -> %llu; %s\n\n", selector,
         runs, bundle && *bundle ? " after importing " : "", bundle && *bundle ? bundle : "",
         (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2],
         (unsigned long long)dims[3], bench_load_avg().s);
  printf("| Step | Cold first call, ms: median (min–max) |\n|---|---|\n");
  double v[64];
  for (int c = 0; c < COLS; ++c) {
    for (int r = 0; r < runs; ++r) v[r] = all[r].first_ms[c];
    bench_stats s = bench_stats_of(v, (size_t)runs);
    printf("| %s | %.1f (%.1f–%.1f) |\n",
           c < OPS    ? op_names[c]
           : c == OPS ? "client create"
                      : "**total (create → last read)**",
           s.median, s.min, s.max);
  }
  static const char *const tuned_names[4] = {"matmul x·W1", "matmul h·W2", "softmax", "argmax"};
  printf("\n| Tuned op | Tuned, ms | Best forced, ms | Tuned / best forced |\n|---|---|---|---|\n");
  for (int j = 0; j < 4; ++j) {
    double t[64], f[64], q[64];
    for (int r = 0; r < runs; ++r) {
      t[r] = all[r].tuned_ms[j];
      f[r] = all[r].forced_ms[j];
      q[r] = f[r] > 0 ? t[r] / f[r] : 0;
    }
    bench_stats ts = bench_stats_of(t, (size_t)runs), fs = bench_stats_of(f, (size_t)runs),
                qs = bench_stats_of(q, (size_t)runs);
    printf("| %s | %.3f (%.3f–%.3f) | %.3f (%.3f–%.3f) | %.2f (%.2f–%.2f) |\n", tuned_names[j],
           ts.median, ts.min, ts.max, fs.median, fs.min, fs.max, qs.median, qs.min, qs.max);
  }
  for (int r = 0; r < runs; ++r) v[r] = all[r].measured;
  bench_stats m = bench_stats_of(v, (size_t)runs);
  for (int r = 0; r < runs; ++r) v[r] = all[r].samples;
  bench_stats s = bench_stats_of(v, (size_t)runs);
  for (int r = 0; r < runs; ++r) v[r] = all[r].eliminated;
  bench_stats e = bench_stats_of(v, (size_t)runs);
  for (int r = 0; r < runs; ++r) v[r] = all[r].wait_ms;
  bench_stats w = bench_stats_of(v, (size_t)runs);
  printf(
      "\nCandidates warmed up %.0f, timed samples %.0f, eliminated early %.0f (medians); "
      "background tuning ended %.0f ms (%.0f–%.0f) after the last read\n",
      m.median, s.median, e.median, w.median, w.min, w.max);
  free(all);
  return 0;
}

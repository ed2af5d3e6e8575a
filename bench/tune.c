/* bench/tune.c — the cost of autotune (lib/tune).

   1. Overhead of cubert_tune_execute() with a cached key over calling the winner directly:
      (a) with a candidate that does nothing (the pure dispatch cost), (b) with a candidate
      that launches the noop kernel (what a user sees), both without syncing per call.
   2. First call of a new key in a fresh process: with a cold disk cache every candidate is
      measured; with the cache the first process left, none (the count is printed).
   3. The full reduction of 1M, 16M and 64M floats, cubert_op_reduce(SUM, CUBERT_AXIS_ALL),
      which chooses its geometry through autotune (kernels/ops/reduce.c): the tuned call
      against every fixed candidate of its set (forced one by one) and today's hand-picked
      geometry (reduce_sum_f32 at 65536 per cube x 16 units on the CPU server, 4096 x 256
      elsewhere, as examples/quickstart.c picks it, plus one cube over the partial sums).

   Usage: bench_tune [selector] [--no-reduce]   (default selector: cpu) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "bench_util.h"
#include "cubert/cubert.h"
#include "cubert/ops.h"
#include "cubert/server.h"
#include "ops/reduce.h"

enum { REPS = 15, CALLS = 20000 };

static cubert_status do_nothing(cubert_client *client, const void *args) {
  (void)client, (void)args;
  return NULL;
}

static cubert_status launch_noop(cubert_client *client, const void *args) {
  (void)args;
  cubert_kernel_args kargs = {0};
  return cubert_client_launch(client, &cubert_kernel_noop, cubert_cube_count_new_3d(1, 1, 1),
                              cubert_cube_dim_new_3d(1, 1, 1), &kargs);
}

static const cubert_tune_candidate nothing_candidates[] = {{"nothing", do_nothing, NULL, 0},
                                                           {"nothing2", do_nothing, NULL, 0}};
static const cubert_tune_set nothing_set = {"bench.nothing", nothing_candidates, 2, 0, NULL};
static const cubert_tune_candidate noop_candidates[] = {{"noop", launch_noop, NULL, 0},
                                                        {"noop2", launch_noop, NULL, 0}};
static const cubert_tune_set noop_set = {"bench.noop", noop_candidates, 2, 0, NULL};

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ns per call of `calls` calls, REPS times interleaved: direct then execute; median, min, max
   of each and the median of the per-rep differences. */
static void overhead(cubert_client *client, const cubert_tune_set *set, cubert_tune_launch_fn fn,
                     const char *what, int judge) {
  cubert_tune_key key = {0};
  BENCH_CHECK(cubert_tune_key_add_anchored(&key, 1000));
  BENCH_CHECK(cubert_tune_execute(client, set, &key, NULL)); /* tunes */
  BENCH_CHECK(cubert_client_sync(client));
  double direct[REPS], tuned[REPS], diff[REPS];
  for (int r = 0; r < REPS; ++r) {
    uint64_t t0 = cubert_now_ns();
    for (int i = 0; i < CALLS; ++i) BENCH_CHECK(fn(client, NULL));
    BENCH_CHECK(cubert_client_sync(client));
    uint64_t t1 = cubert_now_ns();
    for (int i = 0; i < CALLS; ++i) BENCH_CHECK(cubert_tune_execute(client, set, &key, NULL));
    BENCH_CHECK(cubert_client_sync(client));
    uint64_t t2 = cubert_now_ns();
    direct[r] = (double)(t1 - t0) / CALLS;
    tuned[r] = (double)(t2 - t1) / CALLS;
    diff[r] = tuned[r] - direct[r];
  }
  qsort(direct, REPS, sizeof(double), compare_double);
  qsort(tuned, REPS, sizeof(double), compare_double);
  qsort(diff, REPS, sizeof(double), compare_double);
  printf("| %-22s | %8.1f (%.1f–%.1f) | %8.1f (%.1f–%.1f) | %6.1f (%.1f–%.1f) | %s |\n", what,
         direct[REPS / 2], direct[0], direct[REPS - 1], tuned[REPS / 2], tuned[0], tuned[REPS - 1],
         diff[REPS / 2], diff[0], diff[REPS - 1],
         !judge                    ? "informative (launch noise)"
         : diff[REPS / 2] <= 200.0 ? "**pass** (≤ 200 ns)"
                                   : "**miss** (> 200 ns)");
}

/* A new process (fork before this process made any client) tunes one key of the noop set and
   exits with the number of candidates it measured. */
static int measured_in_child(const char *selector) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    cubert_client *client = NULL;
    if (cubert_client_create(selector, &client)) _exit(200);
    cubert_tune_key key = {0};
    cubert_tune_key_add_anchored(&key, 12345);
    if (cubert_tune_execute(client, &noop_set, &key, NULL)) _exit(201);
    cubert_tune_stats st = {0};
    cubert_tune_stats_get(client, &st);
    cubert_client_release(client);
    _exit((int)st.candidates_measured);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

/* ---- the full reduction: cubert_op_reduce(SUM, CUBERT_AXIS_ALL) on f32 ----------------- */

typedef struct reduce_args {
  cubert_handle *in, *out, *partial;
  uint64_t n;
} reduce_args;

/* Today's (before autotune) hand-picked geometry, as examples/quickstart.c picks it: the
   reduce_sum_f32 kernel at 65536 elements per cube x 16 units on the CPU server, 4096 x 256
   elsewhere, then one more cube over the partial sums (a full reduction on the device). */
static cubert_status reduce_today(cubert_client *client, const reduce_args *a, int cpu_server) {
  const uint64_t per_cube = cpu_server ? 65536 : 4096;
  const uint32_t dim = cpu_server ? 16 : 256;
  const uint64_t parts = cubert_kernel_reduce_cube_count(a->n, per_cube);
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)parts, &sel));
  uint64_t info[2] = {a->n, per_cube};
  cubert_handle *bufs[2] = {a->in, a->partial};
  cubert_kernel_args kargs = {bufs, 2, info, 2};
  CUBERT_RETURN_IF_ERROR(cubert_client_launch(client, &cubert_kernel_reduce_sum_f32, sel.cube_count,
                                              cubert_cube_dim_new_3d(dim, 1, 1), &kargs));
  uint64_t info2[2] = {parts, parts};
  cubert_handle *bufs2[2] = {a->partial, a->out};
  cubert_kernel_args kargs2 = {bufs2, 2, info2, 2};
  return cubert_client_launch(client, &cubert_kernel_reduce_sum_f32,
                              cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(256, 1, 1),
                              &kargs2);
}

/* The library call, tuned (candidate -1) or forced to one candidate of its set. */
static cubert_status reduce_op(cubert_client *client, const reduce_args *a, int candidate) {
  cubert_tensor in = {.handle = a->in,
                      .rank = 1,
                      .shape = {a->n},
                      .strides = {1},
                      .elem_size = 4,
                      .dtype = CUBERT_DTYPE_F32};
  cubert_tensor out = {.handle = a->out, .rank = 0, .elem_size = 4, .dtype = CUBERT_DTYPE_F32};
  cubert_ops_reduce_force_candidate(candidate);
  cubert_status st = cubert_op_reduce(client, CUBERT_REDUCE_SUM, &in, CUBERT_AXIS_ALL, 0, &out);
  cubert_ops_reduce_force_candidate(-1);
  return st;
}

typedef struct winner_query {
  uint64_t anchored_n;
  char name[64];
  int index;
} winner_query;

/* The disk cache's winner for the library's reduce set and a full reduction of n floats. */
static void find_winner(const cubert_tune_entry *e, void *user) {
  winner_query *q = user;
  if (strcmp(e->set_name, cubert_ops_reduce_tune_set()->name) != 0 || e->key.count < 3 ||
      e->key.fields[1] != 1 || e->key.fields[2] != q->anchored_n)
    return;
  snprintf(q->name, sizeof(q->name), "%s", e->winner_name);
  q->index = (int)e->winner;
}

/* ns of one call + sync: candidate i of the set (forced), the tuned call (i == count) or
   today's geometry (i == count + 1). */
static double time_once(cubert_client *client, int i, int count, const reduce_args *a,
                        int cpu_server) {
  uint64_t t0 = cubert_now_ns();
  BENCH_CHECK(i == count + 1 ? reduce_today(client, a, cpu_server)
                             : reduce_op(client, a, i == count ? -1 : i));
  BENCH_CHECK(cubert_client_sync(client));
  return (double)(cubert_now_ns() - t0);
}

static void reduce_bench(cubert_client *client) {
  const cubert_device_properties *p = cubert_client_properties(client);
  const int cpu_server = p->hardware.num_cpu_cores != 0;
  const cubert_tune_set *set = cubert_ops_reduce_tune_set();
  const int count = (int)set->candidate_count;
  printf(
      "\n## Full reduction cubert_op_reduce(SUM, CUBERT_AXIS_ALL) f32: tuned vs every fixed "
      "candidate of its set (%s) and today's hand-picked reduce_sum_f32 geometry, ms, median of "
      "%d call + sync, all interleaved\n\n",
      set->name, REPS);
  printf(
      "| floats | tuned choice | tuned | choice's fixed time | best fixed | best | today (%s) "
      "| choice / best (≤ 1.05) | tuned / today (≤ 1) | tuning ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n",
      cpu_server ? "65536 x 16" : "4096 x 256");
  const uint64_t sizes[] = {1u << 20, 16u << 20, 64u << 20};
  for (size_t z = 0; z < 3; ++z) {
    reduce_args a = {NULL, NULL, NULL, sizes[z]};
    BENCH_CHECK(cubert_client_empty(client, a.n * 4, &a.in));
    BENCH_CHECK(cubert_client_empty(client, 4, &a.out));
    BENCH_CHECK(cubert_client_empty(client, (a.n / 4096 + 1) * 4, &a.partial));
    uint64_t info[2] = {a.n, 0x3f800000u};
    cubert_handle *fill_bufs[1] = {a.in};
    cubert_kernel_args fill = {fill_bufs, 1, info, 2};
    cubert_cube_count_selection sel;
    BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)(a.n / 256), &sel));
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_fill_u32, sel.cube_count,
                                     cubert_cube_dim_new_3d(256, 1, 1), &fill));
    uint64_t t0 = cubert_now_ns();
    BENCH_CHECK(reduce_op(client, &a, -1));
    BENCH_CHECK(cubert_client_sync(client));
    double tuning_ms = (double)(cubert_now_ns() - t0) / 1e6;
    float sum = 0;
    BENCH_CHECK(cubert_client_read(client, a.out, &sum, 4));
    if (sum != (float)a.n) {
      fprintf(stderr, "full reduction of %llu ones gave %g\n", (unsigned long long)a.n,
              (double)sum);
      exit(1);
    }
    /* Which candidates fit (a forced call of one that does not is UNAVAILABLE). */
    int valid[64] = {0};
    for (int i = 0; i < count; ++i) {
      cubert_status st = reduce_op(client, &a, i);
      valid[i] = st == NULL;
      cubert_status_free(st);
    }
    BENCH_CHECK(cubert_client_sync(client));
    /* Round-robin over the fixed choices, the tuned call and today's, so load changes hit all
       alike. */
    static double t[66][REPS];
    for (int r = 0; r < REPS; ++r)
      for (int i = 0; i <= count + 1; ++i)
        t[i][r] = i >= count || valid[i] ? time_once(client, i, count, &a, cpu_server) : 1e30;
    double median[66];
    int best = -1;
    for (int i = 0; i <= count + 1; ++i) {
      qsort(t[i], REPS, sizeof(double), compare_double);
      median[i] = t[i][REPS / 2];
      if (i < count && valid[i] && (best < 0 || median[i] < median[best])) best = i;
    }
    const double tuned = median[count], today = median[count + 1];
    winner_query q = {cubert_tune_anchor(a.n, 0, 1, 2), "(not on disk)", best};
    BENCH_CHECK(cubert_tune_cache_foreach(client, find_winner, &q, NULL));
    const double ratio = median[q.index] / median[best], vs_today = tuned / today;
    printf("| %lluM | %s | %.3f | %.3f | %s | %.3f | %.3f | %.3f %s | %.3f %s | %.0f |\n",
           (unsigned long long)(a.n >> 20), q.name, tuned / 1e6, median[q.index] / 1e6,
           set->candidates[best].name, median[best] / 1e6, today / 1e6, ratio,
           ratio <= 1.05 ? "**pass**" : "**miss**", vs_today,
           vs_today <= 1.0 ? "**pass**" : "**miss**", tuning_ms);
    cubert_handle_release(a.in);
    cubert_handle_release(a.out);
    cubert_handle_release(a.partial);
  }
}

int main(int argc, char **argv) {
  const char *selector = "cpu";
  int reduce = 1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--no-reduce") == 0)
      reduce = 0;
    else
      selector = argv[i];
  }
  /* A private, empty disk cache, before the library reads its environment. */
  char dir[] = "/tmp/cubert-bench-tune-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("CUBERT_CACHE_DIR", dir, 1);

  bench_print_env(stdout);
  printf("\n## Fresh process, first call of a new key (%s)\n\n", selector);
  int cold = measured_in_child(selector), warm = measured_in_child(selector);
  printf(
      "cold disk cache: %d candidates measured; warm disk cache: %d candidates measured "
      "(%s)\n",
      cold, warm, warm == 0 ? "**pass**" : "**miss**");

  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create(selector, &client));
  printf(
      "\n## Overhead of a cached cubert_tune_execute (%s: %s), ns per call, median (min–max) "
      "of %d x %d calls\n\n",
      selector, cubert_client_properties(client)->name, REPS, CALLS);
  printf("| candidate | direct | execute | overhead | target |\n|---|---|---|---|---|\n");
  overhead(client, &nothing_set, do_nothing, "does nothing", 1);
  overhead(client, &noop_set, launch_noop, "launches noop kernel", 0);
  if (reduce) reduce_bench(client);
  cubert_client_release(client);
  bench_remove_tree(dir);
  return 0;
}

/* bench/tune.c — the cost of autotune (lib/tune).

   1. Overhead of cubert_tune_execute() with a cached key over calling the winner directly:
      (a) with a candidate that does nothing (the pure dispatch cost), (b) with a candidate
      that launches the noop kernel (what a user sees), both without syncing per call.
   2. First call of a new key in a fresh process: with a cold disk cache every candidate is
      measured; with the cache the first process left, none (the count is printed).
   3. reduce_sum_f32 at 1M, 16M and 64M floats: a tunable set over (elements per cube, cube
      dim); the tuned choice against every fixed choice and the geometry examples/quickstart.c
      picks by hand (65536 per cube x 16 units on the CPU server, 4096 x 256 elsewhere).

   Usage: bench_tune [selector] [--no-reduce]   (default selector: cpu) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "cubert/cubert.h"
#include "cubert/server.h"

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
static const cubert_tune_set nothing_set = {"bench.nothing", nothing_candidates, 2, 0};
static const cubert_tune_candidate noop_candidates[] = {{"noop", launch_noop, NULL, 0},
                                                        {"noop2", launch_noop, NULL, 0}};
static const cubert_tune_set noop_set = {"bench.noop", noop_candidates, 2, 0};

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

/* ---- reduce_sum_f32 ---------------------------------------------------------------------- */

typedef struct reduce_args {
  cubert_handle *in, *out;
  uint64_t n;
} reduce_args;

typedef struct reduce_shape {
  uint32_t per_cube, dim;
} reduce_shape;

static const reduce_shape shapes[] = {{4096, 256}, {16384, 256}, {65536, 256},
                                      {16384, 16}, {65536, 16},  {262144, 16},
                                      {65536, 64}, {262144, 64}, {1048576, 64}};
#define SHAPE_COUNT (sizeof(shapes) / sizeof(shapes[0]))

static cubert_status reduce_with(cubert_client *client, const reduce_args *a, reduce_shape s) {
  uint64_t parts = cubert_kernel_reduce_cube_count(a->n, s.per_cube);
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)parts, &sel));
  uint64_t info[2] = {a->n, s.per_cube};
  cubert_handle *bufs[2] = {a->in, a->out};
  cubert_kernel_args kargs = {bufs, 2, info, 2};
  return cubert_client_launch(client, &cubert_kernel_reduce_sum_f32, sel.cube_count,
                              cubert_cube_dim_new_3d(s.dim, 1, 1), &kargs);
}

#define SHAPE_FN(i)                                                     \
  static cubert_status shape##i(cubert_client *client, const void *a) { \
    return reduce_with(client, a, shapes[i]);                           \
  }
SHAPE_FN(0)
SHAPE_FN(1)
SHAPE_FN(2)
SHAPE_FN(3)
SHAPE_FN(4)
SHAPE_FN(5)
SHAPE_FN(6)
SHAPE_FN(7)
SHAPE_FN(8)

/* The cube dim must fit the device: each candidate's predicate checks its own shape. */
#define SHAPE_VALID(i)                                                                          \
  static int valid##i(const cubert_client *client, const cubert_tune_key *key, const void *a) { \
    (void)key, (void)a;                                                                         \
    return shapes[i].dim <= cubert_client_properties(client)->hardware.max_units_per_cube;      \
  }
SHAPE_VALID(0)
SHAPE_VALID(1)
SHAPE_VALID(2)
SHAPE_VALID(3)
SHAPE_VALID(4)
SHAPE_VALID(5)
SHAPE_VALID(6)
SHAPE_VALID(7)
SHAPE_VALID(8)

/* Group 0 (CUBERT_AUTOTUNE=minimal): one shape per family, the hand-picked ones included. */
static const cubert_tune_candidate reduce_candidates[] = {
    {"e4096_d256", shape0, valid0, 0},   {"e16384_d256", shape1, valid1, 0},
    {"e65536_d256", shape2, valid2, 1},  {"e16384_d16", shape3, valid3, 1},
    {"e65536_d16", shape4, valid4, 0},   {"e262144_d16", shape5, valid5, 1},
    {"e65536_d64", shape6, valid6, 1},   {"e262144_d64", shape7, valid7, 0},
    {"e1048576_d64", shape8, valid8, 1},
};
static const cubert_tune_set reduce_set = {"bench.reduce_sum_f32", reduce_candidates, SHAPE_COUNT,
                                           0};

typedef struct winner_query {
  const cubert_tune_key *key;
  char name[64];
  uint32_t index;
} winner_query;

/* The disk cache's winner for the reduce set and this key. */
static void find_winner(const cubert_tune_entry *e, void *user) {
  winner_query *q = user;
  if (strcmp(e->set_name, reduce_set.name) != 0 || e->key.count != q->key->count ||
      memcmp(e->key.fields, q->key->fields, e->key.count * sizeof(uint64_t)) != 0)
    return;
  snprintf(q->name, sizeof(q->name), "%s", e->winner_name);
  q->index = e->winner;
}

static int valid_shape(cubert_client *client, size_t i) {
  return i == SHAPE_COUNT || reduce_candidates[i].valid(client, NULL, NULL);
}

/* ns of one launch + sync: of candidate `i`, or through the tuner when i == SHAPE_COUNT. */
static double time_once(cubert_client *client, size_t i, const reduce_args *a,
                        const cubert_tune_key *key) {
  uint64_t t0 = cubert_now_ns();
  BENCH_CHECK(i == SHAPE_COUNT ? cubert_tune_execute(client, &reduce_set, key, a)
                               : reduce_candidates[i].launch(client, a));
  BENCH_CHECK(cubert_client_sync(client));
  return (double)(cubert_now_ns() - t0);
}

static void reduce_bench(cubert_client *client) {
  const cubert_device_properties *p = cubert_client_properties(client);
  const int cpu_server = p->hardware.num_cpu_cores != 0;
  const reduce_shape today = cpu_server ? (reduce_shape){65536, 16} : (reduce_shape){4096, 256};
  size_t today_index = 0;
  for (size_t i = 0; i < SHAPE_COUNT; ++i)
    if (shapes[i].per_cube == today.per_cube && shapes[i].dim == today.dim) today_index = i;
  printf(
      "\n## reduce_sum_f32: tuned (elements per cube x cube dim) vs every fixed choice, ms, "
      "median of %d launch + sync, all interleaved\n\n",
      REPS);
  printf(
      "| floats | tuned choice | tuned | choice's fixed time | best fixed | best | today (%u x "
      "%u) | choice / best (≤ 1.05) | tuned / today (≤ 1) | tuning ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n",
      today.per_cube, today.dim);
  const uint64_t sizes[] = {1u << 20, 16u << 20, 64u << 20};
  for (size_t z = 0; z < 3; ++z) {
    reduce_args a = {NULL, NULL, sizes[z]};
    BENCH_CHECK(cubert_client_empty(client, a.n * 4, &a.in));
    BENCH_CHECK(cubert_client_empty(client, (a.n / 4096 + 1) * 4, &a.out));
    uint64_t info[2] = {a.n, 0x3f800000u};
    cubert_handle *fill_bufs[1] = {a.in};
    cubert_kernel_args fill = {fill_bufs, 1, info, 2};
    cubert_cube_count_selection sel;
    BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)(a.n / 256), &sel));
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_fill_u32, sel.cube_count,
                                     cubert_cube_dim_new_3d(256, 1, 1), &fill));
    cubert_tune_key key = {0};
    BENCH_CHECK(cubert_tune_key_add_anchored(&key, a.n));
    uint64_t t0 = cubert_now_ns();
    BENCH_CHECK(cubert_tune_execute(client, &reduce_set, &key, &a));
    BENCH_CHECK(cubert_client_sync(client));
    double tuning_ms = (double)(cubert_now_ns() - t0) / 1e6;
    /* Round-robin over the fixed choices and the tuned call, so load changes hit all alike. */
    static double t[SHAPE_COUNT + 1][REPS];
    for (int r = 0; r < REPS; ++r)
      for (size_t i = 0; i <= SHAPE_COUNT; ++i)
        t[i][r] = valid_shape(client, i) ? time_once(client, i, &a, &key) : 1e30;
    double median[SHAPE_COUNT + 1];
    size_t best = 0;
    for (size_t i = 0; i <= SHAPE_COUNT; ++i) {
      qsort(t[i], REPS, sizeof(double), compare_double);
      median[i] = t[i][REPS / 2];
      if (i < SHAPE_COUNT && median[i] < median[best]) best = i;
    }
    double tuned = median[SHAPE_COUNT];
    winner_query q = {&key, "(not on disk)", 0};
    BENCH_CHECK(cubert_tune_cache_foreach(client, find_winner, &q, NULL));
    double ratio = median[q.index] / median[best], vs_today = tuned / median[today_index];
    printf("| %lluM | %s | %.3f | %.3f | %s | %.3f | %.3f | %.3f %s | %.3f %s | %.0f |\n",
           (unsigned long long)(a.n >> 20), q.name, tuned / 1e6, median[q.index] / 1e6,
           reduce_candidates[best].name, median[best] / 1e6, median[today_index] / 1e6, ratio,
           ratio <= 1.05 ? "**pass**" : "**miss**", vs_today,
           vs_today <= 1.0 ? "**pass**" : "**miss**", tuning_ms);
    cubert_handle_release(a.in);
    cubert_handle_release(a.out);
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

/* Autotune (lib/tune): measurement, the in-memory and disk caches, control variables. Every
   test that needs a device runs on both servers, "cpu" and "opencl", skipping an absent one.

   The synthetic candidates spin on the host for a known time inside their launch, which the
   CPU server's host clock measures, and also fill spin_ns / 2 elements of a buffer, which
   OpenCL's device timestamps measure (they do not see host time): on both servers a longer
   spin is a slower candidate. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cache_file.h"
#include "base/config.h"
#include "base/log.h"
#include "core_capture.h"
#include "cubert/cache_bundle.h"
#include "cubert/config.h"
#include "cubert/cubert.h"
#include "cubert/ops.h"
#include "cubert/server.h"
#include "tune/check.h"
#include "tune/disk.h"
#include "tune/tuner.h"

static const char *const selectors[] = {"cpu", "opencl"};

typedef struct spin_args {
  uint64_t spin_ns[4]; /* per candidate */
  int fail[4];         /* per candidate: nonzero returns an error with that code */
  atomic_int calls[4];
  cubert_client *client; /* with buf: the device work */
  cubert_handle *buf;    /* MAX_FILL elements, or NULL for host time only */
} spin_args;

#define MAX_FILL (16u << 20)
/* Where a test asserts the winner, the winner and the runner-up differ by 4x or more and by
   milliseconds: on a loaded machine the scheduler can stretch a sample by tens of ms, and the
   median of 5 must still rank them. */
#define SPIN_SCALE 4

/* Fills the first n u32 of h with value on c's stream. */
static cubert_status fill_u32(cubert_client *c, cubert_handle *h, uint64_t n, uint64_t value) {
  uint64_t info[2] = {n, value};
  cubert_handle *bufs[1] = {h};
  cubert_kernel_args kargs = {bufs, 1, info, 2};
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(c, (uint32_t)((n + 255) / 256), &sel));
  return cubert_client_launch(c, &cubert_kernel_fill_u32, sel.cube_count,
                              cubert_cube_dim_new_3d(256, 1, 1), &kargs);
}

static cubert_status spin(const spin_args *a, int i) {
  atomic_fetch_add(&((spin_args *)a)->calls[i], 1);
  if (a->fail[i]) return cubert_status_make((cubert_code)a->fail[i], "candidate %d fails", i);
  uint64_t end = cubert_now_ns() + a->spin_ns[i] * SPIN_SCALE;
  while (cubert_now_ns() < end) {
  }
  if (!a->buf) return NULL;
  /* Device work in proportion (2 elements per ns of spin, so a 10x gap stays 10x on devices
     where a small fill costs about as much as launching it: GPUs). */
  uint64_t n = a->spin_ns[i] * 2 < MAX_FILL ? a->spin_ns[i] * 2 : MAX_FILL;
  return n == 0 ? NULL : fill_u32(a->client, a->buf, n, 7);
}
static cubert_status c0(cubert_client *c, const void *a) {
  (void)c;
  return spin(a, 0);
}
static cubert_status c1(cubert_client *c, const void *a) {
  (void)c;
  return spin(a, 1);
}
static cubert_status c2(cubert_client *c, const void *a) {
  (void)c;
  return spin(a, 2);
}
static int c2_small_only(const cubert_client *c, const cubert_tune_key *key, const void *a) {
  (void)c, (void)a;
  return key->count == 0 || key->fields[0] <= 1024;
}

static const cubert_tune_candidate candidates[] = {
    {"spin0", c0, NULL, 0},
    {"spin1", c1, NULL, 1},
    {"spin2", c2, NULL, 0},
};
static const cubert_tune_set set3 = {"test.spin", candidates, 3, 0, NULL};
static const cubert_tune_set set3_other_source = {"test.spin", candidates, 3, 42, NULL};
static const cubert_tune_candidate candidates_valid[] = {
    {"spin0", c0, NULL, 0},
    {"spin1", c1, NULL, 0},
    {"spin2", c2, c2_small_only, 0},
};
static const cubert_tune_set set_valid = {"test.valid", candidates_valid, 3, 0, NULL};

static char cache_root[1024];
/* CUBERT_AUTOTUNE_BACKGROUND for env_setup: the tests of measurement in the call turn it off
   (the kernel library's operations would otherwise measure in the background on OpenCL); the
   background tests turn it on, for both servers. */
static const char *background = "off";

/* A fresh cache folder for this test process (under $TMPDIR, never in the working directory),
   then the environment is read again. */
static void env_setup(const char *autotune) {
  const char *tmp = getenv("TMPDIR");
  char cwd[900];
  snprintf(cwd, sizeof(cwd), "%s", tmp && tmp[0] ? tmp : "/tmp");
  snprintf(cache_root, sizeof(cache_root), "%s/cubert-tune-test-XXXXXX", cwd);
  cr_assert_not_null(mkdtemp(cache_root));
  setenv("CUBERT_CACHE_DIR", cache_root, 1);
  if (autotune)
    setenv("CUBERT_AUTOTUNE", autotune, 1);
  else
    unsetenv("CUBERT_AUTOTUNE");
  setenv("CUBERT_AUTOTUNE_BACKGROUND", background, 1);
  if (!getenv("POCL_CACHE_DIR")) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/pocl-cache", cwd);
    mkdir(path, 0755);
    setenv("POCL_CACHE_DIR", path, 0);
  }
  cubert_config_reload_for_tests();
}

/* A client of `selector`, or NULL when the device is absent (the caller skips it). */
static cubert_client *open_client(const char *selector) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    cr_log_info("%s: no device (%s); skipped", selector, cubert_status_message(s));
    cubert_status_free(s);
    return NULL;
  }
  return client;
}

/* Gives the candidates their device buffer (released by the caller with args_done). */
static void args_attach(cubert_client *client, spin_args *args) {
  args->client = client;
  cubert_status s = cubert_client_empty(client, MAX_FILL * 4u, &args->buf);
  cr_assert_null(s, "%s", cubert_status_message(s));
}
static void args_done(spin_args *args) {
  cubert_handle_release(args->buf);
  args->buf = NULL;
}

static cubert_tune_stats stats_of(cubert_client *client) {
  cubert_tune_stats st;
  cubert_status s = cubert_tune_stats_get(client, &st);
  cr_assert_null(s, "%s", cubert_status_message(s));
  return st;
}

static cubert_tune_key key1(uint64_t n) {
  cubert_tune_key key = {0};
  cr_assert_null(cubert_tune_key_add_anchored(&key, n));
  return key;
}

static void expect_ok(cubert_status s) {
  cr_assert_null(s, "%s", cubert_status_message(s));
}

Test(tune, anchor_matches_the_reference) {
  /* Reference examples (balanced level, base 2): 1,3,100,1000,4096,5000 -> 1,4,128,1024,4096,8192.
   */
  const uint64_t in[] = {1, 3, 100, 1000, 4096, 5000}, want[] = {1, 4, 128, 1024, 4096, 8192};
  for (size_t i = 0; i < 6; ++i) cr_expect_eq(cubert_tune_anchor(in[i], 0, 1, 2), want[i]);
  cr_expect_eq(cubert_tune_anchor(0, 0, 1, 0), 1);
  cr_expect_eq(cubert_tune_anchor(5000, 4096, 1, 2), 4096);
  cr_expect_eq(cubert_tune_anchor(3, 0, 64, 2), 64);
  cr_expect_eq(cubert_tune_anchor(10, 0, 1, 10), 10);
  cr_expect_eq(cubert_tune_anchor(11, 0, 1, 10), 100);
  cr_expect_eq(cubert_tune_anchor(UINT64_MAX, 0, 1, 2), UINT64_MAX);
  cubert_tune_key a = key1(1000), b = key1(1024), c = key1(4096);
  cr_expect_eq(a.fields[0], b.fields[0]);
  cr_expect_neq(a.fields[0], c.fields[0]);
  cubert_tune_key full = {0};
  for (int i = 0; i < CUBERT_TUNE_KEY_MAX_FIELDS; ++i) expect_ok(cubert_tune_key_add(&full, i));
  cubert_status s = cubert_tune_key_add(&full, 9);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
}

Test(tune, picks_the_fastest_then_runs_it_from_memory) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {12000000, 500000, 5000000}};
    args_attach(client, &args);
    cubert_tune_key key = key1(1000);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.tunings, 1, "%s", selectors[d]);
    cr_expect_eq(st.candidates_measured, 3);
    /* Warm-up + two samples each: spin0 and spin2 are 24x and 10x behind spin1, so both are
       eliminated after the second round (the first to eliminate), which leaves spin1 alone (no
       more samples); then one more run of the winner. */
    cr_expect_eq(st.samples, 6, "%s", selectors[d]);
    cr_expect_eq(st.candidates_eliminated, 2, "%s", selectors[d]);
    cr_expect_eq(atomic_load(&args.calls[0]), 3);
    cr_expect_eq(atomic_load(&args.calls[2]), 3);
    cr_expect_eq(atomic_load(&args.calls[1]), 4, "%s: winner spin1", selectors[d]);
    /* 1024 anchors like 1000: no new tuning; the winner runs. */
    cubert_tune_key same = key1(1024);
    expect_ok(cubert_tune_execute(client, &set3, &same, &args));
    cr_expect_eq(atomic_load(&args.calls[1]), 5);
    st = stats_of(client);
    cr_expect_eq(st.tunings, 1);
    cr_expect_eq(st.memory_hits, 1);
    /* 4096 is another key. */
    cubert_tune_key other = key1(4096);
    expect_ok(cubert_tune_execute(client, &set3, &other, &args));
    cr_expect_eq(stats_of(client).tunings, 2);
    args_done(&args);
    cubert_client_release(client);
  }
}

Test(tune, failing_candidate_is_skipped) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {0, 5000000, 500000}, .fail = {CUBERT_CODE_COMPILATION}};
    args_attach(client, &args);
    cubert_tune_key key = key1(7);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.candidates_measured, 3);
    cr_expect_eq(st.candidates_failed, 1);
    cr_expect_eq(atomic_load(&args.calls[0]), 1, "the failing warm-up stops it");
    /* spin1 is 10x behind: eliminated after two samples, spin2 is left alone (warm-up, two
       samples, the caller's launch). */
    cr_expect_eq(atomic_load(&args.calls[1]), 3, "%s", selectors[d]);
    cr_expect_eq(atomic_load(&args.calls[2]), 4, "%s: winner spin2", selectors[d]);
    args_done(&args);
    cubert_client_release(client);
  }
}

Test(tune, all_failing_returns_the_last_error_and_caches_nothing) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {
        .fail = {CUBERT_CODE_COMPILATION, CUBERT_CODE_CUBE_DIM, CUBERT_CODE_OUT_OF_MEMORY}};
    args_attach(client, &args);
    cubert_tune_key key = key1(7);
    cubert_status s = cubert_tune_execute(client, &set3, &key, &args);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(s));
    cubert_status_free(s);
    s = cubert_tune_execute(client, &set3, &key, &args);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY);
    cubert_status_free(s);
    cr_expect_eq(stats_of(client).tunings, 2, "nothing was cached");
    args_done(&args);
    cubert_client_release(client);
  }
}

Test(tune, cached_winner_that_fails_is_evicted_and_replaced) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    /* Wide gaps (0.1 against 2 ms, then 2 against 8 ms): under ASan on a loaded 2-core machine
       a 0.3 ms candidate lost to a 1 ms one once, and then no winner failed (CI, session 13).
       8 ms is the longest spin whose device fill (2 elements per ns) stays under MAX_FILL, so
       the 4x gap holds on OpenCL's device clock too (a capped 20 ms spin was only 2x there). */
    spin_args args = {.spin_ns = {8000000, 100000, 2000000}};
    args_attach(client, &args);
    cubert_tune_key key = key1(99);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    args.fail[1] = CUBERT_CODE_CUBE_DIM; /* the winner now fails */
    int before2 = atomic_load(&args.calls[2]);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.evictions, 1);
    cr_expect_eq(st.tunings, 2);
    /* Warm-up, two samples (spin0 is then eliminated), the caller's launch. */
    cr_expect_eq(atomic_load(&args.calls[2]) - before2, 4, "%s: spin2 wins the retuning",
                 selectors[d]);
    /* The disk entry names the new winner. */
    char path[4096];
    expect_ok(cubert_tune_cache_path(client, path, sizeof(path)));
    cubert_tune_record *records = NULL;
    size_t count = 0;
    char *identity = cubert_tune_disk_identity(client);
    cr_assert_null(cubert_tune_disk_load(path, identity, &records, &count));
    cr_assert_eq(count, 1);
    cr_expect_str_eq(records[0].winner_name, "spin2");
    free(records);
    /* The public listing (cubert-info --tune) reports the same entry. */
    size_t listed = 0;
    expect_ok(cubert_tune_cache_foreach(client, NULL, NULL, &listed));
    cr_expect_eq(listed, 1);
    free(identity);
    args_done(&args);
    cubert_client_release(client);
  }
}

/* A key with one eligible candidate is decided without running it: the caller's launch is its
   only run (issue 24: it used to be measured 1 + CUBERT_TUNE_SAMPLES times). */
Test(tune, a_lone_candidate_is_not_measured) {
  static const cubert_tune_candidate one[] = {{"only", c0, NULL, 0}};
  static const cubert_tune_set one_set = {"test.one", one, 1, 0, NULL};
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {100000}};
    args_attach(client, &args);
    cubert_tune_key key = key1(5);
    expect_ok(cubert_tune_execute(client, &one_set, &key, &args));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(atomic_load(&args.calls[0]), 1, "%s: only the caller's launch", selectors[d]);
    cr_expect_eq(st.candidates_measured, 0);
    cr_expect_eq(st.samples, 0);
    cr_expect_eq(st.tunings, 1);
    cr_expect_eq(st.disk_writes, 0, "nothing measured, nothing written");
    expect_ok(cubert_tune_execute(client, &one_set, &key, &args));
    cr_expect_eq(atomic_load(&args.calls[0]), 2);
    cr_expect_eq(stats_of(client).memory_hits, 1);
    args_done(&args);
    cubert_client_release(client);
  }
  /* minimal leaving one candidate of group 0. */
  static const cubert_tune_candidate grouped[] = {{"g0", c0, NULL, 0}, {"g1", c1, NULL, 1}};
  static const cubert_tune_set grouped_set = {"test.grouped", grouped, 2, 0, NULL};
  env_setup("minimal");
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {1000, 1000}};
  cubert_tune_key key = key1(5);
  expect_ok(cubert_tune_execute(client, &grouped_set, &key, &args));
  cr_expect_eq(atomic_load(&args.calls[0]), 1);
  cr_expect_eq(atomic_load(&args.calls[1]), 0);
  cr_expect_eq(stats_of(client).candidates_measured, 0);
  cubert_client_release(client);
}

static uint32_t known_spin2(const cubert_client *client, const cubert_tune_set *set,
                            const uint8_t *eligible) {
  (void)client, (void)set, (void)eligible;
  return 2;
}

/* A table with two entries: spin2, else spin1 (the first one valid for the key). */
static uint32_t known_spin2_then_1(const cubert_client *client, const cubert_tune_set *set,
                                   const uint8_t *eligible) {
  (void)client, (void)set;
  return eligible[2] ? 2 : eligible[1] ? 1 : UINT32_MAX;
}

/* A table of known-good defaults (cubert_tune_execute_call, .known_good): minimal takes its
   candidate without measuring anything, even outside group 0; full ignores it and measures all. */
Test(tune, minimal_takes_the_known_good_default_unmeasured) {
  env_setup("minimal");
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {1000, 1000, 1000}};
  cubert_tune_key key = key1(5);
  expect_ok(cubert_tune_execute_call(client, &set3, &key, &args,
                                     &(cubert_tune_call){.known_good = known_spin2}));
  cr_expect_eq(atomic_load(&args.calls[2]), 1, "the known-good candidate, launched once");
  cr_expect_eq(atomic_load(&args.calls[0]) + atomic_load(&args.calls[1]), 0);
  cr_expect_eq(stats_of(client).candidates_measured, 0);
  /* Not valid for the key: minimal measures group 0 as without a table. */
  cubert_tune_key big = key1(5000);
  expect_ok(cubert_tune_execute_call(client, &set_valid, &big, &args,
                                     &(cubert_tune_call){.known_good = known_spin2}));
  cr_expect_eq(stats_of(client).candidates_measured, 2);
  /* A second entry valid for the key is taken unmeasured instead (another anchored key: the
     one above is remembered). */
  spin_args second = {.spin_ns = {1000, 1000, 1000}};
  cubert_tune_key bigger = key1(20000);
  expect_ok(cubert_tune_execute_call(client, &set_valid, &bigger, &second,
                                     &(cubert_tune_call){.known_good = known_spin2_then_1}));
  cr_expect_eq(atomic_load(&second.calls[1]), 1, "the second entry, launched once");
  cr_expect_eq(atomic_load(&second.calls[0]) + atomic_load(&second.calls[2]), 0);
  cr_expect_eq(stats_of(client).candidates_measured, 2, "nothing more measured");
  cubert_client_release(client);
  env_setup(NULL);
  client = open_client("cpu");
  spin_args all = {.spin_ns = {1000, 1000, 1000}};
  expect_ok(cubert_tune_execute_call(client, &set3, &key, &all,
                                     &(cubert_tune_call){.known_good = known_spin2}));
  cr_expect_eq(stats_of(client).candidates_measured, 3, "full measures every candidate");
  cubert_client_release(client);
}

/* A lone candidate that fails returns its error and is not remembered. */
Test(tune, a_failing_lone_candidate_is_not_cached) {
  static const cubert_tune_candidate one[] = {{"only", c0, NULL, 0}};
  static const cubert_tune_set one_set = {"test.one_failing", one, 1, 0, NULL};
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.fail = {CUBERT_CODE_COMPILATION}};
  cubert_tune_key key = key1(5);
  for (int i = 0; i < 2; ++i) {
    cubert_status s = cubert_tune_execute(client, &one_set, &key, &args);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION, "%s", cubert_status_message(s));
    cubert_status_free(s);
  }
  cubert_tune_stats st = stats_of(client);
  cr_expect_eq(st.tunings, 2, "nothing was cached");
  cr_expect_eq(st.memory_hits, 0);
  args.fail[0] = 0;
  expect_ok(cubert_tune_execute(client, &one_set, &key, &args));
  cubert_client_release(client);
}

/* Early elimination keeps sampling the contenders that are close (here two equal candidates,
   and one 8x slower that is dropped after its second sample). */
Test(tune, early_elimination_keeps_close_contenders) {
  static const cubert_tune_candidate close[] = {
      {"slow", c0, NULL, 0}, {"a", c1, NULL, 0}, {"b", c2, NULL, 0}};
  static const cubert_tune_set close_set = {"test.close", close, 3, 0, NULL};
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {4000000, 500000, 500000}};
  cubert_tune_key key = key1(5);
  expect_ok(cubert_tune_execute(client, &close_set, &key, &args));
  cubert_tune_stats st = stats_of(client);
  cr_expect_eq(atomic_load(&args.calls[0]), 3, "slow: warm-up and two samples");
  cr_expect_geq(st.candidates_eliminated, 1);
  cr_expect_leq(st.candidates_eliminated, 2);
  /* a and b are within 1.5x of each other on a quiet machine: both take every sample, unless
     load stretched one of them past 1.5x, in which case it was eliminated too. */
  int ab = atomic_load(&args.calls[1]) + atomic_load(&args.calls[2]);
  cr_expect(st.samples == 2 + 2 * CUBERT_TUNE_SAMPLES || st.candidates_eliminated == 2,
            "samples %llu", (unsigned long long)st.samples);
  cr_expect(ab >= 7, "%d", ab); /* two warm-ups, two samples each, the caller's launch */
  cubert_client_release(client);
}

/* Tuning runs the candidates several times on the caller's arguments: an in-place operation
   (softmax, out == in) must measure on scratch, so that the caller's buffer holds softmax(x)
   once, not softmax applied once per timed run (issue 24: "tuning never writes user buffers
   other than the result"). The cache is cold, so the call really tunes. */
Test(tune, tuning_an_in_place_op_applies_it_once) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    enum { R = 4, C = 1000 };
    static float x[R * C], y[R * C];
    for (int i = 0; i < R * C; ++i) x[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    cubert_layout_desc desc = {.rank = 2, .shape = {R, C}, .dtype = CUBERT_DTYPE_F32};
    cubert_tensor t;
    expect_ok(cubert_client_create_tensor(client, x, &desc, &t));
    expect_ok(cubert_op_softmax(client, &t, &t));
    expect_ok(cubert_client_read_tensor(client, &t, y, sizeof y));
    cubert_tune_stats st = stats_of(client);
    cr_expect_geq(st.samples, 2, "%s: the softmax was tuned (%llu samples)", selectors[d],
                  (unsigned long long)st.samples);
    double worst = 0;
    for (int r = 0; r < R; ++r) {
      double mx = -1e30, sum = 0;
      for (int j = 0; j < C; ++j) mx = x[r * C + j] > mx ? x[r * C + j] : mx;
      for (int j = 0; j < C; ++j) sum += exp(x[r * C + j] - mx);
      for (int j = 0; j < C; ++j) {
        double err = fabs(y[r * C + j] - exp(x[r * C + j] - mx) / sum);
        worst = err > worst ? err : worst;
      }
    }
    cr_expect_lt(worst, 1e-5, "%s: softmax applied more than once? worst error %g", selectors[d],
                 worst);
    cubert_tensor_release(&t);
    cubert_client_release(client);
  }
}

/* Tuning never writes a user buffer other than the result (issue 24 item 2): a matmul with
   beta != 0 whose a and b are views of one user buffer is tuned on a cold cache; that buffer
   must be bit-identical afterwards and c must hold alpha a b + beta c applied once (each
   measured run accumulating into c would add a b once per run). */
Test(tune, tuning_leaves_the_inputs_bit_identical_and_accumulates_once) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    enum { M = 33, K = 64, N = 48 };
    static float ab[M * K + K * N], ab_after[M * K + K * N], c0[M * N], c1[M * N];
    for (int i = 0; i < M * K + K * N; ++i) ab[i] = (float)((i * 29) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < M * N; ++i) c0[i] = (float)(i % 7) - 3.0f;
    cubert_layout_desc flat = {.rank = 1, .shape = {M * K + K * N}, .dtype = CUBERT_DTYPE_F32};
    cubert_layout_desc cd = {.rank = 2, .shape = {M, N}, .dtype = CUBERT_DTYPE_F32};
    cubert_tensor both, c;
    expect_ok(cubert_client_create_tensor(client, ab, &flat, &both));
    expect_ok(cubert_client_create_tensor(client, c0, &cd, &c));
    cubert_tensor a = {.handle = both.handle,
                       .rank = 2,
                       .shape = {M, K},
                       .strides = {K, 1},
                       .elem_size = 4,
                       .dtype = CUBERT_DTYPE_F32,
                       .offset = 0};
    cubert_tensor b = {.handle = both.handle,
                       .rank = 2,
                       .shape = {K, N},
                       .strides = {N, 1},
                       .elem_size = 4,
                       .dtype = CUBERT_DTYPE_F32,
                       .offset = M * K};
    expect_ok(cubert_op_matmul(client, 0.5, &a, &b, 2.0, &c));
    expect_ok(cubert_client_read_tensor(client, &both, ab_after, sizeof ab_after));
    expect_ok(cubert_client_read_tensor(client, &c, c1, sizeof c1));
    cubert_tune_stats st = stats_of(client);
    cr_expect_geq(st.candidates_measured, 2, "%s: the matmul was tuned (%llu measured)",
                  selectors[d], (unsigned long long)st.candidates_measured);
    cr_expect_eq(memcmp(ab, ab_after, sizeof ab), 0, "%s: tuning wrote the input buffer",
                 selectors[d]);
    double worst = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double dot = 0;
        for (int k = 0; k < K; ++k) dot += (double)ab[i * K + k] * ab[M * K + k * N + j];
        double err = fabs(c1[i * N + j] - (0.5 * dot + 2.0 * c0[i * N + j]));
        worst = err > worst ? err : worst;
      }
    cr_expect_lt(worst, 1e-3, "%s: c accumulated more than once? worst error %g", selectors[d],
                 worst);
    cubert_tensor_release(&c);
    cubert_tensor_release(&both);
    cubert_client_release(client);
  }
}

/* ---- scratch copies for a user-written set (issue 35: "tuning a user's own set can corrupt
   the user's data") ---- */

#define ACC_N 1024
typedef struct accumulate_args {
  cubert_tensor x, y; /* the set computes y += x */
} accumulate_args;

/* y += x on the device: the output is an input, so every run accumulates. */
static cubert_status accumulate_on_device(cubert_client *c, const void *a) {
  const accumulate_args *p = a;
  return cubert_op_binary(c, CUBERT_BINARY_ADD, &p->y, &p->x, &p->y);
}
/* y += x in place through the host: reads both (y asynchronously), adds, writes y back. */
static cubert_status accumulate_through_host(cubert_client *c, const void *a) {
  const accumulate_args *p = a;
  float x[ACC_N], y[ACC_N];
  CUBERT_RETURN_IF_ERROR(cubert_client_read(c, p->x.handle, x, sizeof x));
  cubert_future *f = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_read_async(c, p->y.handle, y, sizeof y, &f));
  cubert_status s = cubert_future_wait(f);
  cubert_future_release(f);
  CUBERT_RETURN_IF_ERROR(s);
  for (int i = 0; i < ACC_N; ++i) y[i] += x[i];
  return cubert_client_write(c, p->y.handle, 0, y, sizeof y);
}
static int accumulate_output(const void *a, cubert_tune_output *out) {
  const accumulate_args *p = a;
  *out = (cubert_tune_output){p->y.handle, 0, ACC_N, CUBERT_DTYPE_F32, 0};
  return 1;
}
static const cubert_tune_candidate accumulate_candidates[] = {
    {"on_device", accumulate_on_device, NULL, 0},
    {"through_host", accumulate_through_host, NULL, 0},
};
static const cubert_tune_set accumulate_set = {"test.accumulate", accumulate_candidates, 2, 0,
                                               accumulate_output};

/* Tunes y += x on a cold key with full tuning and `read_only_x` declaring x read-only or not;
   returns the tuning's stats and y and x as the caller's buffers hold them afterwards. */
static cubert_tune_stats accumulate_tuned(cubert_client *client, uint64_t key_field,
                                          int read_only_x, const float *x0, const float *y0,
                                          float *x_after, float *y_after) {
  cubert_layout_desc desc = {.rank = 1, .shape = {ACC_N}, .dtype = CUBERT_DTYPE_F32};
  accumulate_args args;
  expect_ok(cubert_client_create_tensor(client, x0, &desc, &args.x));
  expect_ok(cubert_client_create_tensor(client, y0, &desc, &args.y));
  cubert_tune_key key = {0};
  expect_ok(cubert_tune_key_add(&key, key_field));
  cubert_tune_stats before = stats_of(client);
  if (read_only_x)
    expect_ok(cubert_tune_execute_reading(client, &accumulate_set, &key, &args, &args.x.handle, 1));
  else
    expect_ok(cubert_tune_execute(client, &accumulate_set, &key, &args));
  cubert_tune_stats after = stats_of(client);
  after.samples -= before.samples;
  after.candidates_measured -= before.candidates_measured;
  after.candidates_mismatched -= before.candidates_mismatched;
  expect_ok(cubert_client_read(client, args.x.handle, x_after, ACC_N * sizeof(float)));
  expect_ok(cubert_client_read(client, args.y.handle, y_after, ACC_N * sizeof(float)));
  cubert_tensor_release(&args.x);
  cubert_tensor_release(&args.y);
  return after;
}

/* A user-written set whose candidates accumulate into their output (one on the device, one
   through a read and a write of the host), tuned with full tuning over several samples: the
   caller's y must end with exactly one y += x (the winner's launch), x unchanged, with the
   result checks off and on (on: both candidates agree, each starting from the caller's y), and
   whether or not x is declared read-only. */
Test(tune, tuning_a_user_set_that_accumulates_applies_it_once) {
  for (int checks = 0; checks < 2; ++checks) {
    env_setup("full");
    setenv("CUBERT_AUTOTUNE_CHECKS", checks ? "1" : "0", 1);
    cubert_config_reload_for_tests();
    for (size_t d = 0; d < 2; ++d) {
      cubert_client *client = open_client(selectors[d]);
      if (!client) continue;
      for (int read_only_x = 0; read_only_x < 2; ++read_only_x) {
        float x0[ACC_N], y0[ACC_N], x[ACC_N], y[ACC_N];
        for (int i = 0; i < ACC_N; ++i) {
          x0[i] = (float)(i % 13) - 6.0f;
          y0[i] = (float)(3 * (i % 7));
        }
        cubert_tune_stats st =
            accumulate_tuned(client, 100 + 2 * checks + read_only_x, read_only_x, x0, y0, x, y);
        cr_expect_eq(st.candidates_measured, 2, "%s: both candidates were measured", selectors[d]);
        cr_expect_geq(st.samples, 4, "%s: several samples (%llu)", selectors[d],
                      (unsigned long long)st.samples);
        cr_expect_eq(st.candidates_mismatched, 0, "%s: the candidates agree", selectors[d]);
        int wrong_y = 0, wrong_x = 0;
        for (int i = 0; i < ACC_N; ++i) {
          wrong_y += y[i] != y0[i] + x0[i];
          wrong_x += x[i] != x0[i];
        }
        cr_expect_eq(wrong_y, 0,
                     "%s (checks %d, x read-only %d): y[1] is %g, expected %g (y + x once); "
                     "%d elements wrong",
                     selectors[d], checks, read_only_x, y[1], y0[1] + x0[1], wrong_y);
        cr_expect_eq(wrong_x, 0, "%s: x changed", selectors[d]);
      }
      cubert_client_release(client);
    }
  }
  unsetenv("CUBERT_AUTOTUNE_CHECKS");
}

/* Declaring a view read-only exempts its bytes only: x and y are views of one buffer, x is
   declared read-only, and y, outside x's bytes, is still tuned on a copy (so is x with it: one
   copy per buffer), on both servers. */
Test(tune, a_read_only_view_does_not_exempt_the_rest_of_its_buffer) {
  env_setup("full");
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    float both[2 * ACC_N], x[ACC_N], y[ACC_N];
    for (int i = 0; i < ACC_N; ++i) both[i] = (float)(i % 5), both[ACC_N + i] = 10.0f;
    cubert_handle *whole = NULL, *views[2] = {NULL, NULL};
    expect_ok(cubert_client_create_buffer(client, both, sizeof both, &whole));
    accumulate_args args;
    for (int v = 0; v < 2; ++v) {
      expect_ok(cubert_handle_view(whole, (uint64_t)v * sizeof x, sizeof x, &views[v]));
      cubert_tensor t = {.handle = views[v],
                         .rank = 1,
                         .shape = {ACC_N},
                         .strides = {1},
                         .elem_size = 4,
                         .dtype = CUBERT_DTYPE_F32};
      *(v ? &args.y : &args.x) = t;
    }
    cubert_tune_key key = key1(9);
    expect_ok(cubert_tune_execute_reading(client, &accumulate_set, &key, &args, &views[0], 1));
    cr_expect_geq(stats_of(client).samples, 2, "%s: tuned", selectors[d]);
    expect_ok(cubert_client_read(client, views[0], x, sizeof x));
    expect_ok(cubert_client_read(client, views[1], y, sizeof y));
    int wrong = 0;
    for (int i = 0; i < ACC_N; ++i) wrong += x[i] != both[i] || y[i] != 10.0f + both[i];
    cr_expect_eq(wrong, 0, "%s: y[1] is %g, expected %g (y + x once); %d elements wrong",
                 selectors[d], y[1], 10.0f + both[1], wrong);
    cubert_handle_release(views[0]);
    cubert_handle_release(views[1]);
    cubert_handle_release(whole);
    cubert_client_release(client);
  }
}

/* A buffer declared read-only is used in place, not copied: a candidate that writes it anyway
   (the declaration is the caller's promise) changes the caller's buffer once per run. And a
   NULL list with a count is refused. */
Test(tune, a_buffer_declared_read_only_is_used_in_place) {
  env_setup("full");
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  float x0[ACC_N], y0[ACC_N], x[ACC_N], y[ACC_N];
  for (int i = 0; i < ACC_N; ++i) x0[i] = 1.0f, y0[i] = 0.0f;
  cubert_layout_desc desc = {.rank = 1, .shape = {ACC_N}, .dtype = CUBERT_DTYPE_F32};
  accumulate_args args;
  expect_ok(cubert_client_create_tensor(client, x0, &desc, &args.x));
  expect_ok(cubert_client_create_tensor(client, y0, &desc, &args.y));
  cubert_tune_key key = key1(7);
  expect_ok(cubert_tune_execute_reading(client, &accumulate_set, &key, &args, &args.y.handle, 1));
  expect_ok(cubert_client_read(client, args.x.handle, x, sizeof x));
  expect_ok(cubert_client_read(client, args.y.handle, y, sizeof y));
  cr_expect_eq(x[0], 1.0f);
  cr_expect_geq(y[0], 4.0f, "y, declared read-only, was written in place by every run: %g", y[0]);
  cubert_status s = cubert_tune_execute_reading(client, &accumulate_set, &key, &args, NULL, 1);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cr_expect(strstr(cubert_status_message(s), "read_only is NULL but read_only_count is 1"), "%s",
            cubert_status_message(s));
  cubert_status_free(s);
  cubert_tensor_release(&args.x);
  cubert_tensor_release(&args.y);
  cubert_client_release(client);
}

Test(tune, valid_predicate_and_modes) {
  env_setup("off");
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {1000000, 0, 0}};
    cubert_tune_key key = key1(5);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cr_expect_eq(atomic_load(&args.calls[0]), 1, "off runs the first candidate");
    cr_expect_eq(stats_of(client).candidates_measured, 0);
    cubert_client_release(client);
  }
  env_setup("minimal");
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {1000000, 0, 300000}};
    cubert_tune_key key = key1(5);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cr_expect_eq(atomic_load(&args.calls[1]), 0, "minimal measures group 0 only");
    cr_expect_eq(stats_of(client).candidates_measured, 2);
    cubert_client_release(client);
  }
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {1000000, 500000, 0}};
    cubert_tune_key key = key1(5000); /* spin2 is invalid above 1024 */
    expect_ok(cubert_tune_execute(client, &set_valid, &key, &args));
    cr_expect_eq(atomic_load(&args.calls[2]), 0);
    cr_expect_eq(stats_of(client).candidates_measured, 2);
    cubert_client_release(client);
  }
}

Test(tune, bad_arguments) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  if (!client) return;
  static const cubert_tune_candidate bad[] = {{"has space", c0, NULL, 0}};
  static const cubert_tune_set bad_set = {"test.bad", bad, 1, 0, NULL};
  static const cubert_tune_set bad_name = {"bad name", candidates, 3, 0, NULL};
  cubert_tune_key key = key1(1);
  spin_args args = {0};
  const cubert_tune_set *sets[] = {&bad_set, &bad_name};
  for (int i = 0; i < 2; ++i) {
    cubert_status s = cubert_tune_execute(client, sets[i], &key, &args);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
    cubert_status_free(s);
  }
  cubert_status s = cubert_tune_execute(client, NULL, &key, &args);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
  /* The identity names backend, device, driver and platform, separated by '|'. */
  char *identity = cubert_tune_disk_identity(client);
  cr_assert_not_null(identity);
  cr_expect_eq(strncmp(identity, "cpu|", 4), 0, "%s", identity);
  int bars = 0;
  for (const char *c = identity; *c; ++c) bars += *c == '|';
  cr_expect_eq(bars, 3, "%s", identity);
  free(identity);
  cubert_client_release(client);
}

/* The cache file path and device identity of `selector`, found in a child process: a parent
   that opened the device itself would fork its workers with the driver initialised, which some
   OpenCL drivers (NVIDIA's) do not survive. 0, or 77 when the device is absent. */
static int probe_cache(const char *selector, char *path, size_t capacity, char **out_identity) {
  int pipe_fd[2];
  cr_assert_eq(pipe(pipe_fd), 0);
  fflush(NULL);
  pid_t probe = fork();
  cr_assert_geq(probe, 0);
  if (probe == 0) {
    close(pipe_fd[0]);
    cubert_client *client = NULL;
    if (cubert_client_create(selector, &client)) _exit(77);
    char out[8192];
    char *id = cubert_tune_disk_identity(client);
    if (cubert_tune_cache_path(client, out, 4096) || !id) _exit(1);
    size_t len = strlen(out);
    snprintf(out + len + 1, sizeof(out) - len - 1, "%s", id);
    if (write(pipe_fd[1], out, len + 1 + strlen(id) + 1) < 0) _exit(1);
    _exit(0);
  }
  close(pipe_fd[1]);
  char got[8192] = {0};
  size_t have = 0;
  for (ssize_t r; (r = read(pipe_fd[0], got + have, sizeof(got) - 1 - have)) > 0;)
    have += (size_t)r;
  close(pipe_fd[0]);
  int status = 0;
  cr_assert_eq(waitpid(probe, &status, 0), probe);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return 77;
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && have > 0, "%s: the probe child failed",
            selector);
  snprintf(path, capacity, "%s", got);
  if (out_identity) *out_identity = strdup(got + strlen(got) + 1);
  return 0;
}

/* Tunes `key` in a child process (fresh device, nothing in memory), which exits with the
   number of candidates it measured. */
static int tune_in_child(const char *selector, const cubert_tune_set *set, uint64_t n) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    cubert_client *client = NULL;
    if (cubert_client_create(selector, &client)) _exit(100);
    spin_args args = {.spin_ns = {600000, 100000, 300000}};
    cubert_tune_key key = {0};
    cubert_tune_key_add_anchored(&key, n);
    if (cubert_tune_execute(client, set, &key, &args)) _exit(101);
    cubert_tune_stats st;
    cubert_tune_stats_get(client, &st);
    cubert_client_release(client);
    _exit((int)st.candidates_measured);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Fork before any client exists in this process, so each child starts with no device. */
Test(tune, disk_cache_round_trips_across_processes_and_checksum_invalidates) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    int first = tune_in_child(selectors[d], &set3, 3000);
    if (first == 100) continue; /* no such device */
    cr_expect_eq(first, 3, "%s: a fresh cache measures every candidate", selectors[d]);
    cr_expect_eq(tune_in_child(selectors[d], &set3, 3000), 0,
                 "%s: the second process finds the winner on disk", selectors[d]);
    cr_expect_eq(tune_in_child(selectors[d], &set3, 3500), 0, "anchored to the same key");
    cr_expect_eq(tune_in_child(selectors[d], &set3_other_source, 3000), 3,
                 "%s: a changed source checksum invalidates the entry", selectors[d]);
    cr_expect_eq(tune_in_child(selectors[d], &set3_other_source, 3000), 0);
  }
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, size, f), size);
  fclose(f);
}

Test(tune, truncated_garbage_and_foreign_files_are_ignored_and_rewritten) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    /* Make a valid file with one entry, in a child. */
    if (tune_in_child(selectors[d], &set3, 100) == 100) continue;
    char path[4096];
    cr_assert_eq(probe_cache(selectors[d], path, sizeof(path), NULL), 0);
    size_t size = 0;
    const char *reason = NULL;
    int missing = 0;
    unsigned char *good = cubert_cache_file_read(path, 1, 1 << 20, &size, &reason, &missing);
    cr_assert_not_null(good, "%s", reason);
    char foreign[4096];
    int foreign_len = snprintf(foreign, sizeof(foreign), "%s", (const char *)good);
    char *dev = strstr(foreign, "device ");
    cr_assert_not_null(dev);
    dev[7] = dev[7] == 'X' ? 'Y' : 'X'; /* another device; the checksum no longer matches */
    struct {
      const void *data;
      size_t size;
    } bad[] = {{good, size / 2}, {"\x01\x02garbage\xff", 11}, {foreign, (size_t)foreign_len}};
    for (size_t b = 0; b < 3; ++b) {
      write_file(path, bad[b].data, bad[b].size);
      cr_expect_eq(tune_in_child(selectors[d], &set3, 100), 3, "%s: bad file %zu is a miss",
                   selectors[d], b);
      cr_expect_eq(tune_in_child(selectors[d], &set3, 100), 0, "%s: and was rewritten",
                   selectors[d]);
    }
    free(good);
  }
}

/* A child saves new keys in a loop and is killed with SIGKILL at different moments; the file
   is then always complete and valid (temp + rename), never half-written. */
Test(tune, file_is_never_half_written_when_the_writer_is_killed, .timeout = 300) {
  env_setup(NULL);
  static const cubert_tune_candidate quick[] = {{"a", c1, NULL, 0}, {"b", c1, NULL, 0}};
  static const cubert_tune_set quick_set = {"test.kill", quick, 2, 0, NULL};
  for (size_t d = 0; d < 2; ++d) {
    char path[4096];
    char *identity = NULL;
    if (probe_cache(selectors[d], path, sizeof(path), &identity) == 77) continue;
    size_t saved_max = 0;
    for (int round = 0; round < 6; ++round) {
      /* The child reports its first saved entry through a pipe, and is killed a little later:
         a fixed delay from fork was too short for a PoCL client to start on a loaded machine
         (CI saw children killed before they saved anything). */
      int ready[2];
      cr_assert_eq(pipe(ready), 0);
      fflush(NULL);
      pid_t pid = fork();
      cr_assert_geq(pid, 0);
      if (pid == 0) {
        close(ready[0]);
        cubert_client *client = NULL;
        if (cubert_client_create(selectors[d], &client)) _exit(100);
        spin_args args = {0};
        for (uint64_t k = (uint64_t)round << 32;; ++k) {
          cubert_tune_key key = {0};
          cubert_tune_key_add(&key, k);
          cubert_tune_key_add(&key, (uint64_t)getpid());
          if (cubert_tune_execute(client, &quick_set, &key, &args)) _exit(101);
          if (k == (uint64_t)round << 32 && write(ready[1], "r", 1) != 1) _exit(102);
        }
      }
      close(ready[1]);
      struct pollfd wait_ready = {ready[0], POLLIN, 0};
      const int got = poll(&wait_ready, 1, 90000);
      char byte = 0;
      const ssize_t n_read = got == 1 ? read(ready[0], &byte, 1) : 0;
      close(ready[0]);
      if (n_read != 1) kill(pid, SIGKILL);
      cr_assert_eq(n_read, 1, "%s: round %d: the child saved nothing within 90 s", selectors[d],
                   round);
      usleep(20000 + 30000 * (useconds_t)round);
      kill(pid, SIGKILL);
      int status = 0;
      waitpid(pid, &status, 0);
      cr_assert(WIFSIGNALED(status), "%s: the child stopped by itself (%d)", selectors[d],
                WEXITSTATUS(status));
      cubert_tune_record *records = NULL;
      size_t count = 0;
      const char *reason = cubert_tune_disk_load(path, identity, &records, &count);
      cr_assert_null(reason, "%s: round %d: the file is damaged: %s", selectors[d], round, reason);
      cr_expect_geq(count, saved_max, "entries of earlier children are kept");
      saved_max = count;
      free(records);
    }
    cr_expect_geq(saved_max, 6, "%s: every child saved entries", selectors[d]);
    /* The next save removes what the killed writers left behind. */
    cr_expect_eq(tune_in_child(selectors[d], &set3, 77), 3);
    char dir[4096], prefix[512];
    snprintf(dir, sizeof(dir), "%s", path);
    *strrchr(dir, '/') = 0;
    snprintf(prefix, sizeof(prefix), "%s.tmp.", strrchr(path, '/') + 1);
    DIR *listing = opendir(dir);
    cr_assert_not_null(listing);
    int leftovers = 0;
    for (struct dirent *e; (e = readdir(listing));)
      leftovers += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(listing);
    cr_expect_eq(leftovers, 0, "%s: %d temporary files left", selectors[d], leftovers);
    free(identity);
  }
}

typedef struct thread_job {
  cubert_client *client;
  spin_args *args;
  pthread_barrier_t *start;
  cubert_status status;
} thread_job;

static void *tune_thread(void *user) {
  thread_job *job = user;
  cubert_tune_key key = key1(2048);
  pthread_barrier_wait(job->start);
  job->status = cubert_tune_execute(job->client, &set3, &key, job->args);
  return NULL;
}

Test(tune, two_threads_tune_one_key_once) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {10000000, 500000, 5000000}};
    args_attach(client, &args);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    thread_job jobs[2] = {{client, &args, &start, NULL}, {client, &args, &start, NULL}};
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, tune_thread, &jobs[i]);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; ++i) expect_ok(jobs[i].status);
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.tunings, 1, "%s", selectors[d]);
    cr_expect_eq(st.candidates_measured, 3);
    cr_expect_eq(st.memory_hits, 1, "the other thread waited and ran the winner");
    cr_expect_eq(atomic_load(&args.calls[0]), 3, "eliminated after two samples");
    cr_expect_eq(atomic_load(&args.calls[1]), 5, "warm-up, two samples, two launches");
    args_done(&args);
    cubert_client_release(client);
  }
}

Test(tune, unwritable_folder_degrades_to_memory_only) {
  env_setup(NULL);
  char blocker[1100];
  snprintf(blocker, sizeof(blocker), "%s/file", cache_root);
  write_file(blocker, "x", 1);
  setenv("CUBERT_CACHE_DIR", blocker, 1); /* a file where the folder should be */
  cubert_config_reload_for_tests();
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    spin_args args = {.spin_ns = {0, 0, 0}};
    cubert_tune_key key = key1(1);
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.tunings, 1);
    cr_expect_eq(st.memory_hits, 1);
    cr_expect_eq(st.disk_writes, 0);
    char path[4096];
    cubert_status s = cubert_tune_cache_path(client, path, sizeof(path));
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_UNAVAILABLE);
    cubert_status_free(s);
    cubert_client_release(client);
  }
}

Test(tune, cache_can_be_disabled) {
  setenv("CUBERT_AUTOTUNE_CACHE", "0", 1);
  env_setup(NULL);
  cr_assert_eq(tune_in_child("cpu", &set3, 10), 3);
  cr_expect_eq(tune_in_child("cpu", &set3, 10), 3, "nothing was read from disk");
  unsetenv("CUBERT_AUTOTUNE_CACHE");
}

/* CUBERT_PROFILE lines, CUBERT_TRACE events and CUBERT_LOG=info,tune show tuning runs as such. */
Test(tune, profile_trace_and_log_label_tuning_runs) {
  char trace[1200];
  env_setup(NULL);
  snprintf(trace, sizeof(trace), "%s/trace.json", cache_root);
  setenv("CUBERT_PROFILE", "basic", 1);
  setenv("CUBERT_TRACE", trace, 1);
  setenv("CUBERT_LOG", "info,tune", 1);
  cubert_config_reload_for_tests();
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {20000, 10000, 30000}};
  args_attach(client, &args);
  cubert_tune_key key = key1(3);
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_status s = cubert_tune_execute(client, &set3, &key, &args);
  const char *text = core_capture_end(&cap);
  expect_ok(s);
  cr_expect(strstr(text, "fill_u32 (tuning test.spin/spin0)"), "%s", text);
  cr_expect(strstr(text, "test.spin: spin1 wins"), "%s", text);
  args_done(&args);
  cubert_client_release(client);
  FILE *f = fopen(trace, "r");
  cr_assert_not_null(f);
  static char json[1 << 16];
  size_t n = fread(json, 1, sizeof(json) - 1, f);
  json[n] = 0;
  fclose(f);
  cr_expect(strstr(json, "(tuning test.spin/spin2)"), "trace: %.400s", json);
  unsetenv("CUBERT_PROFILE");
  unsetenv("CUBERT_TRACE");
  unsetenv("CUBERT_LOG");
}

/* Two processes tuning different keys at the same time: the file stays valid and keeps every
   entry of both (each update is a read-modify-write under the file lock). */
Test(tune, concurrent_processes_keep_each_others_entries, .timeout = 120) {
  env_setup(NULL);
  static const cubert_tune_candidate quick[] = {{"a", c1, NULL, 0}, {"b", c1, NULL, 0}};
  static const cubert_tune_set quick_set = {"test.concurrent", quick, 2, 0, NULL};
  enum { PER_CHILD = 25 };
  for (size_t d = 0; d < 2; ++d) {
    char path[4096];
    char *identity = NULL;
    if (probe_cache(selectors[d], path, sizeof(path), &identity) == 77) continue;
    fflush(NULL);
    pid_t pids[2];
    for (int c = 0; c < 2; ++c) {
      pids[c] = fork();
      cr_assert_geq(pids[c], 0);
      if (pids[c] == 0) {
        cubert_client *client = NULL;
        if (cubert_client_create(selectors[d], &client)) _exit(100);
        spin_args args = {0};
        for (uint64_t k = 0; k < PER_CHILD; ++k) {
          cubert_tune_key key = {0};
          cubert_tune_key_add(&key, (uint64_t)c * 1000 + k);
          if (cubert_tune_execute(client, &quick_set, &key, &args)) _exit(101);
        }
        cubert_client_release(client);
        _exit(0);
      }
    }
    for (int c = 0; c < 2; ++c) {
      int status = 0;
      cr_assert_eq(waitpid(pids[c], &status, 0), pids[c]);
      cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child %d failed", selectors[d],
                c);
    }
    cubert_tune_record *records = NULL;
    size_t count = 0;
    const char *reason = cubert_tune_disk_load(path, identity, &records, &count);
    cr_assert_null(reason, "%s", reason);
    cr_expect_eq(count, 2 * PER_CHILD, "%s: %zu entries", selectors[d], count);
    free(records);
    free(identity);
  }
}

/* ---- issue 22, item 2: tuning never swallows or misplaces an error ----------------------- */

static void failing_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, "injected kernel failure 4711");
}
static const cubert_kernel_def failing_kernel = {
    .name = "failing", .cpu = failing_cpu, .opencl_source = NULL};

/* The caller's earlier asynchronous error reaches its next sync whether the key was tuned just
   now or found in the cache, and no candidate is blamed for it. Before the fix the warm-up sync
   of the first candidate collected the error, the candidate was dropped and the error lost. */
Test(tune, an_earlier_async_error_is_left_to_the_callers_next_sync) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {600000, 100000, 300000}};
  cubert_tune_key key = key1(77);
  for (int warm = 0; warm < 2; ++warm) {
    expect_ok(cubert_client_launch(client, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(1, 1, 1), NULL));
    expect_ok(cubert_tune_execute(client, &set3, &key, &args));
    cubert_status s = cubert_client_sync(client);
    cr_assert_not_null(s, "%s cache: the earlier kernel failure was lost", warm ? "warm" : "cold");
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY, "%s",
                 cubert_status_message(s));
    cr_expect(strstr(cubert_status_message(s), "4711"), "%s", cubert_status_message(s));
    cr_expect_eq(cubert_status_error_count(s), 1, "%s", cubert_status_message(s));
    cubert_status_free(s);
    expect_ok(cubert_client_sync(client)); /* reported once */
  }
  cubert_tune_stats st = stats_of(client);
  cr_expect_eq(st.tunings, 1);
  cr_expect_eq(st.candidates_measured, 3);
  cr_expect_eq(st.candidates_failed, 0, "a candidate was blamed for the caller's error");
  cr_expect_eq(st.memory_hits, 1);
  cubert_client_release(client);
}

Test(tune, duplicate_candidate_names_are_invalid_argument) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  static const cubert_tune_candidate dup[] = {
      {"spin0", c0, NULL, 0}, {"spin1", c1, NULL, 0}, {"spin0", c2, NULL, 0}};
  static const cubert_tune_set dup_set = {"test.dup", dup, 3, 0, NULL};
  spin_args args = {0};
  cubert_tune_key key = key1(5);
  cubert_status s = cubert_tune_execute(client, &dup_set, &key, &args);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT, "%s",
               s ? cubert_status_message(s) : "OK");
  cr_expect(strstr(cubert_status_message(s), "candidates 0 and 2") &&
                strstr(cubert_status_message(s), "\"spin0\""),
            "%s", cubert_status_message(s));
  cubert_status_free(s);
  cr_expect_eq(atomic_load(&args.calls[0]) + atomic_load(&args.calls[2]), 0, "a candidate ran");
  cubert_client_release(client);
}

/* The cache file of `client`, its folder made. */
static void cache_file_of(cubert_client *client, char *path, size_t capacity) {
  expect_ok(cubert_tune_cache_path(client, path, capacity));
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", path);
  *strrchr(dir, '/') = 0;
  mkdir(dir, 0755);
}

/* A process that holds the file lock for ever (stopped, or on purpose) used to block every new
   key of every process; now the update gives up after the timeout, the winner stays in memory,
   and the file is used again once the lock is free. */
Test(tune, a_held_cache_lock_times_out, .timeout = 60) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  atomic_store(&cubert_tune_disk_lock_timeout_ms, 300);
  char path[4096], lock_path[4200];
  cache_file_of(client, path, sizeof(path));
  snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
  /* flock locks belong to the open file: this descriptor excludes the tuner's own. */
  int fd = open(lock_path, O_RDWR | O_CREAT, 0644);
  cr_assert_geq(fd, 0);
  cr_assert_eq(flock(fd, LOCK_EX), 0);
  spin_args args = {.spin_ns = {0, 0, 0}};
  cubert_tune_key key = key1(11);
  uint64_t start = cubert_now_ns();
  expect_ok(cubert_tune_execute(client, &set3, &key, &args));
  uint64_t took_ms = (cubert_now_ns() - start) / 1000000u;
  cr_expect_lt(took_ms, 20000, "tuning waited %llu ms for the held lock",
               (unsigned long long)took_ms);
  cubert_tune_stats st = stats_of(client);
  cr_expect_eq(st.tunings, 1);
  cr_expect_eq(st.disk_writes, 0);
  flock(fd, LOCK_UN);
  close(fd);
  key = key1(100000);
  expect_ok(cubert_tune_execute(client, &set3, &key, &args));
  st = stats_of(client);
  cr_expect_eq(st.disk_writes, 1, "the cache file was not used again after the timeout");
  char again[4096];
  expect_ok(cubert_tune_cache_path(client, again, sizeof(again)));
  cubert_client_release(client);
}

/* A temporary file left by a killed process whose pid this process has now (pids are reused)
   used to make the write fail (O_EXCL), which turned the cache off for the process. */
Test(tune, a_leftover_temp_file_of_a_dead_process_keeps_the_cache_on) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  char path[4096], tmp[4300];
  cache_file_of(client, path, sizeof(path));
  for (unsigned i = 0; i < 16; ++i) {
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(), i);
    write_file(tmp, "half-written", 12);
  }
  spin_args args = {.spin_ns = {0, 0, 0}};
  cubert_tune_key key = key1(3);
  expect_ok(cubert_tune_execute(client, &set3, &key, &args));
  cubert_tune_stats st = stats_of(client);
  cr_expect_eq(st.disk_writes, 1, "the winner was not written");
  char again[4096];
  cubert_status s = cubert_tune_cache_path(client, again, sizeof(again));
  cr_expect_null(s, "the cache was turned off: %s", s ? cubert_status_message(s) : "");
  cubert_status_free(s);
  cubert_client_release(client);
}

/* A file at the 65,536-entry limit: a new winner is still recorded (the oldest entry goes).
   Before the fix the new entry was written past the limit, and every reader stopped before
   it. */
Test(tune, a_full_cache_file_still_records_new_winners, .timeout = 120) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  spin_args args = {.spin_ns = {0, 0, 0}};
  cubert_tune_key key = key1(1);
  expect_ok(cubert_tune_execute(client, &set3, &key, &args)); /* a real file: its header */
  char path[4096];
  expect_ok(cubert_tune_cache_path(client, path, sizeof(path)));
  char *identity = cubert_tune_disk_identity(client);
  cr_assert_not_null(identity);
  size_t size = 0;
  const char *reason = NULL;
  int missing = 0;
  unsigned char *good = cubert_cache_file_read(path, 1, 1 << 20, &size, &reason, &missing);
  cr_assert_not_null(good, "%s", reason);
  char *end = strstr((char *)good, "\nend ");
  cr_assert_not_null(end);
  size_t head = (size_t)(end + 1 - (char *)good); /* header + the one entry */
  enum { FULL = 65536 };
  size_t capacity = head + (size_t)FULL * 64 + 64;
  char *text = malloc(capacity);
  cr_assert_not_null(text);
  memcpy(text, good, head);
  size_t len = head;
  for (unsigned i = 1; i < FULL; ++i)
    len += (size_t)snprintf(text + len, capacity - len, "test.fill 0000000000000001 0 f %u 1 %u\n",
                            i, i);
  uint64_t sum = cubert_fnv1a64(CUBERT_FNV1A64_SEED, text, len);
  len += (size_t)snprintf(text + len, capacity - len, "end %016llx\n", (unsigned long long)sum);
  write_file(path, text, len);
  cubert_tune_record *records = NULL;
  size_t count = 0;
  cr_assert_null(cubert_tune_disk_load(path, identity, &records, &count));
  cr_assert_eq(count, FULL, "the test's file is not full");
  free(records);

  key = key1(1 << 20);
  expect_ok(cubert_tune_execute(client, &set3, &key, &args));
  cr_assert_null(cubert_tune_disk_load(path, identity, &records, &count));
  cr_expect_eq(count, FULL);
  int found = 0;
  for (size_t i = 0; i < count; ++i)
    found |= strcmp(records[i].set_name, "test.spin") == 0 && records[i].key.count == 1 &&
             records[i].key.fields[0] == key.fields[0];
  cr_expect(found, "the new winner is not in the full file");
  cr_expect(strcmp(records[0].set_name, "test.fill") == 0, "the oldest entry was not evicted");
  free(records);
  free(text);
  free(good);
  free(identity);
  cubert_client_release(client);
}

/* ---- cache bundles (cubert/cache_bundle.h) ------------------------------------------------ */

/* Runs an export (import 0) or import of `path` in a child process, so that this process
   never initialises an OpenCL driver before the tune_in_child forks; the child sends back the
   counts and the status code. */
static cubert_code bundle_in_child(int import, const char *path, cubert_cache_bundle_counts *c) {
  int pipe_fd[2];
  cr_assert_eq(pipe(pipe_fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    close(pipe_fd[0]);
    struct {
      cubert_cache_bundle_counts c;
      cubert_code code;
    } out = {0};
    cubert_status s = import ? cubert_cache_bundle_import(path, &out.c)
                             : cubert_cache_bundle_export(path, &out.c);
    out.code = cubert_status_code(s);
    cubert_status_free(s);
    _exit(write(pipe_fd[1], &out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
  }
  close(pipe_fd[1]);
  struct {
    cubert_cache_bundle_counts c;
    cubert_code code;
  } got = {0};
  cr_assert_eq(read(pipe_fd[0], &got, sizeof got), (ssize_t)sizeof got);
  close(pipe_fd[0]);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  *c = got.c;
  return got.code;
}

/* A valid autotune file for a device that is not on this machine, and one of another cubert
   version, both in this process's cache folder: the bundle then carries entries that import
   must skip. */
static void add_foreign_tune_files(void) {
  char *dir = cubert_cache_dir("tune");
  cr_assert_not_null(dir);
  const char *foreign = "cpu|No Such CPU 9000|cubert-cpu 0|hwloc 0";
  char *path = cubert_tune_disk_path(dir, foreign);
  cubert_tune_record rec = {.set_name = "test.spin", .winner = 1, .winner_name = "spin1"};
  rec.key = key1(3000);
  cr_assert_eq(cubert_tune_disk_update(dir, path, foreign, &rec, NULL, NULL, NULL, NULL), 0);
  free(path);
  const char *older = "cpu|An Old CPU|cubert-cpu 0|hwloc 0";
  path = cubert_tune_disk_path(dir, older);
  char text[512];
  int n = snprintf(text, sizeof text, "cubert-tune 1\ndevice %s\ncubert 0.0.1-old\n", older);
  n += snprintf(text + n, sizeof text - (size_t)n, "end %016llx\n",
                (unsigned long long)cubert_fnv1a64(CUBERT_FNV1A64_SEED, text, (size_t)n));
  write_file(path, text, (size_t)n);
  free(path);
  free(dir);
}

/* Export, wipe, import: a new process then finds the winners and measures nothing; entries of
   a device not here or of another cubert version are skipped; a damaged bundle imports
   nothing. */
Test(tune, cache_bundle_round_trip_skips_foreign_entries) {
  env_setup(NULL);
  size_t devices = 0;
  for (size_t d = 0; d < 2; ++d) {
    int first = tune_in_child(selectors[d], &set3, 3000);
    if (first == 100) continue;
    cr_expect_eq(first, 3, "%s: a fresh cache measures every candidate", selectors[d]);
    devices++;
  }
  cr_assert_geq(devices, 1);
  add_foreign_tune_files();
  char bundle[1100];
  snprintf(bundle, sizeof bundle, "%s.bundle", cache_root);
  cubert_cache_bundle_counts c;
  cr_assert_eq(bundle_in_child(0, bundle, &c), CUBERT_CODE_OK);
  cr_expect_eq(c.tune_files, devices + 2, "%u files", c.tune_files);
  cr_expect_eq(c.invalid, 0);

  env_setup(NULL); /* a new, empty cache folder: the wipe */
  cr_expect_eq(bundle_in_child(1, bundle, &c), CUBERT_CODE_OK);
  cr_expect_eq(c.tune_files, devices, "%u imported", c.tune_files);
  cr_expect_eq(c.other_device, 1);
  cr_expect_eq(c.other_version, 1);
  cr_expect_eq(c.invalid, 0);
  for (size_t d = 0; d < 2; ++d) {
    int measured = tune_in_child(selectors[d], &set3, 3000);
    if (measured != 100)
      cr_expect_eq(measured, 0, "%s: the imported winner is used, nothing is measured",
                   selectors[d]);
  }

  /* Importing again merges the same records: the files stay as they are. */
  cr_expect_eq(bundle_in_child(1, bundle, &c), CUBERT_CODE_OK);
  cr_expect_eq(c.tune_files, devices);

  /* One flipped byte anywhere: the trailing checksum rejects the whole bundle. */
  env_setup(NULL);
  size_t size = 0;
  const char *reason = NULL;
  int missing = 0;
  unsigned char *data = cubert_cache_file_read(bundle, 1, 1u << 30, &size, &reason, &missing);
  cr_assert_not_null(data, "%s", reason);
  data[size / 2] ^= 0x20;
  write_file(bundle, data, size);
  free(data);
  cr_expect_eq(bundle_in_child(1, bundle, &c), CUBERT_CODE_INVALID_ARGUMENT);
  cr_expect_eq(c.tune_files, 0);
  for (size_t d = 0; d < 2; ++d) {
    int measured = tune_in_child(selectors[d], &set3, 3000);
    if (measured != 100) cr_expect_eq(measured, 3, "%s: nothing was imported", selectors[d]);
  }
  unlink(bundle);
}

/* Tuner::fastest (seed-tune: the cache's Hit / Miss / Pending): cubert_tune_lookup answers from
   memory or disk and runs nothing. The children write the disk entries before this process has
   a client of its own. */
Test(tune, lookup_answers_hit_miss_from_memory_and_disk_without_running_anything) {
  env_setup(NULL);
  int present[2];
  for (size_t d = 0; d < 2; ++d) present[d] = tune_in_child(selectors[d], &set3, 5000) != 100;
  for (size_t d = 0; d < 2; ++d) {
    if (!present[d]) continue;
    cubert_client *client = open_client(selectors[d]);
    cr_assert_not_null(client);
    spin_args args = {.spin_ns = {12000000, 500000, 5000000}};
    args_attach(client, &args);
    cubert_tune_key on_disk = key1(5000), fresh = key1(70000);
    cubert_tune_lookup_result r = CUBERT_TUNE_PENDING;
    uint32_t w = 7;
    expect_ok(cubert_tune_lookup(client, &set3, &on_disk, &r, &w));
    cr_expect_eq(r, CUBERT_TUNE_HIT, "%s: the child's winner, from disk", selectors[d]);
    cr_assert_lt(w, 3);
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.disk_hits, 1);
    cr_expect_eq(st.tunings, 0);
    for (int i = 0; i < 3; ++i) cr_expect_eq(atomic_load(&args.calls[i]), 0, "nothing ran");
    /* The hit is in memory now: execute runs the winner once, measures nothing. */
    expect_ok(cubert_tune_execute(client, &set3, &on_disk, &args));
    cr_expect_eq(atomic_load(&args.calls[w]), 1);
    st = stats_of(client);
    cr_expect_eq(st.memory_hits, 1);
    cr_expect_eq(st.disk_hits, 1);
    cr_expect_eq(st.tunings, 0);
    /* An unknown key: a miss that remembers nothing and runs nothing. */
    expect_ok(cubert_tune_lookup(client, &set3, &fresh, &r, &w));
    cr_expect_eq(r, CUBERT_TUNE_MISS);
    cr_expect_eq(w, UINT32_MAX);
    expect_ok(cubert_tune_lookup(client, &set3, &fresh, &r, NULL));
    cr_expect_eq(r, CUBERT_TUNE_MISS);
    cr_expect_eq(stats_of(client).tunings, 0);
    cr_expect_eq(
        atomic_load(&args.calls[0]) + atomic_load(&args.calls[1]) + atomic_load(&args.calls[2]), 1);
    /* Tuned: spin1 (0.5 ms against 5 and 12 ms) is the hit. */
    expect_ok(cubert_tune_execute(client, &set3, &fresh, &args));
    expect_ok(cubert_tune_lookup(client, &set3, &fresh, &r, &w));
    cr_expect_eq(r, CUBERT_TUNE_HIT);
    cr_expect_eq(w, 1, "%s: winner spin1", selectors[d]);
    /* Bad arguments name what is missing. */
    cubert_status s = cubert_tune_lookup(client, &set3, &fresh, NULL, &w);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
    cr_expect(strstr(cubert_status_message(s), "out_result") != NULL, "%s",
              cubert_status_message(s));
    cubert_status_free(s);
    args_done(&args);
    cubert_client_release(client);
  }
}

/* A candidate that looks up the key being measured sees it pending; the winner's final launch
   sees the hit. */
static const cubert_tune_set set_probe;
static cubert_tune_key probe_key;
static atomic_int probe_seen[3];
static cubert_status probe(cubert_client *c, const void *a) {
  (void)a;
  cubert_tune_lookup_result r = CUBERT_TUNE_MISS;
  CUBERT_RETURN_IF_ERROR(cubert_tune_lookup(c, &set_probe, &probe_key, &r, NULL));
  atomic_fetch_add(&probe_seen[r], 1);
  return NULL;
}
static const cubert_tune_candidate probe_candidates[] = {{"p0", probe, NULL, 0},
                                                         {"p1", probe, NULL, 0}};
static const cubert_tune_set set_probe = {"test.probe", probe_candidates, 2, 0, NULL};

Test(tune, lookup_of_a_key_being_measured_is_pending) {
  env_setup(NULL);
  cubert_client *client = open_client("cpu");
  cr_assert_not_null(client);
  probe_key = key1(12);
  expect_ok(cubert_tune_execute(client, &set_probe, &probe_key, NULL));
  cr_expect_eq(atomic_load(&probe_seen[CUBERT_TUNE_MISS]), 0);
  cr_expect_geq(atomic_load(&probe_seen[CUBERT_TUNE_PENDING]), 2, "warm-ups and samples");
  cr_expect_eq(atomic_load(&probe_seen[CUBERT_TUNE_HIT]), 1, "the winner's launch");
  cubert_client_release(client);
}

/* ---- CUBERT_AUTOTUNE_CHECKS (seed-tune-tuner.rs.txt, `autotune-checks`: check_autotune_outputs
   compares every candidate's output with a reference candidate's) ---- */

#define CHECK_N 64
typedef struct checked_args {
  spin_args spin;     /* timing: candidate i spins spin.spin_ns[i] */
  cubert_handle *out; /* CHECK_N floats each candidate writes */
  float values[3][CHECK_N];
} checked_args;

static cubert_status checked(cubert_client *c, const void *a, int i) {
  const checked_args *args = a;
  CUBERT_RETURN_IF_ERROR(spin(&args->spin, i));
  return cubert_client_write(c, args->out, 0, args->values[i], sizeof(args->values[i]));
}
static cubert_status k0(cubert_client *c, const void *a) {
  return checked(c, a, 0);
}
static cubert_status k1(cubert_client *c, const void *a) {
  return checked(c, a, 1);
}
static cubert_status k2(cubert_client *c, const void *a) {
  return checked(c, a, 2);
}
static int checked_output(const void *a, cubert_tune_output *out) {
  const checked_args *args = a;
  *out = (cubert_tune_output){args->out, 0, CHECK_N, CUBERT_DTYPE_F32, 1e-5};
  return 1;
}
static const cubert_tune_candidate checked_candidates[] = {
    {"right", k0, NULL, 0},
    {"wrong_fast", k1, NULL, 0},
    {"right_but_rounded", k2, NULL, 0},
};
static const cubert_tune_set checked_set = {"test.checked", checked_candidates, 3, 0,
                                            checked_output};

/* The fastest candidate writes a wrong element 7: without the checks it wins; with them it is
   reported (naming both candidates and the element), counted and excluded, and the candidate
   that differs from the default only by rounding (1e-7 of the largest element) still agrees. */
Test(tune, checks_exclude_a_candidate_whose_result_disagrees) {
  for (int on = 0; on < 2; ++on) {
    env_setup(NULL);
    setenv("CUBERT_AUTOTUNE_CHECKS", on ? "1" : "0", 1);
    setenv("CUBERT_LOG", "warn", 1);
    cubert_config_reload_for_tests();
    for (size_t d = 0; d < 2; ++d) {
      cubert_client *client = open_client(selectors[d]);
      if (!client) continue;
      checked_args args = {.spin = {.spin_ns = {2000000, 0, 500000}}};
      args_attach(client, &args.spin);
      expect_ok(cubert_client_empty(client, sizeof(args.values[0]), &args.out));
      for (int j = 0; j < CHECK_N; ++j) {
        args.values[0][j] = args.values[1][j] = (float)(j - 20) * 0.25f;
        args.values[2][j] = args.values[0][j] + (j % 3 - 1) * 1e-6f;
      }
      args.values[1][7] += 1.0f;
      cubert_tune_key key = key1(64);
      core_capture cap;
      cr_assert(core_capture_begin(&cap));
      cubert_status s = cubert_tune_execute(client, &checked_set, &key, &args);
      const char *text = core_capture_end(&cap);
      expect_ok(s);
      cubert_tune_lookup_result r;
      uint32_t winner = 99;
      expect_ok(cubert_tune_lookup(client, &checked_set, &key, &r, &winner));
      cr_expect_eq(r, CUBERT_TUNE_HIT);
      cubert_tune_stats st = stats_of(client);
      float back[CHECK_N];
      expect_ok(cubert_client_read(client, args.out, back, sizeof back));
      if (on) {
        cr_expect_eq(st.candidates_mismatched, 1, "%s", selectors[d]);
        cr_expect_neq(winner, 1, "%s: the wrong candidate won with the checks on", selectors[d]);
        cr_expect(strstr(text, "test.checked: candidate wrong_fast excluded"), "%s", text);
        cr_expect(strstr(text, "disagrees with right's at element 7"), "%s", text);
        cr_expect(!strstr(text, "right_but_rounded excluded"), "%s", text);
        cr_expect_float_eq(back[7], args.values[0][7], 1e-5f, "the winner's result is in place");
      } else {
        cr_expect_eq(st.candidates_mismatched, 0, "%s", selectors[d]);
        cr_expect_eq(winner, 1, "%s: without the checks the fastest candidate wins", selectors[d]);
        cr_expect(!strstr(text, "excluded"), "%s", text);
      }
      cubert_handle_release(args.out);
      args_done(&args.spin);
      cubert_client_release(client);
    }
  }
  unsetenv("CUBERT_AUTOTUNE_CHECKS");
  unsetenv("CUBERT_LOG");
}

/* The comparison rules of cubert_tune_output: floats within tolerance x the largest finite
   reference element (at least 1), NaN matching NaN, infinities exactly; other dtypes bit for
   bit. */
Test(tune, check_comparison_rules) {
  const float ref[6] = {100.0f, -3.0f, NAN, INFINITY, 0.0f, 1.0f};
  float got[6];
  memcpy(got, ref, sizeof got);
  cubert_tune_output f32 = {NULL, 0, 6, CUBERT_DTYPE_F32, 1e-4};
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), UINT64_MAX);
  got[4] = 0.009f; /* 9e-3 <= 1e-4 x 100: a cancellation near zero is still within */
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), UINT64_MAX);
  got[4] = 0.011f;
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), 4);
  got[4] = 0.0f;
  got[2] = 1.0f; /* a number where the reference has NaN */
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), 2);
  got[2] = NAN;
  got[3] = -INFINITY;
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), 3);
  got[3] = INFINITY;
  got[0] = NAN; /* NaN where the reference has a number */
  cr_expect_eq(cubert_tune_first_difference(&f32, ref, got), 0);
  const double dref[2] = {1e-3, 2e-3}, dgot[2] = {1e-3, 2e-3 + 2e-10};
  cubert_tune_output f64 = {NULL, 0, 2, CUBERT_DTYPE_F64, 1e-10};
  cr_expect_eq(cubert_tune_first_difference(&f64, dref, dgot), 1, "scale is at least 1");
  const int32_t iref[3] = {5, -1, 7}, igot[3] = {5, -1, 8};
  cubert_tune_output i32 = {NULL, 0, 3, CUBERT_DTYPE_I32, 0.5};
  cr_expect_eq(cubert_tune_first_difference(&i32, iref, igot), 2, "integers are exact");
}

/* The reference's anchor() at each autotune level (cubecl-architecture.md, "anchor": the
   examples for x = 1, 3, 100, 1000, 4096, 5000), and CUBERT_AUTOTUNE_LEVEL choosing the level of
   cubert_tune_key_add_anchored. */
Test(tune, anchor_levels_match_the_reference) {
  const uint64_t in[] = {1, 3, 100, 1000, 4096, 5000};
  const uint64_t want[4][6] = {{1, 7, 245, 1526, 9537, 9537},
                               {1, 4, 128, 1024, 4096, 8192},
                               {1, 4, 130, 1478, 4988, 7482},
                               {1, 3, 100, 1000, 4096, 5000}};
  for (int level = 0; level < 4; ++level)
    for (size_t i = 0; i < 6; ++i)
      cr_expect_eq(
          cubert_tune_anchor_level(in[i], 0, 1, 2, (cubert_tune_level)level), want[level][i],
          "level %d, x %llu: %llu", level, (unsigned long long)in[i],
          (unsigned long long)cubert_tune_anchor_level(in[i], 0, 1, 2, (cubert_tune_level)level));
  cr_expect_eq(cubert_tune_anchor_level(5000, 4096, 1, 2, CUBERT_TUNE_LEVEL_MINIMAL), 4096);
  cr_expect_eq(cubert_tune_anchor_level(3, 0, 64, 2, CUBERT_TUNE_LEVEL_FULL), 64);
  cr_expect_eq(cubert_tune_anchor_level(UINT64_MAX, 0, 1, 2, CUBERT_TUNE_LEVEL_MINIMAL),
               UINT64_MAX);
  cr_expect_eq(cubert_tune_anchor_level(1000, 0, 1, 2, (cubert_tune_level)9), 1024);
  const char *const names[] = {"minimal", "balanced", "extensive", "full"};
  for (int level = 0; level < 4; ++level) {
    setenv("CUBERT_AUTOTUNE_LEVEL", names[level], 1);
    cubert_config_reload_for_tests();
    cr_expect_eq(cubert_config_get()->autotune_level, level);
    cr_expect_eq(key1(1000).fields[0], want[level][3], "CUBERT_AUTOTUNE_LEVEL=%s", names[level]);
  }
  setenv("CUBERT_AUTOTUNE_LEVEL", "2", 1);
  cubert_config_reload_for_tests();
  cr_expect_eq(cubert_config_get()->autotune_level, CUBERT_TUNE_LEVEL_EXTENSIVE);
  setenv("CUBERT_AUTOTUNE_LEVEL", "coarse", 1);
  cubert_config_reload_for_tests();
  cr_expect_eq(cubert_config_get()->autotune_level, CUBERT_TUNE_LEVEL_BALANCED, "bad: the default");
  unsetenv("CUBERT_AUTOTUNE_LEVEL");
  cubert_config_reload_for_tests();
}

/* ---- trust: caches that other users cannot poison (issue 35) ------------------------------ */

/* The mode bits of `path` (permissions only). */
static unsigned mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "stat(%s)", path);
  return (unsigned)st.st_mode & 07777u;
}

/* Tunes in a child while capturing what it logs (the child inherits the captured stderr). */
static int tune_in_child_logged(const char *selector, uint64_t n, char *log, size_t capacity) {
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  int measured = tune_in_child(selector, &set3, n);
  snprintf(log, capacity, "%s", core_capture_end(&cap));
  return measured;
}

/* How many times `needle` occurs in `text`. */
static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) ++n;
  return n;
}

/* A child tunes afresh (all 3 candidates) because the tune file at `path` is not trusted, and
   logs one warning: "the cache file '<path>' <why>", with the fix. */
static void expect_retuned_with_one_warning(const char *selector, const char *path,
                                            const char *why) {
  char log[16384], text[4400];
  cr_expect_eq(tune_in_child_logged(selector, 100, log, sizeof log), 3,
               "%s: an untrusted tune file (%s) was used", selector, why);
  snprintf(text, sizeof text, "the cache file '%s' %s", path, why);
  cr_expect_eq(occurrences(log, text), 1, "%s: one warning naming the file: %s", selector, log);
  cr_expect(strstr(log, "(fix: remove it (rm '"), "the fix: %s", log);
}

/* Under umask 000 the folders a cache write creates are 0700 and its files 0600 (they were
   0755 and 0666: world-writable tuning winners). */
Test(tune, cache_files_are_private_whatever_the_umask) {
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    mode_t old = umask(0);
    int measured = tune_in_child(selectors[d], &set3, 100);
    umask(old);
    if (measured == 100) continue;
    char path[4096], lock[4200], dir[1100];
    cr_assert_eq(probe_cache(selectors[d], path, sizeof(path), NULL), 0);
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(dir, sizeof dir, "%s/tune", cache_root);
    cr_expect_eq(mode_of(dir), 0700u, "%s: folder mode %04o", selectors[d], mode_of(dir));
    cr_expect_eq(mode_of(path), 0600u, "%s: file mode %04o", selectors[d], mode_of(path));
    cr_expect_eq(mode_of(lock), 0600u, "%s: lock file mode %04o", selectors[d], mode_of(lock));
  }
}

/* A tune file others can write (0666), or in a folder others can write, is not used: the set
   is tuned afresh and one warning names the path, the mode and the fix. The file is then
   replaced by this user's own; into the folder nothing is written until it is fixed. */
Test(tune, a_tune_file_or_folder_others_can_write_is_not_used) {
  setenv("CUBERT_LOG", "warn", 1);
  for (size_t d = 0; d < 2; ++d) {
    env_setup(NULL);
    if (tune_in_child(selectors[d], &set3, 100) == 100) continue;
    char path[4096], dir[1100], log[16384];
    cr_assert_eq(probe_cache(selectors[d], path, sizeof(path), NULL), 0);
    snprintf(dir, sizeof dir, "%s/tune", cache_root);

    cr_assert_eq(chmod(path, 0666), 0);
    expect_retuned_with_one_warning(selectors[d], path, "has mode 0666");
    cr_expect_eq(mode_of(path), 0600u, "%s: the file was replaced by this user's", selectors[d]);
    cr_expect_eq(tune_in_child(selectors[d], &set3, 100), 0, "%s: the replacement is used",
                 selectors[d]);

    size_t before_size = 0, after_size = 0;
    const char *reason = NULL;
    int missing = 0;
    unsigned char *before =
        cubert_cache_file_read(path, 1, 1 << 20, &before_size, &reason, &missing);
    cr_assert_not_null(before, "%s", reason);
    cr_assert_eq(chmod(dir, 0775), 0);
    cr_expect_eq(tune_in_child_logged(selectors[d], 100, log, sizeof log), 3,
                 "%s: a tune file in a group-writable folder was used", selectors[d]);
    char folder_text[1200];
    snprintf(folder_text, sizeof folder_text, "the cache folder '%s' has mode 0775", dir);
    cr_expect_eq(occurrences(log, folder_text), 1, "%s: one warning: %s", selectors[d], log);
    cr_expect(strstr(log, "chmod go-w '"), "the fix: %s", log);
    unsigned char *after = cubert_cache_file_read(path, 1, 1 << 20, &after_size, &reason, &missing);
    cr_assert_not_null(after, "%s", reason);
    cr_expect(after_size == before_size && memcmp(before, after, after_size) == 0,
              "%s: the file in the untrusted folder was written", selectors[d]);
    free(before);
    free(after);
    cr_assert_eq(chmod(dir, 0700), 0);
    cr_expect_eq(tune_in_child(selectors[d], &set3, 100), 0, "%s: usable again once fixed",
                 selectors[d]);
  }
  unsetenv("CUBERT_LOG");
}

/* A tune file that another user owns is not used, even by root. */
Test(tune, a_tune_file_of_another_user_is_not_used) {
  if (geteuid() != 0)
    cr_skip_test("chown to uid 65534 needs root; this case runs where the tests run as root (CI)");
  setenv("CUBERT_LOG", "warn", 1);
  for (size_t d = 0; d < 2; ++d) {
    env_setup(NULL);
    if (tune_in_child(selectors[d], &set3, 100) == 100) continue;
    char path[4096];
    cr_assert_eq(probe_cache(selectors[d], path, sizeof(path), NULL), 0);
    cr_assert_eq(chown(path, 65534, 65534), 0);
    expect_retuned_with_one_warning(selectors[d], path,
                                    "is owned by uid 65534, not by you (uid 0)");
  }
  unsetenv("CUBERT_LOG");
}

/* A bundle whose first entry is good and whose second is malformed (its frame checksum
   intact) imports nothing: the header promises it, and the first entry used to be imported. */
Test(tune, cache_bundle_with_a_malformed_entry_imports_nothing) {
  env_setup(NULL);
  size_t devices = 0;
  for (size_t d = 0; d < 2; ++d)
    if (tune_in_child(selectors[d], &set3, 3000) != 100) devices++;
  cr_assert_geq(devices, 1);
  char bundle[1100];
  snprintf(bundle, sizeof bundle, "%s.bundle", cache_root);
  cubert_cache_bundle_counts c;
  cr_assert_eq(bundle_in_child(0, bundle, &c), CUBERT_CODE_OK);
  size_t size = 0;
  const char *reason = NULL;
  int missing = 0;
  unsigned char *data = cubert_cache_file_read(bundle, 1, 1u << 30, &size, &reason, &missing);
  cr_assert_not_null(data, "%s", reason);
  /* Drop the "end" line, add an entry line with no byte count, checksum it all again. */
  const char *bad = "entry tune 0000000000000000.tune 1.0\ndevice cpu|x|y|z\n";
  size_t body = size - 21, bad_len = strlen(bad);
  char *edited = malloc(body + bad_len + 32);
  cr_assert_not_null(edited);
  memcpy(edited, data, body);
  memcpy(edited + body, bad, bad_len);
  size_t n = body + bad_len;
  n += (size_t)snprintf(edited + n, 32, "end %016llx\n",
                        (unsigned long long)cubert_fnv1a64(CUBERT_FNV1A64_SEED, edited, n));
  write_file(bundle, edited, n);
  free(edited);
  free(data);

  env_setup(NULL); /* an empty cache folder */
  cr_expect_eq(bundle_in_child(1, bundle, &c), CUBERT_CODE_INVALID_ARGUMENT);
  cr_expect_eq(c.tune_files, 0, "%u files imported", c.tune_files);
  for (size_t d = 0; d < 2; ++d) {
    int measured = tune_in_child(selectors[d], &set3, 3000);
    if (measured != 100) cr_expect_eq(measured, 3, "%s: an entry was imported", selectors[d]);
  }
  unlink(bundle);
}

/* A mistyped bundle path: INVALID_ARGUMENT naming the path and the reason (it was NOT_FOUND,
   "Couldn't find resource for that handle: ... cannot stat"); a folder given as the bundle
   says it is not a file. No device is touched before the file is read. */
Test(tune, cache_bundle_import_of_a_bad_path_names_it) {
  env_setup(NULL);
  char path[1200];
  snprintf(path, sizeof path, "%s/no-such-folder/caches.bundle", cache_root);
  cubert_cache_bundle_counts c;
  cubert_status s = cubert_cache_bundle_import(path, &c);
  cr_assert_not_null(s);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  char want[1400];
  snprintf(want, sizeof want, "bundle file '%s' cannot be opened: No such file or directory", path);
  cr_expect(strstr(cubert_status_message(s), want), "%s", cubert_status_message(s));
  cubert_status_free(s);
  s = cubert_cache_bundle_import(cache_root, &c);
  cr_assert_not_null(s);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  snprintf(want, sizeof want, "bundle file '%s' cannot be read: not a regular file", cache_root);
  cr_expect(strstr(cubert_status_message(s), want), "%s", cubert_status_message(s));
  cubert_status_free(s);
}

/* ---- background tuning (CUBERT_AUTOTUNE_BACKGROUND=on, both servers) ---------------------- */

enum { BG_N = 256, BG_WORK = 4u << 20, BG_CANARY = 0x5a5a5a5au };

/* The arguments of the background tests' set: self-contained (copied by args_bytes), pointing at
   the test's counters and gate. Candidate i writes 100 + i into all of `out`; run on any thread
   but the caller's (the worker measuring it), it also writes `canary` and waits for the gate,
   and its runs take `sleep_us` more. Its speed: a host spin and a device fill of `work` in
   proportion (as spin()). */
typedef struct bg_args {
  cubert_handle *out, *canary, *work;
  uint64_t spin_ns[3];
  int fail_on_caller[3]; /* nonzero: the caller's launch of candidate i fails with this code */
  unsigned sleep_us;     /* per run on the worker */
  pthread_t caller;
  atomic_int *gate;  /* nonzero: the worker's runs may proceed */
  atomic_int *calls; /* [3][2]: per candidate, runs on the caller's thread / elsewhere */
} bg_args;

static cubert_status bg_candidate(cubert_client *c, const bg_args *a, int i) {
  const int on_caller = pthread_equal(pthread_self(), a->caller);
  atomic_fetch_add(&a->calls[i * 2 + !on_caller], 1);
  if (on_caller && a->fail_on_caller[i])
    return cubert_status_make((cubert_code)a->fail_on_caller[i], "candidate %d fails", i);
  if (!on_caller) {
    while (!atomic_load(a->gate)) usleep(1000);
    if (a->sleep_us) usleep(a->sleep_us);
    CUBERT_RETURN_IF_ERROR(fill_u32(c, a->canary, BG_N, 0xdead));
  }
  uint64_t end = cubert_now_ns() + a->spin_ns[i] * SPIN_SCALE;
  while (cubert_now_ns() < end) {
  }
  uint64_t n = a->spin_ns[i] / 2 < BG_WORK ? a->spin_ns[i] / 2 : BG_WORK;
  if (n) CUBERT_RETURN_IF_ERROR(fill_u32(c, a->work, n, 7));
  return fill_u32(c, a->out, BG_N, 100u + (uint64_t)i);
}
static cubert_status bg0(cubert_client *c, const void *a) {
  return bg_candidate(c, a, 0);
}
static cubert_status bg1(cubert_client *c, const void *a) {
  return bg_candidate(c, a, 1);
}
static cubert_status bg2(cubert_client *c, const void *a) {
  return bg_candidate(c, a, 2);
}
static const cubert_tune_candidate bg_candidates[] = {
    {"bg0", bg0, NULL, 0}, {"bg1", bg1, NULL, 0}, {"bg2", bg2, NULL, 0}};
static const cubert_tune_set bg_set = {"test.background", bg_candidates, 3, 0, NULL};

static uint32_t known_bg2(const cubert_client *client, const cubert_tune_set *set,
                          const uint8_t *eligible) {
  (void)client, (void)set;
  return eligible[2] ? 2 : UINT32_MAX;
}

static atomic_int bg_gate, bg_calls[6];

/* Fresh counters, an open or closed gate, and the buffers (out and canary hold BG_CANARY). */
static bg_args bg_attach(cubert_client *client, int gate_open) {
  atomic_store(&bg_gate, gate_open);
  for (int i = 0; i < 6; ++i) atomic_store(&bg_calls[i], 0);
  bg_args a = {.spin_ns = {6000000, 500000, 3000000},
               .caller = pthread_self(),
               .gate = &bg_gate,
               .calls = bg_calls};
  uint32_t fill[BG_N];
  for (int i = 0; i < BG_N; ++i) fill[i] = BG_CANARY;
  expect_ok(cubert_client_create_buffer(client, fill, sizeof fill, &a.out));
  expect_ok(cubert_client_create_buffer(client, fill, sizeof fill, &a.canary));
  expect_ok(cubert_client_empty(client, BG_WORK * 4u, &a.work));
  return a;
}
static void bg_detach(bg_args *a) {
  cubert_handle_release(a->out);
  cubert_handle_release(a->canary);
  cubert_handle_release(a->work);
}

static cubert_status bg_execute(cubert_client *client, const cubert_tune_key *key,
                                const bg_args *a) {
  const cubert_tune_call call = {.known_good = known_bg2, .args_bytes = sizeof(*a)};
  return cubert_tune_execute_call(client, &bg_set, key, a, &call);
}

/* Every element of `h` (BG_N u32) is `want`. */
static void expect_all_u32(cubert_client *client, cubert_handle *h, uint32_t want,
                           const char *what) {
  uint32_t v[BG_N];
  expect_ok(cubert_client_read(client, h, v, sizeof v));
  for (int i = 0; i < BG_N; ++i)
    cr_assert_eq(v[i], want, "%s: element %d is 0x%x, expected 0x%x", what, i, v[i], want);
}

static cubert_tune_lookup_result lookup_of(cubert_client *client, const cubert_tune_key *key,
                                           uint32_t *winner) {
  cubert_tune_lookup_result r;
  expect_ok(cubert_tune_lookup(client, &bg_set, key, &r, winner));
  return r;
}

/* The first call of a new key returns at once with the provisional (known-good) candidate's
   result while the worker is still blocked measuring; after cubert_tune_wait the winner is in
   memory and on disk and later calls run it; the caller's buffers never see a measured run. */
Test(tune, background_first_call_runs_the_known_good_and_the_winner_follows) {
  background = "on";
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    bg_args a = bg_attach(client, 0);
    cubert_tune_key key = key1(5000 + d);
    expect_ok(bg_execute(client, &key, &a));
    expect_all_u32(client, a.out, 102, "the first call's result (known-good bg2)");
    uint32_t winner = 0;
    cr_expect_eq(lookup_of(client, &key, &winner), CUBERT_TUNE_PENDING, "%s", selectors[d]);
    cr_expect_eq(stats_of(client).background_tunings, 0, "%s: tuning ended early", selectors[d]);
    /* While it is measured, calls run the provisional candidate on the caller's thread. */
    expect_ok(bg_execute(client, &key, &a));
    cr_expect_eq(atomic_load(&bg_calls[2 * 2]), 2, "%s", selectors[d]);
    atomic_store(&bg_gate, 1);
    expect_ok(cubert_tune_wait(client));
    cubert_tune_stats st = stats_of(client);
    cr_expect_eq(st.background_tunings, 1, "%s", selectors[d]);
    cr_expect_eq(st.candidates_failed, 0, "%s", selectors[d]);
    cr_expect_eq(lookup_of(client, &key, &winner), CUBERT_TUNE_HIT, "%s", selectors[d]);
    cr_expect_eq(winner, 1, "%s: the fastest candidate wins", selectors[d]);
    for (int i = 0; i < 3; ++i)
      cr_expect_geq(atomic_load(&bg_calls[i * 2 + 1]), 2, "%s: bg%d was measured off the caller",
                    selectors[d], i);
    cr_expect_eq(atomic_load(&bg_calls[0]) + atomic_load(&bg_calls[2]), 0,
                 "%s: no measurement on the caller's thread", selectors[d]);
    /* The measured runs wrote scratch copies only: the caller's canary is intact and out still
       holds the provisional candidate's result. */
    expect_all_u32(client, a.canary, BG_CANARY, "the caller's canary after background tuning");
    expect_all_u32(client, a.out, 102, "out after background tuning");
    /* Persisted: the disk file names the winner. */
    size_t records = 0;
    expect_ok(cubert_tune_cache_foreach(client, NULL, NULL, &records));
    cr_expect_eq(records, 1, "%s: the winner is on disk", selectors[d]);
    expect_ok(bg_execute(client, &key, &a));
    cr_expect_eq(atomic_load(&bg_calls[1 * 2]), 1, "%s: the winner ran for the caller",
                 selectors[d]);
    expect_all_u32(client, a.out, 101, "the winner's result");
    bg_detach(&a);
    cubert_client_release(client);
  }
  background = "off";
}

/* The caller's errors stay the caller's: a provisional candidate that fails returns its status
   from the call (nothing is queued or cached), and an earlier asynchronous error of the caller's
   stream reaches its next sync, with no candidate blamed for it. */
Test(tune, background_tuning_leaves_the_callers_errors_on_its_stream) {
  background = "on";
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    bg_args a = bg_attach(client, 1);
    a.fail_on_caller[2] = CUBERT_CODE_TOO_MANY_RESOURCES;
    cubert_tune_key key = key1(6000 + d);
    cubert_status s = bg_execute(client, &key, &a);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES, "%s: %s", selectors[d],
                 cubert_status_message(s));
    cubert_status_free(s);
    expect_ok(cubert_tune_wait(client));
    cr_expect_eq(lookup_of(client, &key, NULL), CUBERT_TUNE_MISS, "%s", selectors[d]);
    cr_expect_eq(stats_of(client).background_tunings, 0, "%s", selectors[d]);
    a.fail_on_caller[2] = 0;
    if (strcmp(selectors[d], "cpu") == 0) { /* the failing kernel has a CPU body only */
      expect_ok(cubert_client_launch(client, &failing_kernel, cubert_cube_count_new_3d(1, 1, 1),
                                     cubert_cube_dim_new_3d(1, 1, 1), NULL));
      expect_ok(bg_execute(client, &key, &a));
      s = cubert_client_sync(client);
      cr_assert_not_null(s, "the earlier kernel failure was lost");
      cr_expect(strstr(cubert_status_message(s), "4711"), "%s", cubert_status_message(s));
      cr_expect_eq(cubert_status_error_count(s), 1, "%s", cubert_status_message(s));
      cubert_status_free(s);
      expect_ok(cubert_client_sync(client)); /* reported once */
      expect_ok(cubert_tune_wait(client));
      cubert_tune_stats st = stats_of(client);
      cr_expect_eq(st.background_tunings, 1);
      cr_expect_eq(st.candidates_failed, 0, "a candidate was blamed for the caller's error");
    }
    bg_detach(&a);
    cubert_client_release(client);
  }
  background = "off";
}

/* Releasing the last client while the worker measures cancels it within one step: the release
   returns long before the measurement would have ended, and the key is neither remembered nor
   written to disk (the next process measures it again). */
Test(tune, releasing_the_client_during_background_tuning_cancels_it) {
  background = "on";
  env_setup(NULL);
  for (size_t d = 0; d < 2; ++d) {
    cubert_client *client = open_client(selectors[d]);
    if (!client) continue;
    bg_args a = bg_attach(client, 1);
    a.sleep_us = 300000; /* 3 candidates x up to 6 runs: >= 5 s to measure */
    cubert_tune_key key = key1(7000 + d);
    expect_ok(bg_execute(client, &key, &a));
    expect_all_u32(client, a.out, 102, "the first call's result");
    bg_detach(&a);
    usleep(100000); /* the worker is inside its first run */
    uint64_t start = cubert_now_ns();
    cubert_client_release(client);
    uint64_t took_ms = (cubert_now_ns() - start) / 1000000u;
    cr_expect_lt(took_ms, 2000, "%s: the release waited %llu ms for the measurement", selectors[d],
                 (unsigned long long)took_ms);
    cr_expect_lt(atomic_load(&bg_calls[1]) + atomic_load(&bg_calls[3]) + atomic_load(&bg_calls[5]),
                 6, "%s: the measurement ran on", selectors[d]);
    client = open_client(selectors[d]);
    cr_assert_not_null(client);
    cr_expect_eq(lookup_of(client, &key, NULL), CUBERT_TUNE_MISS,
                 "%s: a cancelled key stays "
                 "untuned",
                 selectors[d]);
    cubert_client_release(client);
  }
  background = "off";
}

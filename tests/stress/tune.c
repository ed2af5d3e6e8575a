/* cubert stress: many threads tune and run the same keys of one tunable set at once; every
   key is measured exactly once and every call succeeds. Plain C for ThreadSanitizer (the
   Criterion test tune::two_threads_tune_one_key_once checks the same with two threads).
   Usage: stress_tune <selector>. Exit 77 when the device does not exist here. */
#include <cubert/cubert.h>
#include <cubert/server.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 8, KEYS = 16, ROUNDS = 20 };

static cubert_client *client;
static atomic_int runs[3];

static cubert_status run(int i) {
  atomic_fetch_add(&runs[i], 1);
  return NULL;
}
static cubert_status c0(cubert_client *c, const void *a) {
  (void)c, (void)a;
  return run(0);
}
static cubert_status c1(cubert_client *c, const void *a) {
  (void)c, (void)a;
  return run(1);
}
/* Always fails: exercises the skip path from several threads. */
static cubert_status c2(cubert_client *c, const void *a) {
  (void)c, (void)a;
  atomic_fetch_add(&runs[2], 1);
  return cubert_status_make(CUBERT_CODE_COMPILATION, "never builds");
}

static const cubert_tune_candidate candidates[] = {
    {"c0", c0, NULL, 0}, {"c1", c1, NULL, 0}, {"c2", c2, NULL, 0}};
static const cubert_tune_set set = {"stress.tune", candidates, 3, 0, NULL};

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int r = 0; r < ROUNDS; ++r) {
    for (int k = 0; k < KEYS; ++k) {
      cubert_tune_key key = {0};
      cubert_tune_key_add(&key, (uint64_t)((k + t) % KEYS));
      ok(cubert_tune_execute(client, &set, &key, NULL), "execute");
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  char dir[] = "/tmp/cubert-stress-tune-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("CUBERT_CACHE_DIR", dir, 1);
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    printf("skipped: no device '%s': %s\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  cubert_tune_stats st = {0};
  s = cubert_tune_stats_get(client, &st);
  if (ok(s, "stats") && (st.tunings != KEYS || st.candidates_measured != 3 * KEYS))
    FAIL("%llu tunings, %llu candidates measured; expected %d and %d",
         (unsigned long long)st.tunings, (unsigned long long)st.candidates_measured, KEYS,
         3 * KEYS);
  /* c2 fails at its warm-up: one run per key, never again. */
  if (atomic_load(&runs[2]) != KEYS)
    FAIL("the failing candidate ran %d times, expected %d", atomic_load(&runs[2]), KEYS);
  cubert_client_release(client);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  int f = atomic_load(&failures);
  printf("%s: %d threads x %d keys x %d rounds, %llu tunings, %d failures\n", selector, THREADS,
         KEYS, ROUNDS, (unsigned long long)st.tunings, f);
  return f ? 1 : 0;
}

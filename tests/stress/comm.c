/* cubert stress: communicators under threads (the engine's worker/member threads and the
   servers' gates). Several threads, each on its own stream, queue collectives on one shared
   communicator with no syncs between write, collective and read, and check every result;
   another thread creates and releases small communicators with work still queued. Plain C,
   run by CTest for each backend and by CI under TSan (make test-tsan).
   Usage: stress_comm <selector> [rounds]. Exit 77 when the device does not exist here. */
#include <cubert/comm.h>
#include <cubert/cubert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { MEMBERS = 3, THREADS = 3, COUNT = 100003 }; /* 400 KB of i32: a team-split combine */

static cubert_client *clients[MEMBERS];
static cubert_comm *shared;
static int rounds = 30;

static void *collectives(void *arg) {
  int t = (int)(intptr_t)arg;
  int32_t *data = malloc(COUNT * sizeof *data), *got = malloc(COUNT * sizeof *got);
  cubert_handle *src[MEMBERS] = {0}, *dst[MEMBERS] = {0};
  for (int m = 0; m < MEMBERS; ++m) {
    ok(cubert_client_empty(clients[m], COUNT * 4, &src[m]), "empty");
    ok(cubert_client_empty(clients[m], COUNT * 4, &dst[m]), "empty");
  }
  for (int r = 0; r < rounds && !atomic_load(&failures); ++r) {
    for (int m = 0; m < MEMBERS; ++m) {
      for (int i = 0; i < COUNT; ++i) data[i] = t * 100000 + r * 100 + m + i;
      ok(cubert_client_write(clients[m], src[m], 0, data, COUNT * 4), "write");
    }
    int in_place = r % 3 == 2;
    cubert_handle **out = in_place ? src : dst;
    ok(cubert_comm_all_reduce(shared, src, out, COUNT, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM),
       "all_reduce");
    if (r % 2)
      ok(cubert_comm_broadcast(shared, out, COUNT, CUBERT_DTYPE_I32, (size_t)r % MEMBERS),
         "broadcast");
    for (int m = 0; m < MEMBERS; ++m) {
      if (!ok(cubert_client_read(clients[m], out[m], got, COUNT * 4), "read")) continue;
      for (int i = 0; i < COUNT; ++i) {
        int32_t want = 0;
        for (int k = 0; k < MEMBERS; ++k) want += t * 100000 + r * 100 + k + i;
        if (got[i] != want) {
          FAIL("thread %d round %d member %d element %d: %d, expected %d", t, r, m, i, got[i],
               want);
          break;
        }
      }
    }
  }
  for (int m = 0; m < MEMBERS; ++m) {
    cubert_handle_release(src[m]);
    cubert_handle_release(dst[m]);
  }
  free(data);
  free(got);
  return NULL;
}

/* Communicators made and released with collectives still queued; handles released at once. */
static void *churn(void *arg) {
  (void)arg;
  for (int r = 0; r < rounds && !atomic_load(&failures); ++r) {
    cubert_comm *comm = NULL;
    if (!ok(cubert_comm_create(clients, 1 + (size_t)r % MEMBERS, &comm), "comm_create")) break;
    size_t n = cubert_comm_local_count(comm);
    cubert_handle *buf[MEMBERS] = {0};
    for (size_t m = 0; m < n; ++m) {
      float v[64];
      for (int i = 0; i < 64; ++i) v[i] = (float)(m + 1);
      ok(cubert_client_create_buffer(clients[m], v, sizeof v, &buf[m]), "create");
    }
    ok(cubert_comm_all_reduce(comm, buf, buf, 64, CUBERT_DTYPE_F32, CUBERT_REDUCE_MAX),
       "all_reduce");
    cubert_handle *keep = cubert_handle_retain(buf[0]);
    for (size_t m = 0; m < n; ++m) cubert_handle_release(buf[m]);
    cubert_comm_release(comm);
    float got[64];
    if (ok(cubert_client_read(clients[0], keep, got, sizeof got), "read"))
      for (int i = 0; i < 64; ++i)
        if (got[i] != (float)n) {
          FAIL("churn round %d: %g, expected %zu", r, got[i], n);
          break;
        }
    cubert_handle_release(keep);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2) rounds = atoi(argv[2]);
  const char *selectors[MEMBERS] = {selector, "cpu", selector};
  for (int m = 0; m < MEMBERS; ++m) {
    cubert_status s = cubert_client_create(selectors[m], &clients[m]);
    if (s) {
      int skip = cubert_status_code(s) == CUBERT_CODE_UNAVAILABLE ||
                 cubert_status_code(s) == CUBERT_CODE_NOT_FOUND;
      fprintf(stderr, "%s: %s\n", skip ? "SKIP" : "FAIL", cubert_status_message(s));
      cubert_status_free(s);
      return skip ? 77 : 1;
    }
  }
  if (!ok(cubert_comm_create(clients, MEMBERS, &shared), "comm_create")) return 1;
  pthread_t threads[THREADS + 1];
  for (int t = 0; t < THREADS; ++t)
    pthread_create(&threads[t], NULL, collectives, (void *)(intptr_t)t);
  pthread_create(&threads[THREADS], NULL, churn, NULL);
  for (int t = 0; t <= THREADS; ++t) pthread_join(threads[t], NULL);
  cubert_comm_release(shared);
  for (int m = 0; m < MEMBERS; ++m) cubert_client_release(clients[m]);
  int f = atomic_load(&failures);
  printf("stress_comm on %s: %s\n", selector, f ? "FAILED" : "ok");
  return f ? 1 : 0;
}

/* cubert stress: collectives whose members' streams share a stream slot (issue 22, item 1).
   Stream ids map onto CUBERT_MAX_STREAMS slots (id % slots), and a slot serves one id at a
   time: taking it over syncs the other id's work under the device lock. A collective used to
   place its members' gates before queuing its job, so that sync waited for a gate that could
   never open, and the device was wedged:
     - pinned: one thread, a communicator over two (and three) views of one client pinned to
       stream ids 5, 133 and 261, which share slot 5 of the default 128 (and of 32 or 64, and slot 0
       of 1);
     - threads: several threads queue collectives on a communicator of two clients of one
       device while other threads write and read on the same device; under
       CUBERT_MAX_STREAMS=1 (the second CTest entry) every submit takes the one slot over.
   Every collective must complete with the right values. CTest runs this with a TIMEOUT, so a
   deadlock fails the test. Plain C (threads; also under TSan in make test-tsan).
   Usage: stress_comm_slots <selector> [rounds]. Exit 77 when the device does not exist here. */
#include <cubert/comm.h>
#include <cubert/cubert.h>
#include <cubert/stream.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { COUNT = 4099, THREADS = 3, CHURNERS = 2 };

static int rounds = 20;
static cubert_client *base;
static cubert_client *pair[2];
static cubert_comm *pair_comm;

/* all_reduce (SUM) then broadcast from the last member over `n` member clients; checks every
   member's dst. `salt` makes each round's values distinct. */
static void reduce_round(cubert_comm *comm, cubert_client *const *members, size_t n, int salt,
                         const char *label) {
  int32_t data[COUNT], got[COUNT];
  cubert_handle *src[3] = {0}, *dst[3] = {0};
  for (size_t m = 0; m < n; ++m) {
    for (int i = 0; i < COUNT; ++i) data[i] = salt * 1000 + (int32_t)m * 10 + i;
    ok(cubert_client_create_buffer(members[m], data, sizeof data, &src[m]), "create src");
    ok(cubert_client_empty(members[m], sizeof data, &dst[m]), "empty dst");
  }
  ok(cubert_comm_all_reduce(comm, src, dst, COUNT, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM),
     "all_reduce");
  for (size_t m = 0; m < n; ++m) {
    if (!ok(cubert_client_read(members[m], dst[m], got, sizeof got), "read")) continue;
    for (int i = 0; i < COUNT; ++i) {
      int32_t want = 0;
      for (size_t k = 0; k < n; ++k) want += salt * 1000 + (int32_t)k * 10 + i;
      if (got[i] != want) {
        FAIL("%s: round %d member %zu element %d: %d, expected %d", label, salt, m, i, got[i],
             want);
        break;
      }
    }
  }
  ok(cubert_comm_broadcast(comm, src, COUNT, CUBERT_DTYPE_I32, n - 1), "broadcast");
  for (size_t m = 0; m < n; ++m) {
    if (!ok(cubert_client_read(members[m], src[m], got, sizeof got), "read")) continue;
    for (int i = 0; i < COUNT; ++i)
      if (got[i] != salt * 1000 + (int32_t)(n - 1) * 10 + i) {
        FAIL("%s: broadcast round %d member %zu element %d: %d", label, salt, m, i, got[i]);
        break;
      }
  }
  for (size_t m = 0; m < n; ++m) {
    cubert_handle_release(src[m]);
    cubert_handle_release(dst[m]);
  }
}

/* One thread, members pinned to stream ids that share a slot. */
static void pinned(void) {
  const cubert_stream_id ids[3] = {5, 133, 261};
  cubert_client *views[3] = {0};
  for (int v = 0; v < 3; ++v)
    if (!ok(cubert_client_with_stream(base, ids[v], &views[v]), "with_stream")) return;
  for (size_t n = 2; n <= 3; ++n) {
    cubert_comm *comm = NULL;
    if (!ok(cubert_comm_create(views, n, &comm), "comm_create")) break;
    for (int r = 0; r < rounds && !atomic_load(&failures); ++r)
      reduce_round(comm, views, n, r, n == 2 ? "pinned 5,133" : "pinned 5,133,261");
    cubert_comm_release(comm);
  }
  for (int v = 0; v < 3; ++v) cubert_client_release(views[v]);
}

static void *collective_thread(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int r = 0; r < rounds && !atomic_load(&failures); ++r)
    reduce_round(pair_comm, pair, 2, t * 100 + r, "threads");
  return NULL;
}

/* Plain writes and reads on the device from threads of their own: each one's stream takes the
   slot over from the collectives' (every submit does, under CUBERT_MAX_STREAMS=1). */
static void *churn_thread(void *arg) {
  int t = (int)(intptr_t)arg;
  float v[256], got[256];
  for (int r = 0; r < rounds * 4 && !atomic_load(&failures); ++r) {
    for (int i = 0; i < 256; ++i) v[i] = (float)(t * 10000 + r * 256 + i);
    cubert_handle *h = NULL;
    if (!ok(cubert_client_create_buffer(pair[t % 2], v, sizeof v, &h), "churn create")) break;
    if (ok(cubert_client_read(pair[t % 2], h, got, sizeof got), "churn read"))
      for (int i = 0; i < 256; ++i)
        if (got[i] != v[i]) {
          FAIL("churn %d round %d element %d: %g, expected %g", t, r, i, got[i], v[i]);
          break;
        }
    cubert_handle_release(h);
  }
  return NULL;
}

static void threads(void) {
  if (!ok(cubert_comm_create(pair, 2, &pair_comm), "comm_create")) return;
  pthread_t th[THREADS + CHURNERS];
  for (int t = 0; t < THREADS; ++t)
    pthread_create(&th[t], NULL, collective_thread, (void *)(intptr_t)t);
  for (int t = 0; t < CHURNERS; ++t)
    pthread_create(&th[THREADS + t], NULL, churn_thread, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS + CHURNERS; ++t) pthread_join(th[t], NULL);
  cubert_comm_release(pair_comm);
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2) rounds = atoi(argv[2]);
  cubert_status s = cubert_client_create(selector, &base);
  if (!s) s = cubert_client_create(selector, &pair[0]);
  if (!s) s = cubert_client_create(selector, &pair[1]);
  if (s) {
    int skip = cubert_status_code(s) == CUBERT_CODE_UNAVAILABLE ||
               cubert_status_code(s) == CUBERT_CODE_NOT_FOUND;
    fprintf(stderr, "%s: %s\n", skip ? "SKIP" : "FAIL", cubert_status_message(s));
    cubert_status_free(s);
    return skip ? 77 : 1;
  }
  pinned();
  if (!atomic_load(&failures)) threads();
  cubert_client_release(pair[1]);
  cubert_client_release(pair[0]);
  cubert_client_release(base);
  int f = atomic_load(&failures);
  printf("stress_comm_slots on %s: %s\n", selector, f ? "FAILED" : "ok");
  return f ? 1 : 0;
}

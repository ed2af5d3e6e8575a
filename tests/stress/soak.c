/* cubert stress: the soak. Eight threads run a random mix of the surfaces for a fixed time:
   buffer round trips, kernel launches, asynchronous reads, collectives on a shared
   communicator (members on stream ids that share a slot too), autotuning of fresh and cached
   keys, and views pinned to random stream ids; every result is checked and every operation
   counted, so that nothing is lost, hangs or crashes under load. CI-sized by default (3 s);
   longer by hand: stress_soak <selector> [seconds]. Plain C (also under TSan in make
   test-tsan). Exit 77 when the device does not exist here. */
#include <cubert/comm.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <cubert/server.h>
#include <cubert/stream.h>
#include <cubert/tune.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "check.h"

enum { THREADS = 8, N = 1000, COMM_COUNT = 777 };

static cubert_client *client;
static cubert_client *members[2]; /* views pinned to 5 and 133: one slot of the default 128 */
static cubert_comm *comm;
static atomic_long operations;
static uint64_t deadline_ns;

static uint32_t next_random(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

/* a + a into a fresh buffer, read back. */
static void op_launch(cubert_client *c, int t, uint32_t r) {
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (float)(t * 1000 + (int)(r % 1000) + i % 13);
  cubert_handle *a = NULL, *o = NULL;
  if (!ok(cubert_client_create_buffer(c, in, sizeof in, &a), "create")) return;
  if (ok(cubert_client_empty(c, sizeof out, &o), "empty")) {
    cubert_handle *bufs[3] = {a, a, o};
    uint64_t info[1] = {N};
    cubert_kernel_args args = {bufs, 3, info, 1};
    if (ok(cubert_client_launch(c, &cubert_kernel_add_f32, cubert_cube_count_new_3d(4, 1, 1),
                                cubert_cube_dim_new_3d(250, 1, 1), &args),
           "launch") &&
        ok(cubert_client_read(c, o, out, sizeof out), "read"))
      for (int i = 0; i < N; ++i)
        if (out[i] != 2.0f * in[i]) {
          FAIL("launch: thread %d element %d: %g != %g", t, i, out[i], 2.0f * in[i]);
          break;
        }
  }
  cubert_handle_release(a);
  cubert_handle_release(o);
}

/* write, asynchronous read (the handle released before the wait). */
static void op_async_read(cubert_client *c, int t, uint32_t r) {
  uint32_t in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (uint32_t)t * 7919u + r + (uint32_t)i;
  cubert_handle *h = NULL;
  if (!ok(cubert_client_create_buffer(c, in, sizeof in, &h), "create")) return;
  cubert_future *f = NULL;
  int queued = ok(cubert_client_read_async(c, h, out, sizeof out, &f), "read_async");
  cubert_handle_release(h);
  if (!queued) return;
  if (ok(cubert_future_wait(f), "future_wait"))
    for (int i = 0; i < N; ++i)
      if (out[i] != in[i]) {
        FAIL("async read: thread %d element %d: %u != %u", t, i, out[i], in[i]);
        break;
      }
  cubert_future_release(f);
}

/* all_reduce over the two pinned views (sharing one slot). */
static void op_collective(int t, uint32_t r) {
  int32_t in[2][COMM_COUNT], out[COMM_COUNT];
  cubert_handle *src[2] = {0}, *dst[2] = {0};
  for (int m = 0; m < 2; ++m) {
    for (int i = 0; i < COMM_COUNT; ++i) in[m][i] = t * 100 + m + (int32_t)(r % 1000) + i;
    ok(cubert_client_create_buffer(members[m], in[m], sizeof in[m], &src[m]), "create");
    ok(cubert_client_empty(members[m], sizeof out, &dst[m]), "empty");
  }
  if (src[0] && src[1] && dst[0] && dst[1] &&
      ok(cubert_comm_all_reduce(comm, src, dst, COMM_COUNT, CUBERT_DTYPE_I32, CUBERT_REDUCE_SUM),
         "all_reduce"))
    for (int m = 0; m < 2; ++m)
      if (ok(cubert_client_read(members[m], dst[m], out, sizeof out), "read"))
        for (int i = 0; i < COMM_COUNT; ++i)
          if (out[i] != in[0][i] + in[1][i]) {
            FAIL("all_reduce: thread %d member %d element %d: %d != %d", t, m, i, out[i],
                 in[0][i] + in[1][i]);
            break;
          }
  for (int m = 0; m < 2; ++m) {
    cubert_handle_release(src[m]);
    cubert_handle_release(dst[m]);
  }
}

static atomic_long tuned_runs;
static cubert_status cand(cubert_client *c, const void *a) {
  (void)c, (void)a;
  atomic_fetch_add(&tuned_runs, 1);
  return NULL;
}
static const cubert_tune_candidate cands[] = {{"a", cand, NULL, 0}, {"b", cand, NULL, 0}};
static const cubert_tune_set soak_set = {"stress.soak", cands, 2, 0, NULL};

/* a fresh or cached key (64 keys over the run). */
static void op_tune(cubert_client *c, uint32_t r) {
  cubert_tune_key key = {0};
  if (!ok(cubert_tune_key_add(&key, r % 64), "key_add")) return;
  ok(cubert_tune_execute(c, &soak_set, &key, NULL), "tune_execute");
}

static void *soak(void *arg) {
  int t = (int)(intptr_t)arg;
  uint32_t state = 2463534242u + (uint32_t)t * 747796405u;
  while (cubert_now_ns() < deadline_ns && !atomic_load(&failures)) {
    uint32_t r = next_random(&state);
    cubert_client *view = client;
    int pinned = (r >> 8) % 4 == 0;
    if (pinned && !ok(cubert_client_with_stream(client, (r >> 12) % 270, &view), "with_stream"))
      break;
    switch (r % 5) {
      case 0:
      case 1:
        op_launch(view, t, r);
        break;
      case 2:
        op_async_read(view, t, r);
        break;
      case 3:
        op_collective(t, r);
        break;
      default:
        op_tune(view, r >> 4);
        break;
    }
    if (pinned) {
      ok(cubert_client_sync(view), "sync");
      cubert_client_release(view);
    }
    atomic_fetch_add(&operations, 1);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  double seconds = argc > 2 ? atof(argv[2]) : 3.0;
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    int skip = cubert_status_code(s) == CUBERT_CODE_UNAVAILABLE ||
               cubert_status_code(s) == CUBERT_CODE_NOT_FOUND;
    fprintf(stderr, "%s: %s\n", skip ? "SKIP" : "FAIL", cubert_status_message(s));
    cubert_status_free(s);
    return skip ? 77 : 1;
  }
  if (!ok(cubert_client_with_stream(client, 5, &members[0]), "with_stream") ||
      !ok(cubert_client_with_stream(client, 133, &members[1]), "with_stream") ||
      !ok(cubert_comm_create(members, 2, &comm), "comm_create"))
    return 1;
  deadline_ns = cubert_now_ns() + (uint64_t)(seconds * 1e9);
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, soak, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  cubert_comm_release(comm);
  cubert_client_release(members[0]);
  cubert_client_release(members[1]);
  ok(cubert_client_sync_all(client), "sync_all");
  cubert_client_release(client);
  int f = atomic_load(&failures);
  printf("stress_soak on %s: %ld operations in %.1f s: %s\n", selector,
         (long)atomic_load(&operations), seconds, f ? "FAILED" : "ok");
  if (!f && atomic_load(&operations) < THREADS) {
    fprintf(stderr, "FAIL: the soak ran fewer operations than threads\n");
    return 1;
  }
  return f ? 1 : 0;
}

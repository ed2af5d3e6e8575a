/* cubert stress: asynchronous reads racing with launches. Threads (each its own stream) launch,
   queue reads of one and several handles without waiting, queue more launches that overwrite
   the inputs, release the handles before the reads completed, and poll or wait; a second phase
   reads asynchronously on one stream what another stream's launches write. On the CPU server
   the copies run on worker threads, so this is where TSan sees them race with launches,
   releases and polls. Plain C for TSan. Usage: stress_async_read <selector> [rounds-scale].
   Exit 77 when the device does not exist here. */
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cubert_client *client;
static int rounds = 200;

enum { N = 1024, THREADS = 8 };

static cubert_status add(cubert_client *c, cubert_handle *a, cubert_handle *o) {
  cubert_handle *bufs[3] = {a, a, o};
  uint64_t info[1] = {N};
  cubert_kernel_args args = {bufs, 3, info, 1};
  return cubert_client_launch(c, &cubert_kernel_add_f32, cubert_cube_count_new_3d(4, 1, 1),
                              cubert_cube_dim_new_3d(N / 4, 1, 1), &args);
}

static cubert_status fill(cubert_client *c, cubert_handle *h, uint32_t value) {
  uint64_t info[2] = {N, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(N / 64, 1, 1),
                              cubert_cube_dim_new_3d(64, 1, 1), &args);
}

static void check(const float *got, const float *in, float scale, int t, int r, const char *what) {
  for (int i = 0; i < N; ++i)
    if (got[i] != scale * in[i]) {
      FAIL("thread %d round %d %s element %d: %g != %g", t, r, what, i, got[i], scale * in[i]);
      return;
    }
}

/* Phase 1: one stream per thread. */
static void *phase1(void *arg) {
  int t = (int)(intptr_t)arg;
  float in[N], one[N], many_a[N], many_o[N];
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < N; ++i) in[i] = (float)(t * 100 + r + i % 13);
    cubert_handle *a = NULL, *o = NULL;
    if (!ok(cubert_client_create_buffer(client, in, sizeof in, &a), "create")) continue;
    if (!ok(cubert_client_empty(client, sizeof in, &o), "empty")) {
      cubert_handle_release(a);
      continue;
    }
    cubert_future *f1 = NULL, *f2 = NULL;
    ok(add(client, a, o), "add");
    ok(cubert_client_read_async(client, o, one, sizeof one, &f1), "read_async");
    cubert_handle *hs[2] = {a, o};
    void *dsts[2] = {many_a, many_o};
    size_t sizes[2] = {sizeof many_a, sizeof many_o};
    ok(cubert_client_read_many_async(client, 2, hs, dsts, sizes, &f2), "read_many_async");
    /* Queued behind the reads: must not change what they return. */
    ok(fill(client, a, 0), "fill");
    ok(fill(client, o, 0), "fill");
    cubert_handle_release(a);
    cubert_handle_release(o);
    if (r % 2) {
      int ready = 0;
      while (f1 && !ready) ok(cubert_future_poll(f1, &ready), "poll");
    }
    if (f1 && ok(cubert_future_wait(f1), "wait")) check(one, in, 2.0f, t, r, "read_async");
    if (f2 && ok(cubert_future_wait(f2), "wait many")) {
      check(many_a, in, 1.0f, t, r, "read_many a");
      check(many_o, in, 2.0f, t, r, "read_many o");
    }
    cubert_future_release(f1);
    cubert_future_release(f2);
  }
  return NULL;
}

/* Phase 2: thread 2k writes on its stream, thread 2k+1 reads asynchronously on its own. */
static cubert_handle *shared[THREADS / 2];
static pthread_barrier_t barrier;

static void *phase2(void *arg) {
  int t = (int)(intptr_t)arg, pair = t / 2;
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (float)(pair + i % 5);
  for (int r = 0; r < rounds / 4; ++r) {
    if (t % 2 == 0) {
      cubert_handle *a = NULL;
      if (ok(cubert_client_create_buffer(client, in, sizeof in, &a), "create")) {
        ok(cubert_client_empty(client, sizeof in, &shared[pair]), "empty");
        if (shared[pair]) ok(add(client, a, shared[pair]), "add");
        cubert_handle_release(a);
      }
    }
    pthread_barrier_wait(&barrier);
    if (t % 2 == 1 && shared[pair]) {
      cubert_future *f = NULL;
      if (ok(cubert_client_read_async(client, shared[pair], out, sizeof out, &f), "read_async") &&
          ok(cubert_future_wait(f), "wait"))
        check(out, in, 2.0f, t, r, "cross-stream read_async");
      cubert_future_release(f);
    }
    pthread_barrier_wait(&barrier);
    if (t % 2 == 0) {
      cubert_handle_release(shared[pair]);
      shared[pair] = NULL;
    }
  }
  return NULL;
}

static void run(void *(*fn)(void *)) {
  pthread_t tid[THREADS];
  for (int t = 0; t < THREADS; ++t) pthread_create(&tid[t], NULL, fn, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(tid[t], NULL);
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2 && atoi(argv[2]) > 0) rounds = 200 / atoi(argv[2]);
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    printf("SKIP: stress on \"%s\": %s\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("stress (async reads) on %s\n", cubert_client_properties(client)->name);
  run(phase1);
  printf("phase 1: %d threads x %d launch/read_async/read_many_async rounds: %s\n", THREADS, rounds,
         atomic_load(&failures) ? "FAILED" : "ok");
  pthread_barrier_init(&barrier, NULL, THREADS);
  run(phase2);
  pthread_barrier_destroy(&barrier);
  printf("phase 2: %d stream pairs x %d cross-stream read_async rounds: %s\n", THREADS / 2,
         rounds / 4, atomic_load(&failures) ? "FAILED" : "ok");
  ok(cubert_client_sync_all(client), "sync_all");
  cubert_client_release(client);
  int failed = atomic_load(&failures);
  printf("stress: %s (%d failure%s)\n", failed ? "FAILED" : "ok", failed, failed == 1 ? "" : "s");
  return failed ? 1 : 0;
}

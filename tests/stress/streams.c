/* cubert stress: many threads and streams on one client, results checked, nothing lost.
   Plain C (Criterion does not run under ThreadSanitizer); run by CTest for each backend and by
   CI under TSan. Usage: stress_streams <selector> [rounds-scale]. Exit 77 when the device does
   not exist here. */
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static cubert_client *client;
static int rounds_1 = 500, rounds_2 = 100;

enum { N1 = 1000 };

/* Phase 1: every thread (its own stream) creates, launches, reads and checks. */
static void *phase1(void *arg) {
  int t = (int)(intptr_t)arg;
  float in[N1], out[N1];
  for (int r = 0; r < rounds_1; ++r) {
    for (int i = 0; i < N1; ++i) in[i] = (float)(t * 1000 + r + i % 7);
    cubert_handle *a = NULL, *o = NULL;
    if (!ok(cubert_client_create_buffer(client, in, sizeof in, &a), "create")) continue;
    if (!ok(cubert_client_empty(client, sizeof out, &o), "empty")) {
      cubert_handle_release(a);
      continue;
    }
    cubert_handle *bufs[3] = {a, a, o};
    uint64_t info[1] = {N1};
    cubert_kernel_args args = {bufs, 3, info, 1};
    if (ok(cubert_client_launch(client, &cubert_kernel_add_f32, cubert_cube_count_new_3d(4, 1, 1),
                                cubert_cube_dim_new_3d(250, 1, 1), &args),
           "launch") &&
        ok(cubert_client_read(client, o, out, sizeof out), "read")) {
      for (int i = 0; i < N1; ++i)
        if (out[i] != 2.0f * in[i]) {
          FAIL("thread %d round %d element %d: %g != %g", t, r, i, out[i], 2.0f * in[i]);
          break;
        }
    }
    cubert_handle_release(a);
    cubert_handle_release(o);
  }
  return NULL;
}

/* Phase 2: 64 streams in 32 producer/consumer pairs, 8 threads, each thread driving 4 pairs.
   The producer fills on its stream; the consumer adds on another stream and reads, with no
   synchronisation by the user in between. */
enum { PAIRS = 32, THREADS2 = 8, N2 = 4096 };

static void *phase2(void *arg) {
  int t = (int)(intptr_t)arg;
  cubert_client *prod[PAIRS / THREADS2], *cons[PAIRS / THREADS2];
  for (int k = 0; k < PAIRS / THREADS2; ++k) {
    int pair = t * (PAIRS / THREADS2) + k;
    if (!ok(cubert_client_with_stream(client, 2 * pair, &prod[k]), "with_stream") ||
        !ok(cubert_client_with_stream(client, 2 * pair + 1, &cons[k]), "with_stream"))
      return NULL;
  }
  uint32_t *out = malloc(N2 * 4);
  for (int r = 0; r < rounds_2; ++r) {
    for (int k = 0; k < PAIRS / THREADS2; ++k) {
      uint32_t value = (uint32_t)(t * 100000 + k * 1000 + r);
      cubert_handle *a = NULL, *o = NULL;
      if (!ok(cubert_client_empty(prod[k], N2 * 4, &a), "empty")) continue;
      uint64_t finfo[2] = {N2, value};
      cubert_kernel_args fargs = {&a, 1, finfo, 2};
      ok(cubert_client_launch(prod[k], &cubert_kernel_fill_u32, cubert_cube_count_new_3d(16, 1, 1),
                              cubert_cube_dim_new_3d(256, 1, 1), &fargs),
         "fill");
      if (ok(cubert_client_empty(cons[k], N2 * 4, &o), "empty")) {
        cubert_handle *bufs[3] = {a, a, o};
        uint64_t info[1] = {N2};
        cubert_kernel_args args = {bufs, 3, info, 1};
        if (ok(cubert_client_launch(cons[k], &cubert_kernel_add_i32,
                                    cubert_cube_count_new_3d(16, 1, 1),
                                    cubert_cube_dim_new_3d(256, 1, 1), &args),
               "add") &&
            ok(cubert_client_read(cons[k], o, out, N2 * 4), "read")) {
          for (int i = 0; i < N2; ++i)
            if (out[i] != 2 * value) {
              FAIL("pair %d round %d element %d: %u != %u", t * 4 + k, r, i, out[i], 2 * value);
              break;
            }
        }
        cubert_handle_release(o);
      }
      cubert_handle_release(a);
    }
  }
  free(out);
  for (int k = 0; k < PAIRS / THREADS2; ++k) {
    cubert_client_release(prod[k]);
    cubert_client_release(cons[k]);
  }
  return NULL;
}

static int run(void *(*fn)(void *), int threads) {
  pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
  for (int t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, fn, (void *)(intptr_t)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  free(tid);
  return atomic_load(&failures) == 0;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2) {
    int scale = atoi(argv[2]);
    if (scale > 0) {
      rounds_1 = 500 / scale;
      rounds_2 = 100 / scale;
    }
  }
  setenv("CUBERT_MAX_STREAMS", "128", 0); /* 64 distinct streams plus the phase-1 threads */
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    printf("SKIP: stress on \"%s\": %s\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("stress on %s\n", cubert_client_properties(client)->name);
  int good = run(phase1, 16);
  printf("phase 1: 16 threads x %d create/launch/read rounds: %s\n", rounds_1,
         good ? "ok" : "FAILED");
  good = run(phase2, THREADS2) && good;
  printf("phase 2: %d streams x %d producer/consumer rounds: %s\n", 2 * PAIRS, rounds_2,
         good ? "ok" : "FAILED");
  ok(cubert_client_sync_all(client), "sync_all");
  ok(cubert_client_memory_cleanup(client), "cleanup");
  cubert_memory_usage u;
  if (ok(cubert_client_memory_usage(client, &u), "usage") &&
      (u.number_allocs || u.bytes_in_use || u.bytes_reserved))
    FAIL("memory not back to baseline: %llu allocs, %llu bytes in use, %llu reserved",
         (unsigned long long)u.number_allocs, (unsigned long long)u.bytes_in_use,
         (unsigned long long)u.bytes_reserved);
  cubert_client_release(client);
  int failed = atomic_load(&failures);
  printf("stress: %s (%d failure%s)\n", failed ? "FAILED" : "ok", failed, failed == 1 ? "" : "s");
  return failed ? 1 : 0;
}

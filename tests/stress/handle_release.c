/* cubert stress: handles released on one thread while other threads launch with, read,
   view and query them (issue 10, item 7). Every call on a handle another thread may have
   released must either use it validly or fail with NOT_FOUND: never crash, hang, read
   another buffer or race (CI runs this under TSan). Also releases clients while other threads
   use them. Usage: stress_handle_release <selector> [rounds]. Exit 77 when the device does not
   exist here. */
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { SLOTS = 8, LAUNCHERS = 3, N = 256 };

static cubert_client *client;
static _Atomic(cubert_handle *) slots[SLOTS];
static atomic_int stop, valid_uses, not_found_uses;
static int rounds = 4000;

/* OK or NOT_FOUND are both correct for a handle that may have been released. */
static void expect_valid_or_not_found(cubert_status s, const char *what) {
  if (!s) {
    atomic_fetch_add(&valid_uses, 1);
    return;
  }
  if (cubert_status_code(s) == CUBERT_CODE_NOT_FOUND)
    atomic_fetch_add(&not_found_uses, 1);
  else
    FAIL("%s: %s", what, cubert_status_message(s));
  cubert_status_free(s);
}

static cubert_handle *make(uint32_t value) {
  uint32_t v[N];
  for (int i = 0; i < N; ++i) v[i] = value;
  cubert_handle *h = NULL;
  cubert_status s = cubert_client_create_buffer(client, v, sizeof v, &h);
  if (s) {
    FAIL("create: %s", cubert_status_message(s));
    cubert_status_free(s);
  }
  return h;
}

/* Replaces handles and releases the old ones, racing with the users. */
static void *releaser(void *arg) {
  (void)arg;
  for (int r = 0; r < rounds; ++r) {
    cubert_handle *fresh = make(7);
    cubert_handle *old = atomic_exchange(&slots[r % SLOTS], fresh);
    if (r % 2) sched_yield(); /* let a user load `old` before it goes */
    cubert_handle_release(old);
  }
  atomic_store(&stop, 1);
  return NULL;
}

static void *user(void *arg) {
  int t = (int)(intptr_t)arg;
  uint32_t got[N];
  for (unsigned r = 0; !atomic_load(&stop); ++r) {
    cubert_handle *h = atomic_load(&slots[(r + (unsigned)t) % SLOTS]);
    switch (r % 4) {
      case 0: {
        uint64_t info[2] = {N, 7}; /* the value every buffer holds anyway */
        cubert_kernel_args args = {&h, 1, info, 2};
        expect_valid_or_not_found(
            cubert_client_launch(client, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(N, 1, 1), &args),
            "launch");
        break;
      }
      case 1: {
        for (int i = 0; i < N; ++i) got[i] = 0;
        cubert_status s = cubert_client_read(client, h, got, sizeof got);
        if (!s)
          for (int i = 0; i < N; ++i)
            if (got[i] != 7) {
              FAIL("read element %d = %u: another buffer's data", i, got[i]);
              break;
            }
        expect_valid_or_not_found(s, "read");
        break;
      }
      case 2: {
        cubert_handle *view = NULL;
        expect_valid_or_not_found(cubert_handle_view(h, 4, 8, &view), "view");
        cubert_handle_release(view);
        break;
      }
      default:
        (void)cubert_handle_can_mut(h);
        (void)cubert_handle_size(h);
        break;
    }
  }
  return NULL;
}

/* Clients released while another thread still uses the token: valid or NOT_FOUND. */
static _Atomic(cubert_client *) shared_view;

static void *view_user(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    cubert_client *c = atomic_load(&shared_view);
    cubert_handle *h = NULL;
    expect_valid_or_not_found(cubert_client_empty(c, 64, &h), "empty on a released client");
    cubert_handle_release(h);
  }
  return NULL;
}

static void *view_releaser(void *arg) {
  (void)arg;
  for (int r = 0; r < rounds / 4 && !atomic_load(&stop); ++r) {
    cubert_client *fresh = NULL;
    cubert_status s = cubert_client_with_stream(client, 1000 + (cubert_stream_id)r % 4, &fresh);
    if (s) {
      FAIL("with_stream: %s", cubert_status_message(s));
      cubert_status_free(s);
      break;
    }
    cubert_client_release(atomic_exchange(&shared_view, fresh));
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2 && atoi(argv[2]) > 0) rounds = atoi(argv[2]);
  cubert_status s = cubert_client_create(selector, &client);
  if (s) {
    printf("SKIP: stress on \"%s\": %s\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  for (int i = 0; i < SLOTS; ++i) atomic_store(&slots[i], make(7));
  cubert_client *first = NULL;
  s = cubert_client_with_stream(client, 999, &first);
  if (s) return 1;
  atomic_store(&shared_view, first);
  pthread_t tid[LAUNCHERS + 3];
  pthread_create(&tid[0], NULL, releaser, NULL);
  for (int t = 0; t < LAUNCHERS; ++t) pthread_create(&tid[1 + t], NULL, user, (void *)(intptr_t)t);
  pthread_create(&tid[1 + LAUNCHERS], NULL, view_user, NULL);
  pthread_create(&tid[2 + LAUNCHERS], NULL, view_releaser, NULL);
  for (int t = 0; t < LAUNCHERS + 3; ++t) pthread_join(tid[t], NULL);
  cubert_client_release(atomic_load(&shared_view));
  for (int i = 0; i < SLOTS; ++i) cubert_handle_release(atomic_load(&slots[i]));
  s = cubert_client_sync_all(client);
  if (s) {
    FAIL("sync_all: %s", cubert_status_message(s));
    cubert_status_free(s);
  }
  cubert_memory_usage u;
  s = cubert_client_memory_usage(client, &u);
  if (!s && u.number_allocs) FAIL("%llu allocations left", (unsigned long long)u.number_allocs);
  cubert_status_free(s);
  cubert_client_release(client);
  int failed = atomic_load(&failures);
  printf("handle_release on %s: %d valid uses, %d NOT_FOUND, %d failures\n", selector,
         atomic_load(&valid_uses), atomic_load(&not_found_uses), failed);
  if (atomic_load(&not_found_uses) == 0 || atomic_load(&valid_uses) == 0)
    printf("note: the race did not hit both outcomes this run\n");
  return failed ? 1 : 0;
}

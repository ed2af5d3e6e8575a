/* cubert stress: one device instance per device (issue 14). Threads create and release clients
   of one device over and over, so the instance's last reference goes while other threads look
   it up (the lookup/last-release race of lib/device_registry.c); each thread hands a buffer to
   the next one through a shared slot, and the receiver reads it with its own client (a handle
   is valid on every client of its device and keeps the instance alive) and copies it to a
   private instance with cubert_client_to_client. Every read must give the sender's value; no
   crash, hang or race (CI runs the stress programs under TSan).
   Usage: stress_shared_devices <selector> [rounds]. Exit 77 when the device does not exist. */
#include <cubert/cubert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { THREADS = 4, N = 64 };

static const char *selector;
static char private_selector[128];
static int rounds = 60;
typedef struct mail {
  cubert_handle *h;
  uint32_t value;
} mail;
static _Atomic(mail *) mailbox[THREADS];

static void mail_free(mail *m) {
  if (!m) return;
  cubert_handle_release(m->h);
  free(m);
}

static void check(cubert_client *c, cubert_handle *h, uint32_t expected, const char *what) {
  uint32_t back[N];
  if (!ok(cubert_client_read(c, h, back, sizeof back), what)) return;
  for (int i = 0; i < N; ++i)
    if (back[i] != expected) {
      FAIL("%s: element %d is %u, expected %u", what, i, back[i], expected);
      return;
    }
}

static void *worker(void *arg) {
  int me = (int)(intptr_t)arg;
  for (int r = 0; r < rounds && !atomic_load(&failures); ++r) {
    cubert_client *c = NULL;
    if (!ok(cubert_client_create(selector, &c), "create")) break;
    uint32_t value = (uint32_t)(me * 100000 + r), v[N];
    for (int i = 0; i < N; ++i) v[i] = value;
    cubert_handle *h = NULL;
    if (ok(cubert_client_create_buffer(c, v, sizeof v, &h), "create_buffer")) {
      /* Post ours; take what the previous thread posted. */
      int from = (me + THREADS - 1) % THREADS;
      mail *m = atomic_exchange(&mailbox[from], NULL);
      mail *post = malloc(sizeof *post);
      post->h = h;
      post->value = value;
      mail_free(atomic_exchange(&mailbox[me], post)); /* never taken: ours to drop */
      if (m) {
        cubert_handle *got = m->h;
        uint32_t got_value = m->value;
        check(c, got, got_value, "read of another thread's handle");
        if (r % 4 == 0) {
          cubert_client *p = NULL;
          cubert_handle *copy = NULL;
          if (ok(cubert_client_create(private_selector, &p), "create private") &&
              ok(cubert_client_to_client(c, got, p, &copy), "to_client")) {
            check(p, copy, got_value, "read of the copy");
            cubert_handle_release(copy);
          }
          cubert_client_release(p);
        }
        mail_free(m);
      }
    }
    /* Often the last client of the device: the next create races with its destruction. */
    cubert_client_release(c);
  }
  return NULL;
}

int main(int argc, char **argv) {
  selector = argc > 1 ? argv[1] : "cpu";
  if (argc > 2) rounds = atoi(argv[2]);
  snprintf(private_selector, sizeof private_selector, "%s!private", selector);
  cubert_client *probe = NULL;
  cubert_status s = cubert_client_create(selector, &probe);
  if (s) {
    printf("SKIP: stress on \"%s\": %s\n", selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("stress (shared device instances) on %s\n", cubert_client_properties(probe)->name);
  cubert_client_release(probe);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; ++i) mail_free(atomic_exchange(&mailbox[i], NULL));
  int f = atomic_load(&failures);
  printf("%s: %d rounds x %d threads\n", f ? "FAILED" : "passed", rounds, THREADS);
  return f ? 1 : 0;
}

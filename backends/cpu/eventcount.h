/* cubert CPU server — an event count: lets a thread that found nothing to do sleep without missing
   the notification that would have given it something (internal).

   Protocol (every operation is sequentially consistent):
     waiter:   key = prepare(ec); if (condition) cancel(ec); else wait(ec, key);
     notifier: make the condition true; notify(ec, n);
   notify costs one load when nobody sleeps, so the hot paths call it unconditionally. Linux uses a
   futex on `epoch`; other systems a mutex and a condition variable. */
#ifndef CUBERT_CPU_EVENTCOUNT_H
#define CUBERT_CPU_EVENTCOUNT_H

#include <stdatomic.h>
#include <stdint.h>

#ifndef __linux__
#include <pthread.h>
#endif

typedef struct cubert_cpu_eventcount {
  _Atomic uint32_t epoch;   /* bumped by notify when someone waits */
  _Atomic uint32_t waiters; /* threads between prepare and the end of wait/cancel */
#ifndef __linux__
  pthread_mutex_t mu;
  pthread_cond_t cv;
#endif
} cubert_cpu_eventcount;

void cubert_cpu_ec_init(cubert_cpu_eventcount *ec);
void cubert_cpu_ec_destroy(cubert_cpu_eventcount *ec);
/* Announces a waiter; returns the key for wait. Check the condition after this. */
uint32_t cubert_cpu_ec_prepare(cubert_cpu_eventcount *ec);
/* Withdraws a prepare whose condition turned out true. */
void cubert_cpu_ec_cancel(cubert_cpu_eventcount *ec);
/* Sleeps until a notify after `key` was taken (may return spuriously), then withdraws. */
void cubert_cpu_ec_wait(cubert_cpu_eventcount *ec, uint32_t key);
/* Wakes up to `count` sleepers if there are any (one load otherwise). */
void cubert_cpu_ec_notify(cubert_cpu_eventcount *ec, uint64_t count);

#endif /* CUBERT_CPU_EVENTCOUNT_H */

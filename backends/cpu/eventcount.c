/* cubert CPU server — event count (see eventcount.h for the protocol).

   Why it cannot lose a wakeup: the waiter increments `waiters` before it reads `epoch` and checks
   its condition; the notifier makes the condition true before it reads `waiters`. With every
   access sequentially consistent, either the waiter's check sees the condition, or the notifier
   sees the waiter and bumps `epoch`, so the futex wait (which compares `epoch` with the key in
   the kernel) returns at once or is woken. */
#include "cpu/eventcount.h"

#include <limits.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *addr, uint32_t expected) {
  syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}
static void futex_wake(_Atomic uint32_t *addr, int count) {
  syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}
#endif

void cubert_cpu_ec_init(cubert_cpu_eventcount *ec) {
  atomic_init(&ec->epoch, 0);
  atomic_init(&ec->waiters, 0);
#ifndef __linux__
  pthread_mutex_init(&ec->mu, NULL);
  pthread_cond_init(&ec->cv, NULL);
#endif
}

void cubert_cpu_ec_destroy(cubert_cpu_eventcount *ec) {
#ifndef __linux__
  pthread_mutex_destroy(&ec->mu);
  pthread_cond_destroy(&ec->cv);
#else
  (void)ec;
#endif
}

uint32_t cubert_cpu_ec_prepare(cubert_cpu_eventcount *ec) {
  atomic_fetch_add(&ec->waiters, 1);
  return atomic_load(&ec->epoch);
}

void cubert_cpu_ec_cancel(cubert_cpu_eventcount *ec) {
  atomic_fetch_sub(&ec->waiters, 1);
}

void cubert_cpu_ec_wait(cubert_cpu_eventcount *ec, uint32_t key) {
#ifdef __linux__
  futex_wait(&ec->epoch, key);
#else
  pthread_mutex_lock(&ec->mu);
  while (atomic_load(&ec->epoch) == key) pthread_cond_wait(&ec->cv, &ec->mu);
  pthread_mutex_unlock(&ec->mu);
#endif
  atomic_fetch_sub(&ec->waiters, 1);
}

void cubert_cpu_ec_notify(cubert_cpu_eventcount *ec, uint64_t count) {
  if (atomic_load(&ec->waiters) == 0) return;
#ifdef __linux__
  atomic_fetch_add(&ec->epoch, 1);
  futex_wake(&ec->epoch, count > INT_MAX ? INT_MAX : (int)count);
#else
  (void)count;
  pthread_mutex_lock(&ec->mu);
  atomic_fetch_add(&ec->epoch, 1);
  pthread_cond_broadcast(&ec->cv);
  pthread_mutex_unlock(&ec->mu);
#endif
}

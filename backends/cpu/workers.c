/* cubert CPU server — the worker pool: pinned threads that run chunks of published launches.

   Sizing: with T threads for kernels (CUBERT_CPU_THREADS, else one per core of the cpubind set)
   the pool has T - 1 workers, pinned to the second and following cores, and the T-th thread is
   whichever host thread waits in sync: it runs chunks too. A pool of T workers plus a helping
   caller would put two busy threads on one core, and a chunk preempted there holds up the whole
   launch; the caller left unpinned is moved by the OS to the core the pool leaves free. With
   T = 1 there is one worker and callers only wait, so at most one thread runs kernels. Cores
   beyond T stay unused; T beyond the core count pins workers round-robin.

   Idling: a worker that finds nothing claimable polls (with a pause) for CUBERT_CPU_SPIN_NS, then
   sleeps on the device's event count. The poll keeps back-to-back launches free of wake-up
   latency; the sleep keeps an idle device from burning cores. */
#include "cpu/workers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cpu/scheduler.h"
#include "cpu/server.h"

/* Poll time before sleeping, in ns (OpenMP runtimes use 0.2-200 ms; launches here are short). */
#define CUBERT_CPU_SPIN_NS 200000u
/* Interval between yields of the CPU while polling, in ns. */
#define CUBERT_CPU_YIELD_NS 20000u

static int should_stop(cubert_cpu_device *d) {
  return atomic_load(&d->stopping);
}

/* Returns when there may be work (or the pool stops). `seq` and `graced` are the publication
   counts read before the scan that found nothing: a publication since then ends the wait, at
   once, or when its grace is over for a launch published by its submitter. */
static void idle(cubert_cpu_device *d, cubert_cpu_participant *part, uint64_t seq,
                 uint64_t graced) {
  uint64_t start = cubert_now_ns(), last_yield = start;
  uint64_t deadline = part->grace_until_ns; /* a launch left to its submitter becomes ours */
  for (uint32_t spins = 1;; ++spins) {
    if (should_stop(d) || atomic_load(&d->publish_seq) != seq) return;
    uint64_t g = atomic_load(&d->graced_seq);
    if (g != graced) {
      graced = g;
      uint64_t until = cubert_now_ns() + CUBERT_CPU_GRACE_NS;
      if (!deadline || until < deadline) deadline = until;
    }
    cubert_cpu_relax();
    if ((spins & 15) == 0) {
      uint64_t now = cubert_now_ns();
      if (deadline && now >= deadline) return;
      if (!deadline && now - start > CUBERT_CPU_SPIN_NS) break;
      /* A busy machine may have put a host thread on this worker's core: let it run now and
         then rather than only when the poll ends (it may be the thread we wait for). */
      if (now - last_yield > CUBERT_CPU_YIELD_NS) {
        sched_yield();
        last_yield = now;
      }
    }
  }
  uint32_t key = cubert_cpu_ec_prepare(&d->work_ec);
  if (should_stop(d) || cubert_cpu_work_available(d)) {
    cubert_cpu_ec_cancel(&d->work_ec);
    return;
  }
  cubert_cpu_ec_wait(&d->work_ec, key);
}

static void *worker_main(void *arg) {
  cubert_cpu_worker *w = arg;
  cubert_cpu_device *d = w->part.device;
  w->pinned = cubert_cpu_topology_pin(&d->topology, w->core) == 0;
  for (;;) {
    uint64_t seq = atomic_load(&d->publish_seq), graced = atomic_load(&d->graced_seq);
    if (cubert_cpu_try_work(d, &w->part)) continue;
    if (should_stop(d)) break;
    idle(d, &w->part, seq, graced);
  }
  cubert_cpu_participant_finish(&w->part);
  return NULL;
}

cubert_status cubert_cpu_workers_start(cubert_cpu_device *d) {
  d->workers = cubert_cpu_alloc_lines(sizeof(cubert_cpu_worker) * d->worker_count);
  if (!d->workers)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of %u CPU workers failed",
                              d->worker_count);
  memset(d->workers, 0, sizeof(cubert_cpu_worker) * d->worker_count);
  uint32_t cores = d->topology.info.core_count ? d->topology.info.core_count : 1;
  const uint32_t total = d->worker_count;
  for (uint32_t i = 0; i < d->worker_count; ++i) {
    cubert_cpu_worker *w = &d->workers[i];
    w->part.device = d;
    w->part.index = i + 1;
    w->part.is_worker = 1;
    w->part.helper_runner = -1;
    /* Core 0 of the cpubind set is left to the helping caller. */
    w->core = (d->caller_helps ? i + 1 : i) % cores;
    int rc = pthread_create(&w->thread, NULL, worker_main, w);
    if (rc != 0) {
      d->worker_count = i; /* the ones started so far are joined */
      cubert_cpu_workers_stop(d);
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "creating CPU worker thread %u of %u failed (error %d)", i + 1,
                                total, rc);
    }
#ifdef __linux__
    char name[16];
    snprintf(name, sizeof name, "cubert-cpu-%u", i % 10000u);
    pthread_setname_np(w->thread, name);
#endif
  }
  return NULL;
}

void cubert_cpu_workers_stop(cubert_cpu_device *d) {
  if (!d->workers) return;
  atomic_store(&d->stopping, 1);
  cubert_cpu_ec_notify(&d->work_ec, UINT64_MAX);
  for (uint32_t i = 0; i < d->worker_count; ++i) pthread_join(d->workers[i].thread, NULL);
  free(d->workers);
  d->workers = NULL;
}

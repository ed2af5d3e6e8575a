/* cubert CPU server — the worker threads (workers.c), one pinned per core the device
   uses, which run published chunks and sleep on the device's eventcount when none is left. */
#ifndef CUBERT_CPU_WORKERS_H
#define CUBERT_CPU_WORKERS_H

#include "cpu/server.h"

/* Starts the device's worker_count workers; OUT_OF_MEMORY when their memory or a thread cannot
   be had (those started are stopped again). */
cubert_status cubert_cpu_workers_start(cubert_cpu_device *device);
/* Stops and joins every worker (device destroy). */
void cubert_cpu_workers_stop(cubert_cpu_device *device);

#endif /* CUBERT_CPU_WORKERS_H */

/* cubert — the pthread + hwloc CPU compute server (docs/architecture.md#the-cpu-server).
   This is the server's only public header: the backend object the core's backend table names,
   and a topology query for tools (cubert-info prints it through the backend's `describe`).

   The server runs kernels' C implementations (cubert_kernel_def.cpu) on a pool of worker
   threads pinned one per core of the process's cpubind set. See backends/cpu/README.md for the
   scheduler, the stream ordering and the cooperative cube barrier. */
#ifndef CUBERT_CPU_API_H
#define CUBERT_CPU_API_H

#include <stdint.h>

#include "cubert/backend.h"
#include "cubert/server.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/* The backend: name "cpu", one device ("cpu" or "cpu:0"). Referenced by the generated backend
   table; use it through cubert_client_create("cpu", ...) rather than directly. */
extern const cubert_backend cubert_cpu_backend;

/* What the CPU server sees of the machine. Counts are limited to the process's cpubind set
   (taskset, cgroups cpusets, numactl), which is what the worker pool uses. */
typedef struct cubert_cpu_topology_info {
  uint32_t core_count;         /* cores with at least one PU in the cpubind set (>= 1) */
  uint32_t pu_count;           /* PUs (hardware threads) in the cpubind set (>= core_count) */
  uint32_t numa_node_count;    /* NUMA nodes holding a PU of the cpubind set (>= 1) */
  uint64_t l1d_bytes;          /* size of one L1 data cache in bytes, 0 when unknown */
  uint64_t l2_bytes;           /* size of one L2 cache in bytes, 0 when unknown */
  uint64_t l3_bytes;           /* size of one L3 cache in bytes, 0 when unknown */
  uint64_t total_memory_bytes; /* host memory in bytes, 0 when unknown */
  char cpubind[256];           /* the cpubind set as a list, e.g. "0-7,16-23" */
  char model[256];             /* CPU model name, "unknown CPU" when hwloc does not say */
  char vendor[128];            /* CPU vendor, "" when unknown */
  int from_hwloc;              /* 0: hwloc failed; counts come from sched_getaffinity or sysconf */
  char hwloc_version[32];      /* version of the hwloc library in use, e.g. "2.9.0" */
} cubert_cpu_topology_info;

/* Loads the topology (hwloc with I/O discovery off; a few milliseconds) and fills `out`.
   Never fails on a working system: when hwloc cannot load a topology the counts come from
   sched_getaffinity, then sysconf(_SC_NPROCESSORS_ONLN). Thread-safe; holds no global state.
   Returns INVALID_ARGUMENT when out is NULL. */
cubert_status cubert_cpu_topology_query(cubert_cpu_topology_info *out);

/* TEST-ONLY fault injection: makes the next `count` execution-time allocations of `server`
   fail as if the host refused them (0 disarms; a call replaces the previous count). Execution-
   time allocations are the ones a queued launch makes when it runs: the cube runners, fiber
   tables, fiber stacks and shared-memory buffers of SYNC_CUBE / shared-memory kernels, created
   and grown by the first launch that needs them. A launch whose allocation fails is not run (its
   cubes not yet started are skipped), reports OUT_OF_MEMORY with the refused size to its stream's
   error queue (the next sync/flush/read on the stream returns it; later work on the stream is
   skipped until then), and the server stays usable. Storage pages and launch records are not
   affected (their failures are synchronous and tested directly).

   For tests of asynchronous error reporting only; not part of the stable API and not exported
   from the shared library. Thread-safe (an atomic counter); costs nothing when 0, since only the
   allocating paths read it. Does nothing when `server` is NULL or not a CPU server. */
void cubert_cpu_debug_fail_allocations(cubert_server *server, uint32_t count);

CUBERT_EXTERN_C_END

#endif /* CUBERT_CPU_API_H */

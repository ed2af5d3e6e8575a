/* cubert CPU server — the machine as hwloc sees it (internal). */
#ifndef CUBERT_CPU_TOPOLOGY_H
#define CUBERT_CPU_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpu/api.h"

/* The public summary plus the CPU sets the worker pool pins threads to. */
typedef struct cubert_cpu_topology {
  cubert_cpu_topology_info info;
  /* info.core_count glibc CPU sets of cpuset_bytes each: core i's PUs that are inside the
     cpubind set. NULL when pinning is not possible (no affinity support). */
  void *core_sets;
  size_t cpuset_bytes;
} cubert_cpu_topology;

/* Fills `out` from the process's topology snapshot, taken by the first call (hwloc first, then
   the fallbacks); `out` owns its copy of the CPU sets. Thread-safe. Returns OUT_OF_MEMORY only
   when the host cannot hold the CPU sets; `out` is then still usable without pinning. */
cubert_status cubert_cpu_topology_load(cubert_cpu_topology *out);
/* Frees what load allocated; tolerates a zeroed topology. */
void cubert_cpu_topology_free(cubert_cpu_topology *topology);
/* Pins the calling thread to core `core` (taken modulo core_count). Returns 0 on success, -1 when
   the topology has no CPU sets or the kernel refused. */
int cubert_cpu_topology_pin(const cubert_cpu_topology *topology, uint32_t core);
/* Prints the topology for cubert-info: cores, PUs, cpubind mask, caches, NUMA nodes. */
void cubert_cpu_topology_print(const cubert_cpu_topology_info *info, FILE *out);

#endif /* CUBERT_CPU_TOPOLOGY_H */

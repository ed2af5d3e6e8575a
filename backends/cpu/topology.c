/* cubert CPU server — topology: cores of the process's cpubind set, caches and NUMA nodes from
   hwloc, with fallbacks for hosts where hwloc cannot load a topology.

   hwloc discovers the machine once per process: discovery is the costly part of creating a CPU
   device (and, measured under injected allocation failures, 260 of 705 failure points of a
   client create). What a server keeps (counts, cache sizes, per-core glibc CPU sets for pinning)
   is copied out of that snapshot into each device, so every device still owns its copy and frees
   it itself. The snapshot is immutable once taken; a later change of the process's cpubind set
   (taskset after start) is not seen by devices created afterwards. A load that could not hold the
   CPU sets is not kept, so the next device tries again. */
#include "cpu/topology.h"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copies `src` into `dst` (size `cap`), always NUL-terminated. */
/* Copies `src` without trailing blanks (CPUID model names are padded with spaces). */
static void copy_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
  size_t len = strlen(dst);
  while (len && (dst[len - 1] == ' ' || dst[len - 1] == '\t')) dst[--len] = '\0';
}

static void hwloc_version_text(char *dst, size_t cap) {
  unsigned v = hwloc_get_api_version();
  snprintf(dst, cap, "%u.%u.%u", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
}

/* Allocates `count` zeroed glibc CPU sets able to hold CPU indexes up to `max_cpu`. */
static void *alloc_sets(uint32_t count, unsigned max_cpu, size_t *out_bytes) {
  size_t bytes = CPU_ALLOC_SIZE(max_cpu + 1);
  void *sets = calloc(count ? count : 1, bytes);
  *out_bytes = sets ? bytes : 0;
  return sets;
}

static cpu_set_t *set_at(void *sets, size_t bytes, uint32_t index) {
  return (cpu_set_t *)((char *)sets + (size_t)index * bytes);
}

/* Size of the first cache of `type` whose PUs meet the cpubind set (instruction caches are
   skipped: shared memory sizing wants the data cache). */
static uint64_t cache_size(hwloc_topology_t topo, hwloc_obj_type_t type,
                           hwloc_const_bitmap_t bind) {
  for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
       o = hwloc_get_next_obj_by_type(topo, type, o)) {
    if (o->attr && o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
    if (o->cpuset && !hwloc_bitmap_intersects(o->cpuset, bind)) continue;
    return o->attr ? o->attr->cache.size : 0;
  }
  return 0;
}

/* Fills `t` from a loaded hwloc topology. Returns 0, or -1 when the topology is unusable (no PU
   in the cpubind set), in which case the caller falls back. */
static int load_hwloc(cubert_cpu_topology *t, hwloc_topology_t topo) {
  cubert_cpu_topology_info *info = &t->info;
  hwloc_bitmap_t bind = hwloc_bitmap_alloc();
  hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
  int rc = -1;
  if (!bind || !tmp) goto done;
  /* The process binding (what taskset/cgroups gave us); a thread binding if the process one is
     unavailable (some kernels), and the allowed set as a last resort. */
  if (hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(bind)) {
    if (hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_THREAD) != 0 || hwloc_bitmap_iszero(bind))
      hwloc_bitmap_copy(bind, hwloc_topology_get_allowed_cpuset(topo));
  }
  hwloc_bitmap_and(bind, bind, hwloc_topology_get_topology_cpuset(topo));
  int pus = hwloc_bitmap_weight(bind);
  int last = hwloc_bitmap_last(bind);
  if (pus <= 0 || last < 0) goto done;
  info->pu_count = (uint32_t)pus;
  hwloc_bitmap_list_snprintf(info->cpubind, sizeof info->cpubind, bind);

  /* Cores meeting the cpubind set; machines without Core objects count PUs as cores. */
  hwloc_obj_type_t unit =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  uint32_t cores = 0;
  for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, unit, NULL); o;
       o = hwloc_get_next_obj_by_type(topo, unit, o))
    if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, bind)) ++cores;
  if (cores == 0) goto done;
  info->core_count = cores;
  t->core_sets = alloc_sets(cores, (unsigned)last, &t->cpuset_bytes);
  if (t->core_sets) {
    uint32_t i = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, unit, NULL); o;
         o = hwloc_get_next_obj_by_type(topo, unit, o)) {
      if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, bind)) continue;
      hwloc_bitmap_and(tmp, o->cpuset, bind);
      cpu_set_t *cs = set_at(t->core_sets, t->cpuset_bytes, i++);
      int pu;
      hwloc_bitmap_foreach_begin(pu, tmp) {
        CPU_SET_S((unsigned)pu, t->cpuset_bytes, cs);
      }
      hwloc_bitmap_foreach_end();
    }
  }

  info->l1d_bytes = cache_size(topo, HWLOC_OBJ_L1CACHE, bind);
  info->l2_bytes = cache_size(topo, HWLOC_OBJ_L2CACHE, bind);
  info->l3_bytes = cache_size(topo, HWLOC_OBJ_L3CACHE, bind);
  uint32_t numa = 0;
  for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, NULL); o;
       o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o))
    if (!o->cpuset || hwloc_bitmap_intersects(o->cpuset, bind)) ++numa;
  info->numa_node_count = numa ? numa : 1;
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  info->total_memory_bytes = root ? root->total_memory : 0;

  hwloc_obj_t pkg = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL);
  const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
  const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
  if (!model && root) model = hwloc_obj_get_info_by_name(root, "CPUModel");
  if (!vendor && root) vendor = hwloc_obj_get_info_by_name(root, "CPUVendor");
  copy_text(info->model, sizeof info->model, model ? model : "unknown CPU");
  copy_text(info->vendor, sizeof info->vendor, vendor);
  info->from_hwloc = 1;
  rc = 0;
done:
  if (bind) hwloc_bitmap_free(bind);
  if (tmp) hwloc_bitmap_free(tmp);
  return rc;
}

/* Without hwloc: the affinity mask gives the CPUs (each counted as a core), sysconf the rest. */
static void load_fallback(cubert_cpu_topology *t) {
  cubert_cpu_topology_info *info = &t->info;
  enum { MAX_CPUS = 8192 };
  size_t bytes = CPU_ALLOC_SIZE(MAX_CPUS);
  cpu_set_t *mask = CPU_ALLOC(MAX_CPUS);
  uint32_t count = 0;
  if (mask && sched_getaffinity(0, bytes, mask) == 0) count = (uint32_t)CPU_COUNT_S(bytes, mask);
  if (count > 0) {
    int last = -1;
    for (int c = 0; c < MAX_CPUS; ++c)
      if (CPU_ISSET_S((unsigned)c, bytes, mask)) last = c;
    t->core_sets = alloc_sets(count, (unsigned)last, &t->cpuset_bytes);
    uint32_t i = 0;
    size_t used = 0;
    for (int c = 0; c <= last; ++c) {
      if (!CPU_ISSET_S((unsigned)c, bytes, mask)) continue;
      if (t->core_sets)
        CPU_SET_S((unsigned)c, t->cpuset_bytes, set_at(t->core_sets, t->cpuset_bytes, i));
      ++i;
      int n = snprintf(info->cpubind + used, sizeof info->cpubind - used, used ? ",%d" : "%d", c);
      if (n > 0 && (size_t)n < sizeof info->cpubind - used) used += (size_t)n;
    }
  } else {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    count = n > 0 ? (uint32_t)n : 1;
    snprintf(info->cpubind, sizeof info->cpubind, "0-%u", count - 1);
  }
  if (mask) CPU_FREE(mask);
  info->core_count = count;
  info->pu_count = count;
  info->numa_node_count = 1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE),
       l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  info->l1d_bytes = l1 > 0 ? (uint64_t)l1 : 0;
  info->l2_bytes = l2 > 0 ? (uint64_t)l2 : 0;
  info->l3_bytes = l3 > 0 ? (uint64_t)l3 : 0;
#endif
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  info->total_memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  copy_text(info->model, sizeof info->model, "unknown CPU");
  info->vendor[0] = '\0';
  info->from_hwloc = 0;
}

/* Discovers the machine (hwloc first, then the fallbacks). */
static void load_uncached(cubert_cpu_topology *t) {
  memset(t, 0, sizeof *t);
  hwloc_version_text(t->info.hwloc_version, sizeof t->info.hwloc_version);
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0) {
    /* I/O discovery (PCI, OpenCL, GPUs) costs tens of milliseconds and tells a CPU server
       nothing; instruction caches are not used either. */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    int ok = hwloc_topology_load(topo) == 0 && load_hwloc(t, topo) == 0;
    hwloc_topology_destroy(topo);
    if (ok) return;
    free(t->core_sets);
    t->core_sets = NULL;
    memset(&t->info, 0, sizeof t->info);
    hwloc_version_text(t->info.hwloc_version, sizeof t->info.hwloc_version);
  }
  load_fallback(t);
}

/* The process's snapshot; guarded by `snapshot_lock` until `snapshot_taken`. */
static pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
static cubert_cpu_topology snapshot;
static int snapshot_taken;

cubert_status cubert_cpu_topology_load(cubert_cpu_topology *t) {
  memset(t, 0, sizeof *t);
  pthread_mutex_lock(&snapshot_lock);
  if (!snapshot_taken) {
    load_uncached(&snapshot);
    /* Without CPU sets (no memory for them) devices run unpinned; try again next time. */
    snapshot_taken = snapshot.core_sets != NULL;
  }
  *t = snapshot;
  t->core_sets = NULL;
  t->cpuset_bytes = 0;
  cubert_status s = NULL;
  if (snapshot.core_sets) {
    size_t bytes =
        snapshot.cpuset_bytes * (snapshot.info.core_count ? snapshot.info.core_count : 1);
    t->core_sets = malloc(bytes);
    if (t->core_sets) {
      memcpy(t->core_sets, snapshot.core_sets, bytes);
      t->cpuset_bytes = snapshot.cpuset_bytes;
    }
  }
  if (!t->core_sets)
    s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                           "host allocation of the CPU sets of %u cores failed; workers are not "
                           "pinned",
                           t->info.core_count);
  if (!snapshot_taken) {
    free(snapshot.core_sets);
    memset(&snapshot, 0, sizeof snapshot);
  }
  pthread_mutex_unlock(&snapshot_lock);
  return s;
}

void cubert_cpu_topology_free(cubert_cpu_topology *t) {
  if (!t) return;
  free(t->core_sets);
  t->core_sets = NULL;
}

int cubert_cpu_topology_pin(const cubert_cpu_topology *t, uint32_t core) {
#ifdef __linux__
  if (!t->core_sets || t->info.core_count == 0) return -1;
  cpu_set_t *cs = set_at(t->core_sets, t->cpuset_bytes, core % t->info.core_count);
  return pthread_setaffinity_np(pthread_self(), t->cpuset_bytes, cs) == 0 ? 0 : -1;
#else
  (void)t;
  (void)core;
  return -1;
#endif
}

/* Bytes as the largest whole unit (48 KiB, 2 MiB). */
static void print_bytes(FILE *out, uint64_t bytes) {
  if (bytes == 0) {
    fputs("unknown", out);
  } else if (bytes % (1ull << 30) == 0) {
    fprintf(out, "%llu GiB", (unsigned long long)(bytes >> 30));
  } else if (bytes % (1ull << 20) == 0) {
    fprintf(out, "%llu MiB", (unsigned long long)(bytes >> 20));
  } else if (bytes % 1024 == 0) {
    fprintf(out, "%llu KiB", (unsigned long long)(bytes >> 10));
  } else {
    fprintf(out, "%llu B", (unsigned long long)bytes);
  }
}

void cubert_cpu_topology_print(const cubert_cpu_topology_info *info, FILE *out) {
  fprintf(out, "    topology source      %s (hwloc %s)\n",
          info->from_hwloc ? "hwloc" : "sched_getaffinity/sysconf fallback", info->hwloc_version);
  fprintf(out, "    cpubind              %s\n", info->cpubind);
  fprintf(out, "    cores in cpubind     %u\n", info->core_count);
  fprintf(out, "    PUs in cpubind       %u\n", info->pu_count);
  fputs("    caches               L1d ", out);
  print_bytes(out, info->l1d_bytes);
  fputs(", L2 ", out);
  print_bytes(out, info->l2_bytes);
  fputs(", L3 ", out);
  print_bytes(out, info->l3_bytes);
  fputc('\n', out);
  fprintf(out, "    NUMA nodes           %u\n", info->numa_node_count);
  fputs("    host memory          ", out);
  print_bytes(out, info->total_memory_bytes);
  fputc('\n', out);
}

cubert_status cubert_cpu_topology_query(cubert_cpu_topology_info *out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_cpu_topology t;
  cubert_status s = cubert_cpu_topology_load(&t);
  *out = t.info;
  cubert_cpu_topology_free(&t);
  return s;
}

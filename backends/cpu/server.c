/* cubert CPU server — the vtable, device creation and destruction, device properties, and the
   backend object (enumerate/create/describe).

   Property choices (docs/architecture.md#the-cpu-server, reference HardwareProperties of
   cubecl-cpu where it fits):
   - max_shared_memory_size = max(L1d, 64 KiB): the reference uses the L1d size (64 KiB when
     unknown). Shared memory here is an ordinary per-thread buffer, so the limit only keeps
     kernels honest; the 64 KiB floor admits every kernel sized for a GPU's usual 48 KiB.
   - max_units_per_cube = 1024, max_cube_dim = (1024, 1024, 64): GPU-like limits. A cube's units
     are fibers on one thread, so the count is bounded by fiber stacks (64 KiB each), not cores.
   - memory.max_page_size = min(host memory / 4, 64 GiB); alignment 64 (a cache line, and the
     widest vector load).
   - num_cpu_cores = cores in the cpubind set (what CubeDim::new uses); num_compute_units = the
     threads that run kernels (workers + the helping caller). */
#include "cpu/server.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "base/status.h"
#include "base/x86_level.h"
#include "cpu/events.h"
#include "cpu/gate.h"
#include "cpu/san_buffers.h"
#include "cpu/scheduler.h"
#include "cpu/storage.h"
#include "cpu/stream.h"
#include "cpu/trap.h"
#include "cpu/workers.h"
#include "cubert/backend.h"
#include "cubert/config.h"
#include "cubert/server/gates.h"
#include "cubert/server/transfers.h"
#include "cubert_kernel_variants.h" /* CUBERT_KERNEL_VARIANT_*: the CPU variants built */

#ifndef CUBERT_VERSION_STRING_BUILD
#define CUBERT_VERSION_STRING_BUILD "unknown"
#endif

static void destroy(cubert_server *server);

/* Pages are plain host memory: no slice carries a backend cache. */
static void slice_cache_release(cubert_server *server, cubert_slice *slice) {
  (void)server, (void)slice;
}

static const cubert_server_vtable cpu_vtable = {
    .kernel_form = CUBERT_KERNEL_FORM_CPU,
    .destroy = destroy,
    .storage_alloc = cubert_cpu_storage_alloc,
    .storage_free = cubert_cpu_storage_free,
    .slice_cache_release = slice_cache_release,
    .stream_create = cubert_cpu_stream_create,
    .stream_destroy = cubert_cpu_stream_destroy,
    .launch = cubert_cpu_launch,
    .read = cubert_cpu_read,
    .write = cubert_cpu_write,
    .flush = cubert_cpu_flush,
    .sync = cubert_cpu_sync,
    .event_record = cubert_cpu_event_record,
    .event_wait = cubert_cpu_event_wait,
    .event_sync = cubert_cpu_event_sync,
    .event_done = cubert_cpu_event_done,
    .event_release = cubert_cpu_event_release,
};

/* The capabilities (cubert/server.h). No pinned memory (all of it is host memory), no
   profiler (the core's host timing is what this server would do), no device combination (the
   communicators' host reduction runs on the same cores). */
static const cubert_server_transfers cpu_transfers = {
    .read_async = cubert_cpu_read_async,
    .write_async = cubert_cpu_write_async,
    .copy = cubert_cpu_copy,
};
static const cubert_server_gates cpu_gates = {
    .create = cubert_cpu_gate_create,
    .wait = cubert_cpu_gate_wait,
    .open = cubert_cpu_gate_open,
    .release = cubert_cpu_gate_release,
};

/* Threads that run kernels: CUBERT_CPU_THREADS, else one per core of the cpubind set. */
static uint32_t kernel_threads(const cubert_cpu_topology *t) {
  uint32_t threads = cubert_config_get()->cpu_threads;
  if (threads == 0) threads = t->info.core_count;
  return threads ? threads : 1;
}

/* Bytes of the vector registers the CPU server's kernels compute with: the widest ISA that
   both this CPU runs and the library has code for. That is the baseline it was compiled for
   (-march), raised to AVX2 (32 bytes) or AVX-512 (64) where the library holds the
   x86-64-v3/v4 kernel variants (CMakeLists.txt, CUBERT_KERNEL_VARIANT_*) and the CPU has
   their features (base/x86_level.h: the test kernels/ops/cpu_variant.c picks those variants by). */
static uint32_t vector_bytes(void) {
#if defined(__AVX512F__)
  uint32_t bytes = 64;
#elif defined(__AVX__)
  uint32_t bytes = 32;
#else
  uint32_t bytes = 16; /* SSE2 (x86-64's baseline), NEON, or plain C vectorised to 128 bits */
#endif
  const int level = cubert_x86_level();
  (void)level;
#ifdef CUBERT_KERNEL_VARIANT_x86v3
  if (level >= 3 && bytes < 32) bytes = 32;
#endif
#ifdef CUBERT_KERNEL_VARIANT_x86v4
  if (level >= 4 && bytes < 64) bytes = 64;
#endif
  return bytes;
}

/* Packed 8-bit dot products in hardware (AVX-512 VNNI, AVX-VNNI). AVX-VNNI is read from CPUID
   (leaf 7, sub-leaf 1, EAX bit 4) because older compilers (clang 14) do not know its name in
   __builtin_cpu_supports; like AVX2, whose support by the OS it needs, it is checked that way. */
static int has_dot_product_i8(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vnni")) return 1;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
         (eax >> 4 & 1u);
#else
  return 0;
#endif
}

static void fill_properties(const cubert_cpu_topology *t, uint32_t threads,
                            cubert_device_properties *p) {
  memset(p, 0, sizeof *p);
  const cubert_cpu_topology_info *info = &t->info;
  snprintf(p->name, sizeof p->name, "%s", info->model);
  cubert_hardware_properties *hw = &p->hardware;
  hw->load_width = 512;
  hw->plane_size_min = 1;
  hw->plane_size_max = 1;
  hw->max_bindings = UINT32_MAX;
  hw->max_shared_memory_size = info->l1d_bytes > 64 * 1024 ? info->l1d_bytes : 64 * 1024;
  hw->max_cube_count[0] = hw->max_cube_count[1] = hw->max_cube_count[2] = UINT32_MAX;
  hw->max_units_per_cube = CUBERT_CPU_MAX_UNITS_PER_CUBE;
  hw->max_cube_dim[0] = 1024;
  hw->max_cube_dim[1] = 1024;
  hw->max_cube_dim[2] = 64;
  hw->num_cpu_cores = info->core_count;
  hw->max_vector_size = 16;
  hw->num_compute_units = threads;
  const uint64_t page_cap = 1ull << 36;
  uint64_t quarter = info->total_memory_bytes / 4;
  p->memory.max_page_size = quarter && quarter < page_cap ? quarter : page_cap;
  p->memory.alignment = CUBERT_CPU_LINE;
  /* No CUBERT_FEATURE_PLANE (a plane is one unit) and no float atomics (x86 and ARM add floats
     atomically only by compare-exchange). */
  p->features = CUBERT_FEATURE_FP64 | CUBERT_FEATURE_ATOMIC64 | CUBERT_FEATURE_UNALIGNED_IO;
  if (has_dot_product_i8()) p->features |= CUBERT_FEATURE_DOT_PRODUCT_I8;
  uint32_t vb = vector_bytes();
  p->vector_widths = (cubert_vector_widths){.i8 = vb,
                                            .i16 = vb / 2,
                                            .i32 = vb / 4,
                                            .i64 = vb / 8,
                                            .f16 = 0,
                                            .f32 = vb / 4,
                                            .f64 = vb / 8};
  p->plane_sizes[0] = 1;
  p->plane_size_count = 1;
  p->timing_method = CUBERT_TIMING_SYSTEM;
  p->type = CUBERT_DEVICE_TYPE_CPU_SERVER;
  snprintf(p->backend, sizeof p->backend, "cpu");
  snprintf(p->vendor, sizeof p->vendor, "%s", info->vendor);
  snprintf(p->driver_version, sizeof p->driver_version, "cubert-cpu %s",
           CUBERT_VERSION_STRING_BUILD);
  snprintf(p->platform_version, sizeof p->platform_version, "hwloc %s", info->hwloc_version);
}

static void destroy(cubert_server *server) {
  if (!server) return;
  cubert_cpu_device *d = cubert_cpu_device_of(server);
  /* The core destroys its streams first; anything still registered is drained and released. */
  for (uint32_t i = 0; i < d->stream_high; ++i)
    if (d->streams[i]) cubert_cpu_stream_destroy(server, d->streams[i]);
  cubert_cpu_workers_stop(d);
  for (int i = 0; i < CUBERT_CPU_HELPER_RUNNERS; ++i)
    cubert_cpu_runner_destroy(d->helper_runners[i].runner);
  cubert_cpu_jobs_free_all(d);
  cubert_cpu_topology_free(&d->topology);
  cubert_cpu_ec_destroy(&d->work_ec);
  cubert_cpu_ec_destroy(&d->done_ec);
  pthread_mutex_destroy(&d->registry_lock);
  pthread_mutex_destroy(&d->jobs_lock);
  cubert_cpu_undefined_destroy(&d->undefined);
  free(d);
}

static cubert_status check_spec(const char *spec) {
  if (!spec || !*spec || strcmp(spec, "0") == 0) return NULL;
  return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                            "no CPU device \"%s\": the cpu backend has one device (selectors: "
                            "cpu, cpu:0)",
                            spec);
}

static cubert_status create(const char *spec, cubert_server **out) {
  *out = NULL;
  CUBERT_RETURN_IF_ERROR(check_spec(spec));
  cubert_cpu_device *d = cubert_cpu_alloc_lines(sizeof *d);
  if (!d)
    return cubert_status_set_size(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                           "host allocation of the CPU device (%zu bytes) failed", sizeof *d),
        sizeof *d);
  memset(d, 0, sizeof *d);
  d->base.vtable = &cpu_vtable;
  d->base.transfers = &cpu_transfers;
  d->base.gates = &cpu_gates;
  d->base.sanitizer = &cubert_cpu_sanitizer_table;
  cubert_cpu_ec_init(&d->work_ec);
  cubert_cpu_ec_init(&d->done_ec);
  pthread_mutex_init(&d->registry_lock, NULL);
  pthread_mutex_init(&d->jobs_lock, NULL);
  cubert_cpu_undefined_init(&d->undefined);
  cubert_status s = cubert_cpu_topology_load(&d->topology);
  cubert_status_free(s); /* without CPU sets the pool just runs unpinned */
  d->threads = kernel_threads(&d->topology);
  d->caller_helps = d->threads > 1;
  d->worker_count = d->threads > 1 ? d->threads - 1 : 1;
  fill_properties(&d->topology, d->threads, &d->base.properties);
  d->base.tags_errors = 1;   /* each job keeps its submitter (scheduler.c) */
  cubert_cpu_trap_install(); /* a kernel's division fault fails its launch (trap.c) */
  s = cubert_cpu_workers_start(d);
  if (s) {
    destroy(&d->base);
    return s;
  }
  *out = &d->base;
  return NULL;
}

static cubert_status resolve(const char *spec, size_t *out_index) {
  *out_index = 0;
  return check_spec(spec);
}

static cubert_status enumerate(cubert_device_info *out, size_t capacity, size_t *out_count) {
  *out_count = 1;
  if (capacity == 0) return NULL;
  cubert_cpu_topology t;
  cubert_status_free(cubert_cpu_topology_load(&t));
  memset(&out[0], 0, sizeof out[0]);
  snprintf(out[0].selector, sizeof out[0].selector, "cpu");
  out[0].available = 1;
  fill_properties(&t, kernel_threads(&t), &out[0].properties);
  cubert_cpu_topology_free(&t);
  return NULL;
}

static void describe(size_t index, FILE *out) {
  if (index != 0) return;
  cubert_cpu_topology t;
  cubert_status_free(cubert_cpu_topology_load(&t));
  cubert_cpu_topology_print(&t.info, out);
  uint32_t threads = kernel_threads(&t);
  if (threads > 1)
    fprintf(out, "    kernel threads       %u (%u pinned worker%s + the thread waiting in sync)\n",
            threads, threads - 1, threads == 2 ? "" : "s");
  else
    fprintf(out, "    kernel threads       1 (one pinned worker)\n");
  cubert_cpu_topology_free(&t);
}

void cubert_cpu_debug_fail_allocations(cubert_server *server, uint32_t count) {
  /* The vtable identifies a CPU server: another backend's object has no counter to set. */
  if (!server || server->vtable != &cpu_vtable) return;
  atomic_store(&cubert_cpu_device_of(server)->fail_allocations, count);
}

const cubert_backend cubert_cpu_backend = {
    .name = "cpu",
    .enumerate = enumerate,
    .create = create,
    .resolve = resolve,
    .describe = describe,
};

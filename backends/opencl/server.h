/* cubert — the OpenCL server's objects (server.c creates and destroys them): the server itself,
   its streams (one in-order queue each, with the FIFO of commands in flight and the pins they
   hold), events, and the caches the server owns. Every file of backends/opencl works on these
   with the device lock held (README.md "Locking"); server.c also declares here the backend's
   test hooks. */
#ifndef CUBERT_OPENCL_SERVER_H
#define CUBERT_OPENCL_SERVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/thread_team.h"
#include "opencl/api.h"

/* What commands in flight hold until they completed: the slices they use (pinned, so the core
   does not reuse them) and host copies of non-blocking writes. */
typedef struct cubert_ocl_pins {
  cubert_slice **slices;
  uint32_t slice_count, slice_capacity;
  void **frees;
  uint32_t free_count, free_capacity;
  uint64_t free_bytes;
} cubert_ocl_pins;

/* An event in flight on a stream and the pins released when it completed. `batch`: the event
   is a marker that closed a batch of commands enqueued without events. */
typedef struct cubert_ocl_pending {
  cl_event event;
  const char *what; /* static text or a string owned by the kernel cache ("kernel 'add'") */
  int batch;
  int fallible; /* a wait counted in the stream's fallible_waits */
  cubert_ocl_pins pins;
} cubert_ocl_pending;

/* An open profile region on a stream: the first command enqueued inside it. */
typedef struct cubert_ocl_profile {
  uint64_t token;
  cl_event first;    /* retained; NULL until a command is enqueued */
  uint64_t begin_ns; /* host clock, for devices without event profiling */
} cubert_ocl_profile;

typedef struct cubert_ocl_server cubert_ocl_server;

/* The program cache's entries (program.h): the server holds their lists. */
struct cubert_ocl_program;
struct cubert_ocl_kernel_ref;

/* The validate record of kernel-language kernels (cubert/cube_prelude.cl gives the layout), and
   how many distinct kernels a stream may launch in validate mode between two reads of it. */
#define CUBERT_OCL_RECORD_WORDS 16
#define CUBERT_OCL_VALIDATE_KERNELS 64

struct cubert_server_stream {
  cubert_ocl_server *server;
  /* The queue commands go to: `plain_queue`, or `profiling_queue` while a profile region is
     open. Events cost much more on a profiling queue on some drivers (NVIDIA: ~9 us against
     ~2 us), so it is used only when timestamps are wanted. */
  cl_command_queue queue;
  cl_command_queue plain_queue, profiling_queue;
  cubert_stream_errors *errors;
  /* Commands enqueued without an event (launches, small writes: the hot path) pin into the
     open batch; it is released at the next sync, or handed to the next event enqueued on the
     stream (which completes after them), or closed with a marker when it grows. */
  cubert_ocl_pins batch;
  const char *batch_what; /* the batch's last command */
  /* FIFO ring of events in flight, oldest at `head`. In-order queue: they complete in order,
     so polling stops at the first one still running. */
  cubert_ocl_pending *pending;
  size_t head, count, capacity;
  /* Profiling: open regions and the last command enqueued while one is open. */
  cubert_ocl_profile *profiles;
  size_t profile_count, profile_capacity;
  cl_event last_event;
  int failed_run; /* the last completed command failed: dependents' errors are consequences */
  /* The last command enqueued without an event since the last evented one (NULL: none). A
     failure of such a command is seen by no event of the FIFO, and some drivers' clFinish
     (PoCL) returns success after it, so sync checks a marker's status when it is set. */
  const char *unobserved_what;
  /* The stream's queue was handed to the caller (cubert_opencl_queue): commands cubert did not
     enqueue may fail on it, so sync checks unobserved commands through a marker (queue.c). */
  int queue_shared;
  /* Waits (barriers on events cubert does not control) still in the FIFO, counted only where
     server->events_behind_waits: while one is unresolved, commands carry events. */
  uint32_t fallible_waits;
  /* Kernel-language launches (launch.c): the record a validate-mode kernel writes its first
     violation into (CUBERT_OCL_RECORD_WORDS uints, created at the first such launch), and the
     kernels launched in validate mode since it was last read, which the record's tag indexes. */
  cl_mem record;
  const cubert_kernel_def *validate_kernels[CUBERT_OCL_VALIDATE_KERNELS];
  uint32_t validate_count;
  cubert_server_stream *prev, *next; /* the server's list, for destroy */
};

struct cubert_event {
  cl_event event;
};

#define CUBERT_OCL_KERNEL_BUCKETS 256
#define CUBERT_OCL_INFO_ENTRIES 256
#ifndef CUBERT_OCL_STAGING_SLOTS
#define CUBERT_OCL_STAGING_SLOTS 4
#endif

/* Immutable device copies of info words, direct-mapped by content hash. A launch with the
   same words as an earlier one (the common case: same shapes) costs no transfer. */
typedef struct cubert_ocl_info_entry {
  uint64_t hash;
  uint32_t count;
  uint64_t *words;
  cl_mem mem;
} cubert_ocl_info_entry;

/* Pinned host memory for large transfers (staging.c): one CL_MEM_ALLOC_HOST_PTR buffer mapped
   once and split into slots, each with the event of the last transfer that used it, and a
   few threads that share each host copy (one thread copies at ~10 GB/s, below what PCIe
   moves). */
typedef struct cubert_ocl_staging {
  cl_mem buffer;
  cl_command_queue map_queue;
  char *host;
  size_t slot_bytes;
  cl_event events[CUBERT_OCL_STAGING_SLOTS];
  uint32_t next;
  cubert_thread_team *pool; /* the host copies' threads */
  size_t copy_threads;      /* 0: half the CPUs, 2..STAGING_MAX_THREADS (staging.c) */
} cubert_ocl_staging;

/* Counters of the program caches (for tests and logs). disk_checks: binaries read back after
   a launch at a new local size (or before a program is freed) to see whether they grew;
   disk_refreshes: files rewritten because a binary grew (they count in disk_writes too). */
typedef struct cubert_ocl_cache_stats {
  uint64_t memory_hits, builds_from_source, disk_hits, disk_writes, disk_rejected;
  uint64_t disk_checks, disk_refreshes;
} cubert_ocl_cache_stats;

struct cubert_ocl_server {
  cubert_server base; /* first: the core sees a cubert_server */
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  int profiling; /* queues are created with CL_QUEUE_PROFILING_ENABLE */
  /* PoCL (3.1) aborts the process when a failure propagates from one command without an event
     into another (a failed wait followed by two launches is enough), so on PoCL commands
     queued behind an unresolved wait carry events (queue.c). */
  int events_behind_waits;
  /* Build options this driver needs on top of cubert's (program.c): " -DCUBERT_NO_RESTRICT=1"
     on Oclgrind, whose interpreter cannot run the llvm.experimental.noalias.scope.decl
     intrinsic that LLVM's inliner emits for restrict parameters of inlined functions
     (cube_prelude.cl); " -DCUBERT_UNROLL_HINTS=1" on NVIDIA (UNROLL, cube.h); "" elsewhere;
     then CUBERT_OPENCL_OPTIONS, when set. Owned. */
  char *driver_options;
  /* NVIDIA's compiler (platform "NVIDIA CUDA"): the only one given -cl-nv- options. */
  int nvidia;
  /* Sync checks commands without events through a marker (queue.c, cubert_ocl_finish) only
     where clFinish is known to hide their failures: PoCL. Elsewhere (NVIDIA) clFinish reports
     them, and the marker would cost about 1 µs per sync (measured on the H200). */
  int sync_marker;
  int use_staging; /* large transfers go through pinned memory */
  /* Largest global size per axis (count x dim): the device's size_t range
     (CL_DEVICE_ADDRESS_BITS), within the host's. Checked by every launch (launch.c). */
  uint64_t max_global_size;
  /* Device memory accounting (memory.c): CL_DEVICE_GLOBAL_MEM_SIZE and the bytes of the live
     pages. Drivers accept buffers beyond the device's memory and fail later (PoCL, NVIDIA), so
     storage_alloc refuses a page that would not fit. */
  uint64_t global_mem_bytes, allocated_bytes;
  /* The device's memory is host memory (CL_DEVICE_HOST_UNIFIED_MEMORY): a page must also fit
     the host's address space (memory.c). */
  int host_unified;
  /* Queue of storage_alloc's first use of new pages (memory.c); NULL until needed. */
  cl_command_queue alloc_queue;
  /* The collectives' reduction kernels (comm_reduce.c), built at their first use. */
  struct cubert_ocl_comm_reduce *comm_reduce;
  /* Pinned host buffers handed out by host_alloc (pinned.c). */
  struct cubert_ocl_pinned *pinned;
  uint64_t next_storage_id;
  /* Bumped whenever the server releases a cl_mem (a new object may then reuse its address):
     kernel argument caches older than this are stale. Starts at 1. */
  uint64_t mem_generation;
  /* Objects replaced while a launch sets its arguments (a slice's sub-buffer, an info buffer),
     released once the launch was enqueued, so no argument set earlier in the same launch can
     refer to a freed object. */
  cl_mem *deferred;
  size_t deferred_count, deferred_capacity;
  cl_mem *pages; /* live storage pages, freed at destroy if the core did not */
  size_t page_count, page_capacity;
  cubert_server_stream *streams;
  /* caches */
  struct cubert_ocl_program *programs;
  struct cubert_ocl_kernel_ref *kernel_refs[CUBERT_OCL_KERNEL_BUCKETS];
  cubert_ocl_info_entry info[CUBERT_OCL_INFO_ENTRIES];
  cubert_ocl_staging staging;
  char *cache_dir;     /* disk cache folder, NULL: disabled */
  char *device_key;    /* device, driver, platform and cubert versions (disk cache key) */
  int refresh_pending; /* some program has `refresh` set: sync refreshes the disk cache */
  cubert_ocl_cache_stats stats;
  /* Test hook: called by a sync right after it enqueued its marker (cubert_ocl_finish), so a
     test can make a command fail while the sync waits. NULL in normal use. */
  void (*sync_marker_hook)(void *user);
  void *sync_marker_user;
  /* Wrapped user buffers whose last reference is gone (interop.c), freed under the lock. */
  _Atomic(void *) external_released;
};

static inline cubert_ocl_server *cubert_ocl_server_of(cubert_server *server) {
  return (cubert_ocl_server *)server;
}

/* True when `server` was created by this backend. */
int cubert_ocl_is_server(const cubert_server *server);

/* Test hooks (tests/unit/opencl_*.c). */

/* Replaces the disk cache folder (NULL disables the disk cache). OUT_OF_MEMORY only. */
cubert_status cubert_ocl_server_set_cache_dir(cubert_server *server, const char *dir);
/* Forces large transfers through (1) or around (0) the pinned staging buffer. */
void cubert_ocl_server_set_staging(cubert_server *server, int enabled);
/* Program cache counters since the server was created. */
cubert_ocl_cache_stats cubert_ocl_server_cache_stats(cubert_server *server);
/* Drops the in-memory program cache (what a new process would see). */
void cubert_ocl_server_clear_program_cache(cubert_server *server);

#endif /* CUBERT_OPENCL_SERVER_H */

/* cubert — OpenCL server internals shared by the files of backends/opencl (not installed).

   Every function here is called with the device lock held (server.h), except
   cubert_ocl_event_* helpers that the vtable documents as lock-free. See README.md for the
   design: one in-order queue per stream, per-stream FIFO of commands in flight, sub-buffers
   cached per slice, program caches in memory and on disk. */
#ifndef CUBERT_OPENCL_INTERNAL_H
#define CUBERT_OPENCL_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cache_file.h"
#include "base/thread_team.h"
#include "cubert/profile.h"
#include "cubert/server/combine.h"
#include "cubert/server/gates.h"
#include "opencl/api.h"

/* ---- errors.c: the one place that knows OpenCL error codes ------------------------------- */

/* "CL_OUT_OF_RESOURCES" for -5; "CL_UNKNOWN_ERROR" for codes it does not know. */
const char *cubert_ocl_error_name(cl_int err);
/* The cubert code for an OpenCL error; `fallback` for codes without a specific meaning. */
cubert_code cubert_ocl_error_code(cl_int err, cubert_code fallback);
/* New status "<what>: CL_NAME (err)" with the code of cubert_ocl_error_code(). */
cubert_status cubert_ocl_status(cl_int err, cubert_code fallback, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* New status for a command that ended with the negative execution status `status`:
   OUT_OF_MEMORY for the allocation failures (drivers allocate lazily, at first use), else
   EXECUTION; the message is "<what>: execution status CL_NAME (status)". */
cubert_status cubert_ocl_exec_status(cl_int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- device.c: enumeration and properties ------------------------------------------------ */

/* One entry of the stable device enumeration. `device` is NULL for a platform whose device
   list could not be read. */
typedef struct cubert_ocl_device_entry {
  cl_platform_id platform;
  cl_device_id device;
  int available;
  char reason[256];
  cubert_device_properties properties;
} cubert_ocl_device_entry;

/* Lists every platform (sorted by name, then vendor; loader order among equals) and its
   devices in the platform's order. Never fails for a broken platform or device: those are
   entries with available = 0 and a reason. Zero platforms gives *out_count = 0. The array is
   freed with free(). OUT_OF_MEMORY only. */
cubert_status cubert_ocl_list_devices(cubert_ocl_device_entry **out, size_t *out_count);
/* Resolves a selector spec ("", "N", "gpu", "cpu") to an index of `entries`. NOT_FOUND
   listing the valid choices for an unknown spec; UNAVAILABLE for an entry that exists but
   cannot be opened, or for "" when no device is available. */
cubert_status cubert_ocl_select(const char *spec, const cubert_ocl_device_entry *entries,
                                size_t count, size_t *out_index);
/* Fills `out` from device queries. `probe_context` may be NULL: a context is then created for
   the trivial kernel that measures the preferred work-group multiple when no device-level
   query gives it. */
cubert_status cubert_ocl_query_properties(cl_platform_id platform, cl_device_id device,
                                          cl_context probe_context, cubert_device_properties *out);
/* True when the device shares memory with the host (PoCL CPU devices, integrated GPUs):
   staging through pinned memory would only add a copy there. */
int cubert_ocl_device_host_unified(cl_device_id device);
/* Reads a string device/platform info into a malloc'd string ("" on failure; NULL only when
   out of memory). */
char *cubert_ocl_device_string(cl_device_id device, cl_device_info param);
char *cubert_ocl_platform_string(cl_platform_id platform, cl_platform_info param);

/* ---- the server objects ------------------------------------------------------------------ */

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

/* The validate record of kernel-language kernels (cubert/cube_prelude.cl gives the layout), and
   how many distinct kernels a stream may launch in validate mode between two reads of it. */
#define CUBERT_OCL_RECORD_WORDS 16
/* A bit on the execution mode passed to cubert_ocl_kernel_get: the launch's units all lie below
   every buffer's length (in the declared element type), so a kernel-language kernel is built
   with -DCUBERT_OWN_SAFE=1 and its LOAD_UNIT/STORE_UNIT carry no check. A separate program per
   variant, cached like the modes. */
#define CUBERT_OCL_OWN_SAFE 4
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

/* A built program: one per (source text, build options) on this server's device. */
typedef struct cubert_ocl_program {
  uint64_t source_hash;
  size_t source_len;
  char *source;
  char *options;
  cl_program program;
  /* Disk cache (disk_cache.c): the key text (NULL when out of memory), the size of the binary
     the cache file holds as far as this server knows (0: none written or loaded yet), and
     `refresh`: a kernel of the program was launched at a new local size since the binary was
     last compared, so the driver may have added compiled code to it. */
  char *disk_key;
  size_t disk_size;
  int refresh;
  struct cubert_ocl_kernel *kernels; /* kernel objects of this program, one per entry */
  struct cubert_ocl_program *next;
} cubert_ocl_program;

/* A kernel object of a program, with the argument values last set on it (clSetKernelArg is
   skipped when the value did not change: launches of one kernel usually repeat buffers). */
typedef struct cubert_ocl_kernel {
  cubert_ocl_program *program;
  char *entry;
  char *what; /* "kernel 'name'" for error messages of commands in flight */
  cl_kernel kernel;
  uint32_t arg_count;       /* CL_KERNEL_NUM_ARGS */
  uint64_t max_units;       /* CL_KERNEL_WORK_GROUP_SIZE: may be below the device's limit */
  uint64_t local_mem;       /* CL_KERNEL_LOCAL_MEM_SIZE: the kernel's shared memory, bytes */
  cl_mem *args;             /* [arg_count], last values set */
  uint64_t args_generation; /* server mem_generation when `args` was valid; 0: nothing set */
  /* Local sizes launched so far. Drivers compile a work-group function per local size at its
     first launch, and a program binary taken afterwards may contain it (PoCL's does), so the
     first launch at each size marks the program for a disk cache refresh. `local_last` is
     the launch's one check; `locals` holds up to CUBERT_OCL_MAX_LOCAL_SIZES sizes. */
  uint32_t local_last[3];
  uint32_t (*locals)[3];
  uint32_t local_count;
  struct cubert_ocl_kernel *next;
} cubert_ocl_kernel;

/* Local sizes remembered per kernel; launches at further sizes no longer refresh the disk
   cache (an autotuner trying hundreds of sizes should not rewrite the file each time). */
#define CUBERT_OCL_MAX_LOCAL_SIZES 16u

/* Fast path of the launch: a kernel definition (by address, and the addresses of its strings)
   and execution mode -> kernel object. `immutable`: the strings lie in read-only memory, so
   the addresses identify the text; otherwise the launch compares the text with the program's
   copy (and `user_options`, a copy of the definition's options) and looks a changed
   definition up again (program.c). */
typedef struct cubert_ocl_kernel_ref {
  const cubert_kernel_def *def;
  const char *source, *entry, *options;
  uint32_t flags;
  cubert_execution_mode mode;
  int immutable;
  char *user_options; /* NULL when immutable or without options */
  cubert_ocl_kernel *kernel;
  struct cubert_ocl_kernel_ref *next;
} cubert_ocl_kernel_ref;

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
  cubert_ocl_program *programs;
  cubert_ocl_kernel_ref *kernel_refs[CUBERT_OCL_KERNEL_BUCKETS];
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

/* ---- memory.c ---------------------------------------------------------------------------- */

/* Address space a new page of a host-unified device must leave to spare beyond its own size
   (the driver's alignment and bookkeeping). */
#define CUBERT_OCL_HOST_SLACK_BYTES (1ull << 20)

cubert_status cubert_ocl_storage_alloc(cubert_server *server, uint64_t size, cubert_storage *out);
void cubert_ocl_storage_free(cubert_server *server, cubert_storage *storage);
void cubert_ocl_slice_cache_release(cubert_server *server, cubert_slice *slice);
/* The cl_mem a kernel sees for `binding`: NULL for an empty binding, the page itself when the
   binding starts at the page start, else a sub-buffer from the binding to the slice's end,
   cached in the slice (one region per slice; a different one replaces it). Owned by the page
   or the slice. UNSUPPORTED_IO_OPERATION for an offset that is not a multiple of
   memory.alignment. */
cubert_status cubert_ocl_binding_kernel_mem(cubert_ocl_server *server,
                                            const cubert_binding *binding, cl_mem *out);
/* Releases `mem` after the current launch was enqueued (see cubert_ocl_server.deferred). */
void cubert_ocl_defer_release(cubert_ocl_server *server, cl_mem mem);
void cubert_ocl_release_deferred(cubert_ocl_server *server);
cubert_status cubert_ocl_read(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size);
cubert_status cubert_ocl_read_async(cubert_server *server, cubert_server_stream *stream,
                                    const cubert_binding *src, void *dst, uint64_t size,
                                    cubert_event **out_event);
cubert_status cubert_ocl_write_async(cubert_server *server, cubert_server_stream *stream,
                                     const cubert_binding *dst, const void *src, uint64_t size,
                                     cubert_event **out_event);
/* comm_reduce.c: the vtable's comm_reduce; the kernels' release at server destroy. */
cubert_status cubert_ocl_comm_reduce(cubert_server *server, cubert_server_stream *stream,
                                     const cubert_binding *dst, const cubert_binding *own,
                                     const cubert_binding *others, size_t n, size_t own_rank,
                                     size_t count, cubert_dtype dtype, cubert_reduce_op op);
void cubert_ocl_comm_reduce_release(cubert_ocl_server *server);
cubert_status cubert_ocl_copy(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, const cubert_binding *dst);
cubert_status cubert_ocl_write(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size);

/* ---- staging.c --------------------------------------------------------------------------- */

/* Transfers from these sizes on go through the staging buffer on devices with their own
   memory. Measured on an NVIDIA H200 (README.md): drivers move small pageable writes through
   their own pinned buffer at 12-14 GB/s, so staging wins for writes only from ~8 MiB, while
   pageable reads are slower and staging wins from ~2 MiB. */
#ifndef CUBERT_OCL_STAGING_MIN_WRITE
#define CUBERT_OCL_STAGING_MIN_WRITE (8u << 20)
#endif
#ifndef CUBERT_OCL_STAGING_MIN_READ
#define CUBERT_OCL_STAGING_MIN_READ (2u << 20)
#endif
/* Writes below this size are copied and enqueued without waiting (the copy is freed when the
   write completed); larger ones that are not staged are blocking writes. */
#define CUBERT_OCL_WRITE_COPY_MAX (1u << 20)
cubert_status cubert_ocl_staged_write(cubert_ocl_server *server, cubert_server_stream *stream,
                                      const cubert_binding *dst, const void *src, uint64_t size);
cubert_status cubert_ocl_staged_read(cubert_ocl_server *server, cubert_server_stream *stream,
                                     const cubert_binding *src, void *dst, uint64_t size);
/* Waits for the staging slots, unmaps and frees the buffer, stops the copy threads. */
void cubert_ocl_staging_release(cubert_ocl_server *server);

/* ---- program.c (in-memory cache) and disk_cache.c ---------------------------------------- */

/* Checks the kernel's required features against the device: COMPILATION naming the missing
   feature (fp64, fp16). Pure; exposed for tests. */
cubert_status cubert_ocl_check_kernel_features(const cubert_device_properties *properties,
                                               const cubert_kernel_def *kernel);
/* The kernel object for (kernel, mode), building (or loading) its program on first use. */
cubert_status cubert_ocl_kernel_get(cubert_ocl_server *server, const cubert_kernel_def *kernel,
                                    cubert_execution_mode mode, cubert_ocl_kernel **out);
/* The complete build options for `kernel` in `mode` (malloc'd; NULL when out of memory). */
char *cubert_ocl_build_options(const cubert_kernel_def *kernel, cubert_execution_mode mode);
/* Removes from `options`, in place, every blank-separated option that starts with `prefix`
   (-cl-nv- on compilers other than NVIDIA's, kernel.h). Pure; exposed for tests. */
void cubert_ocl_drop_options(char *options, const char *prefix);
/* Frees every program and kernel object (the in-memory cache) after a last disk cache refresh
   of each (cubert_ocl_disk_refresh); the disk cache stays. */
void cubert_ocl_program_cache_clear(cubert_ocl_server *server);
/* Called by the launch when `local` differs from k->local_last: remembers the size and, the
   first time the kernel runs at it, marks the program for a disk cache refresh. Kept out of
   line so that the launch pays three compares. */
void cubert_ocl_kernel_note_local(cubert_ocl_server *server, cubert_ocl_kernel *k,
                                  const uint32_t local[3]);
/* Refreshes the disk cache of every program marked since the last call (sync calls it once
   the stream's work completed, so the launches that marked them were compiled). */
void cubert_ocl_programs_refresh(cubert_ocl_server *server);
/* FNV-1a 64 over bytes, chained from `seed` (use CUBERT_OCL_FNV_SEED to start). */
#define CUBERT_OCL_FNV_SEED CUBERT_FNV1A64_SEED
static inline uint64_t cubert_ocl_fnv1a(uint64_t seed, const void *data, size_t size) {
  return cubert_fnv1a64(seed, data, size);
}

/* Disk cache of program binaries. The key text names the program and the device
   (cubert_ocl_disk_key). load: a built program from a valid file, NULL when missing or
   damaged (a damaged file counts in stats.disk_rejected and is replaced by the next refresh);
   *out_size is the binary's size. refresh: reads the program's binary size back and, when it
   differs from program->disk_size (nothing stored yet, or the driver added compiled code),
   writes the binary through a temporary file and rename and updates disk_size; an unwritable
   folder logs one warning per process and is otherwise ignored. Clears program->refresh. */
char *cubert_ocl_disk_key(const cubert_ocl_server *server, uint64_t source_hash, size_t source_len,
                          const char *options);
/* Path of the cache file for `key` into out[0..capacity); 0 when the cache is disabled or the
   path does not fit. */
int cubert_ocl_disk_path(const cubert_ocl_server *server, const char *key, char *out,
                         size_t capacity);
cl_program cubert_ocl_disk_load(cubert_ocl_server *server, const char *key, const char *options,
                                size_t *out_size);
/* Bounds of a cache file: absurd sizes from a damaged header are refused before allocating,
   and larger files are not read at all. */
#define CUBERT_OCL_DISK_MAX_BINARY_BYTES (1ull << 31)
#define CUBERT_OCL_DISK_MAX_KEY_BYTES (1u << 20)
#define CUBERT_OCL_DISK_MAX_FILE_BYTES \
  (32ull + CUBERT_OCL_DISK_MAX_KEY_BYTES + CUBERT_OCL_DISK_MAX_BINARY_BYTES)
/* Validates the bytes of a cache file held in memory against `key` (magic, format, key text in
   full, lengths against `size`, checksum of the binary): NULL and the binary's place
   data[*out_offset .. *out_offset + *out_size) when valid, else the reason (static text).
   Pure, any input is safe (tests/fuzz/fuzz_disk_cache.c). */
const char *cubert_ocl_disk_parse(const unsigned char *data, size_t size, const char *key,
                                  size_t *out_offset, size_t *out_size);
void cubert_ocl_disk_refresh(cubert_ocl_server *server, cubert_ocl_program *program);
/* Number of "cache folder unwritable" warnings logged by this process (0 or 1). */
uint32_t cubert_ocl_disk_warning_count(void);
/* The default folder: $CUBERT_CACHE_DIR, else $XDG_CACHE_HOME/cubert, else ~/.cache/cubert,
   with "/opencl" appended (malloc'd; NULL when none can be formed). */
char *cubert_ocl_default_cache_dir(void);

/* ---- queue.c: streams, commands in flight, events, profiling ----------------------------- */

cubert_status cubert_ocl_stream_create(cubert_server *server, cubert_stream_errors *errors,
                                       cubert_server_stream **out);
void cubert_ocl_stream_destroy(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_ocl_flush(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_ocl_sync(cubert_server *server, cubert_server_stream *stream);
/* Records a command just enqueued on the stream. With an event (ownership moves in): the event
   enters the FIFO and takes over the open batch (it completes after those commands); with
   event == NULL the command joins the open batch. Either way the bindings' slices are retained
   and `host_free` (a host copy of `host_bytes` bytes) is freed once the command completed.
   `profiled`: the command counts for open profile regions. When memory to remember the command
   runs out, the stream is finished instead, so nothing is released early; never fails today,
   returns a status for future growth. */
cubert_status cubert_ocl_track(cubert_server_stream *stream, cl_event event, const char *what,
                               const cubert_binding *bindings, uint32_t binding_count,
                               void *host_free, uint64_t host_bytes, int profiled);
/* True while commands should ask for an event: a profile region is open, or (PoCL only) a
   wait that may still fail is queued. */
static inline int cubert_ocl_wants_event(const cubert_server_stream *stream) {
  return stream->profile_count > 0 || stream->fallible_waits > 0;
}
/* Releases every command that completed; negative statuses become stream errors. */
void cubert_ocl_poll(cubert_server_stream *stream);
/* Sync checks the commands enqueued without an event since the last evented one through a
   marker (cubert_ocl_finish). Build with 0 to make sync a plain clFinish, e.g. to measure what
   the marker costs on a driver. */
#ifndef CUBERT_OCL_SYNC_MARKER
#define CUBERT_OCL_SYNC_MARKER 1
#endif
/* Waits for the stream's queue, then releases every command: clFinish, or a marker waited on
   when commands without events could have failed unseen (queue.c), then a poll. */
cubert_status cubert_ocl_finish(cubert_server_stream *stream);
/* build_log.c: `log` (owned) with locations like `<kernel>:122:8:` (drivers that ignore #line)
   mapped through the #line directives of `source` to the kernel file and line; returns the
   new log (or `log` itself when there is nothing to map, or no memory). */
char *cubert_ocl_log_relocate(const char *source, char *log);
/* Reads and clears the stream's validate record after its commands finished (launch.c): the
   first violation of a validate-mode kernel-language launch as an error, or NULL. */
cubert_status cubert_ocl_record_check(cubert_server_stream *stream);
/* Makes the stream wait for `event` with a barrier, tracked like any command so that a failed
   event becomes an error of this stream. */
cubert_status cubert_ocl_wait_cl_event(cubert_server_stream *stream, cl_event event,
                                       const char *what);
cubert_status cubert_ocl_event_record(cubert_server *server, cubert_server_stream *stream,
                                      cubert_event **out);
/* gate.c, pinned.c */
cubert_status cubert_ocl_gate_create(cubert_server *server, cubert_gate **out);
cubert_status cubert_ocl_gate_wait(cubert_server *server, cubert_server_stream *stream,
                                   cubert_gate *gate);
void cubert_ocl_gate_open(cubert_server *server, cubert_gate *gate, cubert_status error);
void cubert_ocl_gate_release(cubert_server *server, cubert_gate *gate);
typedef struct cubert_ocl_pinned cubert_ocl_pinned;
cubert_status cubert_ocl_host_alloc(cubert_server *server, uint64_t size, void **out);
void cubert_ocl_host_free(cubert_server *server, void *ptr);
void cubert_ocl_pinned_release_all(cubert_ocl_server *server);
/* 1 when [host, host + size) lies inside one pinned buffer of any OpenCL server of the
   process (the driver DMAs it at full speed: no staging copy is needed). */
int cubert_ocl_is_pinned(const void *host, uint64_t size);
cubert_status cubert_ocl_event_wait(cubert_server *server, cubert_server_stream *stream,
                                    cubert_event *event);
cubert_status cubert_ocl_event_sync(cubert_server *server, cubert_event *event);
int cubert_ocl_event_done(cubert_server *server, cubert_event *event);
void cubert_ocl_event_release(cubert_server *server, cubert_event *event);
cubert_status cubert_ocl_profile_begin(cubert_server *server, cubert_server_stream *stream,
                                       uint64_t token);
cubert_status cubert_ocl_profile_end(cubert_server *server, cubert_server_stream *stream,
                                     uint64_t token, cubert_profile_duration *out);

/* ---- launch.c ---------------------------------------------------------------------------- */

cubert_status cubert_ocl_launch(cubert_server *server, cubert_server_stream *stream,
                                const cubert_launch *launch);
/* The launch's kernel object, built or found, checked against its own limits and a static count. */
cubert_status cubert_ocl_launch_kernel(cubert_ocl_server *server, const cubert_launch *launch,
                                       cubert_ocl_kernel **out);
/* Cached device buffer holding `words[0..count)` (owned by the cache). */
cubert_status cubert_ocl_info_buffer(cubert_ocl_server *server, const uint64_t *words,
                                     uint32_t count, cl_mem *out);
void cubert_ocl_info_cache_clear(cubert_ocl_server *server);

/* ---- interop.c --------------------------------------------------------------------------- */

/* Frees the wrapped user buffers released since the last call (cheap when there are none). */
void cubert_ocl_external_drain(cubert_ocl_server *server);

/* ---- server.c --------------------------------------------------------------------------- */

/* True when `server` was created by this backend. */
int cubert_ocl_is_server(const cubert_server *server);

/* ---- server.c: test hooks ---------------------------------------------------------------- */

/* Replaces the disk cache folder (NULL disables the disk cache). OUT_OF_MEMORY only. */
cubert_status cubert_ocl_server_set_cache_dir(cubert_server *server, const char *dir);
/* Threads of the staging copies (0: the default); a test and benchmark hook, called with the
   device lock held. */
void cubert_ocl_server_set_copy_threads(cubert_server *server, size_t threads);
/* Forces large transfers through (1) or around (0) the pinned staging buffer. */
void cubert_ocl_server_set_staging(cubert_server *server, int enabled);
/* Program cache counters since the server was created. */
cubert_ocl_cache_stats cubert_ocl_server_cache_stats(cubert_server *server);
/* Drops the in-memory program cache (what a new process would see). */
void cubert_ocl_server_clear_program_cache(cubert_server *server);

#endif /* CUBERT_OPENCL_INTERNAL_H */

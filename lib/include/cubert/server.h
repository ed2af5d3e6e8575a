/** @file
   cubert — the contract between the core and a compute server (for backend authors).

   The core owns handles, memory pools (over the server's storage), stream slots, cross-stream
   event logic, error queues and validation. A server provides: storage pages, streams that
   execute launches/reads/writes in order, events between streams, and profiling timestamps.

   Locking: the core calls every vtable method with the device lock held, except where noted
   (event_sync, and the completion paths of a backend's own threads). A backend's workers may
   call cubert_slice_release() and cubert_stream_errors_push() from any thread. */
#ifndef CUBERT_SERVER_H
#define CUBERT_SERVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/geometry.h"
#include "cubert/kernel.h"
#include "cubert/ops.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_server cubert_server;
typedef struct cubert_server_stream cubert_server_stream; /**< backend-defined */
typedef struct cubert_event cubert_event;                 /**< backend-defined */
typedef struct cubert_gate cubert_gate;                   /**< backend-defined */
typedef struct cubert_slice cubert_slice;                 /**< core memory slice */
typedef struct cubert_stream_errors cubert_stream_errors; /**< core per-stream error queue */

/* ---- status construction (backends and core) ------------------------------------------- */

/* cubert_status_make is declared in status.h (it is public). */
/** @{ */
/** Attaches numbers / build log / cause. Each returns `status` for chaining; NULL-safe. */
cubert_status cubert_status_set_limits(cubert_status status, uint64_t requested, uint64_t max);
cubert_status cubert_status_set_size(cubert_status status, uint64_t size);
cubert_status cubert_status_set_dims(cubert_status status, const uint32_t requested[3],
                                     const uint32_t max[3]);
cubert_status cubert_status_set_build_log(cubert_status status, const char *log);
/** @} */
/** Reports OUT_OF_MEMORY under `kind` (LAUNCH, the default, or IO for allocations made by
   create/empty/write, as the reference's IoError::OutOfMemory). Ignored for other codes. */
cubert_status cubert_status_set_kind(cubert_status status, cubert_kind kind);
/** Replaces the first words of the message (the code's description) with `headline`, a static
   string: for NOT_FOUND about something other than a handle, say. */
cubert_status cubert_status_set_headline(cubert_status status, const char *headline);
/** Wraps `cause` (ownership moves in) under a new error of `code`. */
cubert_status cubert_status_wrap(cubert_code code, cubert_status cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** SERVER_UNHEALTHY holding `errors[0..count)` (ownership moves in). */
cubert_status cubert_status_unhealthy(cubert_status *errors, size_t count);
/** Several errors as one, taking `list` (malloc'd, `count` entries) and its statuses: NULL for
   none, the error itself for one, SERVER_UNHEALTHY holding them all for more. */
cubert_status cubert_status_merge(cubert_status *list, size_t count);
/** Deep copy (for errors reported to several waiters). */
cubert_status cubert_status_clone(cubert_status status);

/* ---- storage ----------------------------------------------------------------------------- */

/** One page of device memory, allocated by the server. */
typedef struct cubert_storage {
  void *host_ptr; /**< host-addressable base (CPU server), else NULL */
  void *native;   /**< backend object (cl_mem), else NULL */
  uint64_t size;  /**< bytes */
  uint64_t id;    /**< unique within the server */
} cubert_storage;

/** A slice of a page handed to kernels and copies. Backends may read `page`, `offset`, `size`
   and use the two cache fields; everything else in the slice belongs to the core. */
struct cubert_slice {
  _Atomic uint32_t refcount;     /**< handles + bindings (queued launches included); 0 = free */
  _Atomic uint32_t handle_count; /**< core: the handles (views) among them */
  cubert_storage *page;          /**< the page the slice lies in */
  uint64_t offset;               /**< bytes from the start of the page */
  uint64_t size;                 /**< bytes */
  uint64_t padding;              /**< bytes after size reserved for alignment */
  /** Backend cache tied to this slice's current (offset, size), e.g. an OpenCL sub-buffer.
     The core calls the server's slice_cache_release when the slice changes or dies. */
  void *backend_cache;
  uint64_t backend_cache_offset; /**< the offset backend_cache was made for */
  uint64_t backend_cache_size;   /**< the size backend_cache was made for */
  /** Cross-stream tracking (core): the stream slot and cursor of the last command that used
     this slice (any bound buffer may be written). */
  uint32_t last_stream;
  uint64_t last_cursor; /**< see last_stream */
  void *pool_private;   /**< memory manager bookkeeping */
  /** A slice no memory manager owns (pool_private NULL) that wraps memory of the user
     (interop: cubert_interop_wrap): called, on whatever thread drops the last reference, to
     give the memory back. NULL for pool slices. */
  void (*external_release)(cubert_slice *slice);
};

/** @{ */
/** Retain/release a slice for work in flight (thread-safe; release may run on any thread). */
void cubert_slice_retain(cubert_slice *slice);
void cubert_slice_release(cubert_slice *slice);
/** @} */

/** A resolved buffer argument: bytes [offset, offset+size) of `slice->page`. */
typedef struct cubert_binding {
  cubert_slice *slice; /**< the slice (and through it the page) */
  uint64_t offset;     /**< bytes from the start of the page (slice offset + view offset) */
  uint64_t size;       /**< bytes */
} cubert_binding;

/** The host address of the binding's first byte (CPU server pages), else NULL. */
static inline void *cubert_binding_host_ptr(const cubert_binding *b) {
  return b->slice->page->host_ptr ? (char *)b->slice->page->host_ptr + b->offset : NULL;
}

/* ---- per-stream error queue (core-owned, filled by backends) ---------------------------- */

/** Records an error raised after the call that caused it returned (thread-safe; ownership of
   `error` moves in). The next flush/sync/read on the stream returns SERVER_UNHEALTHY. */
void cubert_stream_errors_push(cubert_stream_errors *errors, cubert_status error);
/** True while the stream holds unreported errors: a backend skips work that depends on a
   failed operation (thread-safe). */
int cubert_stream_errors_pending(cubert_stream_errors *errors);

/* ---- gates (lib/stream/gate_state.c): the part of a gate every server shares ---------- */

/** Who waits on a gate, whether it is open, an error given before the wait (server.h vtable
   "Gates"). A server's gate embeds one and adds its signal. */
typedef struct cubert_gate_state {
  pthread_mutex_t mu;           /**< guards the fields below */
  cubert_stream_errors *errors; /**< the waiting stream's queue */
  cubert_status pending;        /**< an error given before the wait */
  int waited;                   /**< a stream waits (or waited) on the gate */
  int opened;                   /**< the gate is open */
} cubert_gate_state;
/** Initialises a closed gate nobody waits on. */
void cubert_gate_state_init(cubert_gate_state *gate);
/** Frees a pending error. */
void cubert_gate_state_destroy(cubert_gate_state *gate);
/** Registers the waiting stream's queue: -1 when the gate has a waiter already, 1 when it is
   open (its pending error, if any, was pushed to `errors`: no wait needed), 0 when the server
   must queue its wait. */
int cubert_gate_state_wait(cubert_gate_state *gate, cubert_stream_errors *errors);
/** Undoes a wait the server failed to queue. */
void cubert_gate_state_unwait(cubert_gate_state *gate);
/** Opens the gate (ownership of `error` moves in): pushes the error to the waiting stream's
   queue, or keeps it for the wait. 2: opened, a wait is queued (signal it now); 1: opened,
   nobody waits yet; 0: it was open already (the error is freed). */
int cubert_gate_state_open(cubert_gate_state *gate, cubert_status error);

/* ---- launches ---------------------------------------------------------------------------- */

/** A launch as the core hands it to a server (validated; see the vtable's launch). */
typedef struct cubert_launch {
  const cubert_kernel_def *kernel;     /**< what to run */
  uint32_t cube_count[3];              /**< static cube count (when dynamic_count is NULL) */
  const cubert_binding *dynamic_count; /**< non-NULL: read 3 u32 from here when it executes */
  cubert_cube_dim cube_dim;            /**< units per cube */
  const cubert_binding *bindings;      /**< the buffers, in binding order */
  uint32_t binding_count;              /**< entries of bindings */
  const uint64_t *info;                /**< info words */
  uint32_t info_count;                 /**< entries of info */
  cubert_execution_mode mode;          /**< effective mode (cubert_kernel_effective_mode) */
} cubert_launch;

/* ---- kernel-language checks (lib/kernel_check.c) ------------------------------------------ */

/** A violation seen by a kernel in validate mode, as both servers report it. */
typedef enum cubert_violation_kind {
  CUBERT_VIOLATION_BUFFER = 1,  /**< element `index` of buffer `buffer`, which holds `length` */
  CUBERT_VIOLATION_INFO = 2,    /**< info word `index` of `length` */
  CUBERT_VIOLATION_BARRIER = 3, /**< `what` at source line `line` */
  CUBERT_VIOLATION_SANITIZER =
      4, /**< the kernel sanitizer's finding `what` (names its own lines) */
  CUBERT_VIOLATION_INFO_LIMIT =
      5, /**< info word `buffer` holds `index`, above the kernel's limit `length` */
} cubert_violation_kind;
/** One violation, with what its kind names. */
typedef struct cubert_kernel_violation {
  cubert_violation_kind kind; /**< what was violated */
  uint32_t buffer;            /**< BUFFER: the buffer's index */
  int has_unit;               /**< unit/cube are known */
  uint32_t unit[3];           /**< the unit's position in its cube */
  uint32_t cube[3];           /**< the cube's position */
  uint64_t index;             /**< BUFFER, INFO: the element or word accessed */
  uint64_t length;            /**< BUFFER, INFO: elements or words there are */
  uint32_t line;              /**< BARRIER: the source line */
  const char *what;           /**< BARRIER: what was wrong (static string) */
} cubert_kernel_violation;
/** The error for `v` in kernel `kernel` (GENERIC), naming the kernel, the buffer (index, name and
   type from the signature when there is one), the unit and cube position, the index and the
   length. */
cubert_status cubert_kernel_violation_status(const cubert_kernel_def *kernel,
                                             const cubert_kernel_violation *v);
/** The mode a launch asked for, after CUBERT_CHECK_MODE (enforce: at least checked; validate:
   every launch validates). */
cubert_execution_mode cubert_kernel_effective_mode(cubert_execution_mode requested);

/* ---- optional capability: the kernel sanitizer's view of buffer contents ------------------ */

/** What a server with a kernel sanitizer (validate mode) learns from the core about buffer
   contents, so that a sanitized launch can report reads of bytes nothing wrote. Writes,
   launches and copies the server runs itself it tracks itself; this table carries only what the
   core knows and the server cannot see. A server without a sanitizer leaves the vtable's
   `sanitizer` NULL. */
typedef struct cubert_server_sanitizer {
  /** The bytes of `binding` hold nothing written yet (cubert_client_empty made them): a
     sanitized launch that reads one before a write, a launch or a copy fills it reports an
     uninitialised read. Called with the device lock held, before any command uses the binding
     (no queued command can use its memory: the pool hands out only memory no command holds). */
  void (*mark_undefined)(cubert_server *server, const cubert_binding *binding);
} cubert_server_sanitizer;

/* ---- the vtable -------------------------------------------------------------------------- */

/** Which implementation of a kernel definition a server runs (cubert/kernel.h). */
typedef enum cubert_kernel_form {
  CUBERT_KERNEL_FORM_OPENCL = 0, /**< `opencl_source`, built for the device */
  CUBERT_KERNEL_FORM_CPU = 1,    /**< the C function `cpu` (and `cpu_sanitize`) */
} cubert_kernel_form;

/** What a server implements, one function pointer per operation. The core calls them with the
   device lock held unless a method says otherwise. */
typedef struct cubert_server_vtable {
  /** The kernel implementation the server runs: a launch of a kernel without it is refused by
     the core (COMPILATION), and only CUBERT_KERNEL_FORM_CPU servers check `shared_bytes`. */
  cubert_kernel_form kernel_form;

  /** Waits for all work, frees every stream and page the server still holds. */
  void (*destroy)(cubert_server *server);

  /** Storage: one page of `size` bytes (aligned to properties.memory.alignment).
     OUT_OF_MEMORY with the size when the device or host refuses. */
  cubert_status (*storage_alloc)(cubert_server *server, uint64_t size, cubert_storage *out);
  /** Frees a page storage_alloc made. */
  void (*storage_free)(cubert_server *server, cubert_storage *storage);
  /** Frees slice->backend_cache (may be NULL in the vtable when the backend caches nothing). */
  void (*slice_cache_release)(cubert_server *server, cubert_slice *slice);

  /** Streams. `errors` is the core's queue for this stream, valid until stream_destroy. */
  cubert_status (*stream_create)(cubert_server *server, cubert_stream_errors *errors,
                                 cubert_server_stream **out);
  /** Waits for the stream's work, then frees it. */
  void (*stream_destroy)(cubert_server *server, cubert_server_stream *stream);

  /** Queues a launch after earlier work on `stream`. The launch struct and its arrays belong to
     the caller: copy what is kept, and retain every binding's slice until the launch finished
     (the core has validated limits and handles already). */
  cubert_status (*launch)(cubert_server *server, cubert_server_stream *stream,
                          const cubert_launch *launch);
  /** Copies `size` bytes from src (after earlier work on the stream) to host `dst`. Blocks. */
  cubert_status (*read)(cubert_server *server, cubert_server_stream *stream,
                        const cubert_binding *src, void *dst, uint64_t size);
  /** Starts a read; the server fills *out_event, signalled when `dst` holds the data.
     May be NULL: the core then reads synchronously. */
  cubert_status (*read_async)(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size,
                              cubert_event **out_event);
  /** Copies host `src` into dst after earlier work on the stream. `src` may be reused by the
     caller when this returns. */
  cubert_status (*write)(cubert_server *server, cubert_server_stream *stream,
                         const cubert_binding *dst, const void *src, uint64_t size);
  /** Starts a write from host memory the caller keeps valid and unchanged until *out_event is
     signalled (pinned memory from any server's host_alloc is DMA'd directly); submitted
     before it returns. Works without the device lock on a communicator's private stream.
     May be NULL: callers use write, which returns once `src` may be reused. */
  cubert_status (*write_async)(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size,
                               cubert_event **out_event);
  /** Optional, for the communicators (lib/comm/README.md, "Device combination"): queues on
     `stream`, for i in [0, count): dst[i] = v_0 op v_1 op ... op v_{n-1}, left to right over
     the ranks, where v_own_rank = own[i] and the other ranks' values are runs of `count`
     elements in `others` (rank r < own_rank at run r, r > own_rank at run r - 1). f32, i32,
     and f64 on devices with CUBERT_FEATURE_FP64; op sum, max, min or mean, with the host
     reduction's semantics (integer sums wrap, max/min propagate NaN, mean divides the sum by
     n once, integers truncating toward zero: cubert/comm.h); byte offsets are
     multiples of the element size. Works WITHOUT the device lock on a communicator's private
     stream, like write_async. count 0 queues nothing but prepares (builds) what the server
     needs, so a communicator learns at creation whether it works. NULL: the communicator
     combines on the host. */
  cubert_status (*comm_reduce)(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const cubert_binding *own,
                               const cubert_binding *others, size_t n, size_t own_rank,
                               size_t count, cubert_dtype dtype, cubert_reduce_op op);
  /** Copies src->size bytes from src to dst (same size, not overlapping) on the device, after
     earlier work on the stream, retaining both slices until it completed (cubert_client_to_client
     between two clients of one device). May be NULL: the core launches the copy kernel. */
  cubert_status (*copy)(cubert_server *server, cubert_server_stream *stream,
                        const cubert_binding *src, const cubert_binding *dst);
  /** Submits queued work; does not wait. */
  cubert_status (*flush)(cubert_server *server, cubert_server_stream *stream);
  /** Waits until every command queued on the stream completed. */
  cubert_status (*sync)(cubert_server *server, cubert_server_stream *stream);

  /** @{ */
  /** Events (reference EventStreamBackend). record = flush the stream and return an event that
     completes with the work queued so far; wait = make `stream` wait for it on the device;
     event_sync = host wait (called WITHOUT the device lock); release frees it. */
  cubert_status (*event_record)(cubert_server *server, cubert_server_stream *stream,
                                cubert_event **out);
  cubert_status (*event_wait)(cubert_server *server, cubert_server_stream *stream,
                              cubert_event *event);
  cubert_status (*event_sync)(cubert_server *server, cubert_event *event);
  int (*event_done)(cubert_server *server, cubert_event *event); /**< non-blocking poll */
  void (*event_release)(cubert_server *server, cubert_event *event);
  /** @} */

  /** @{ */
  /** Gates: make a stream wait, on the device, for something a host thread finishes later
     (lib/stream/README.md "Gates"; the communicators' collectives use them). gate_create makes
     a closed gate; gate_wait queues, after earlier work on `stream`, a command that completes
     only once the gate is open (at most one gate_wait per gate); commands queued behind it
     start after that. gate_open opens it, on any thread and WITHOUT the device lock: with an
     `error` (ownership moves in), the error is first pushed to the waiting stream's error
     queue, so the stream's next flush/sync/read reports it (SERVER_UNHEALTHY) and the backend
     may skip work queued behind it; a gate opened before gate_wait was called lets the wait
     pass at once (the error is then pushed at gate_wait). Opening twice is a no-op (the second
     error is freed). gate_release frees the gate (lock held): the waiting command, if any,
     stays valid until it completed. Every gate that was waited on must be opened, or the
     stream never drains. gate_open, gate_release, and event_sync/event_release of any event,
     must work without the device lock: the thread that opens a gate cannot take the lock,
     since a user thread may hold it while it syncs the gated stream. For the same reason a
     communicator's member thread uses its own private streams (read_async, write below
     CUBERT_OCL_STAGING_MIN_WRITE, flush, event_record) without the lock; a server keeps
     per-stream state apart from what the device lock guards, so that this is safe. A server may
     leave all four NULL: cubert_comm_create then refuses its clients (UNSUPPORTED_IO_OPERATION). */
  cubert_status (*gate_create)(cubert_server *server, cubert_gate **out);
  cubert_status (*gate_wait)(cubert_server *server, cubert_server_stream *stream,
                             cubert_gate *gate);
  void (*gate_open)(cubert_server *server, cubert_gate *gate, cubert_status error);
  void (*gate_release)(cubert_server *server, cubert_gate *gate);
  /** @} */

  /** @{ */
  /** Pinned host memory for staging transfers: `size` bytes the device copies to and from at
     full speed (OpenCL: a mapped CL_MEM_ALLOC_HOST_PTR buffer), any alignment of 64 or more.
     May be NULL (callers then use malloc'd memory). host_free takes the pointer host_alloc
     gave. Both with the device lock held. */
  cubert_status (*host_alloc)(cubert_server *server, uint64_t size, void **out);
  void (*host_free)(cubert_server *server, void *ptr);
  /** @} */

  /** @{ */
  /** Profiling. profile_begin marks the start of a profiled region on the stream;
     profile_end marks its end, waits, and returns the elapsed time in ns and the method.
     Regions may nest and overlap (`token` identifies one). */
  cubert_status (*profile_begin)(cubert_server *server, cubert_server_stream *stream,
                                 uint64_t token);
  cubert_status (*profile_end)(cubert_server *server, cubert_server_stream *stream, uint64_t token,
                               uint64_t *out_ns, cubert_timing_method *out_method);
  /** @} */

  /** The kernel sanitizer's capability table; NULL when the server has no sanitizer. */
  const cubert_server_sanitizer *sanitizer;
} cubert_server_vtable;

/** A server object; backends embed it as their first member. */
struct cubert_server {
  const cubert_server_vtable *vtable;  /**< the backend's methods */
  cubert_device_properties properties; /**< filled by the backend's create */
};

/* ---- interop (lib/interop.c) ------------------------------------------------------------- */

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
typedef struct cubert_handle cubert_handle; /**< Device memory (handle.h). */
/** Helpers for the backends' public interop headers (cubert/opencl.h, cubert/cpu.h): they reach
   a client's server and calling stream, and the memory behind a handle, without the core
   knowing any backend. A call brackets its work with begin/end; in between the caller holds
   the client, the device lock and the calling stream's slot. */
typedef struct cubert_interop {
  cubert_server *server;        /**< the client's server */
  cubert_server_stream *stream; /**< the calling stream's server stream */
  /* core-private */
  cubert_client *client_;
  void *client_obj_;
  uint32_t slot_;
} cubert_interop;
/** Takes `client`, checks that it runs on the backend named `backend`, locks the device and
   takes the calling stream's slot. Errors name the function `fn`: INVALID_ARGUMENT for a NULL
   client or a client of another backend (naming the client's server and device), NOT_FOUND
   for a released client. On error nothing is held. */
cubert_status cubert_interop_begin(cubert_client *client, const char *backend, const char *fn,
                                   cubert_interop *out);
/** Gives everything back; returns `s`. */
cubert_status cubert_interop_end(cubert_interop *io, cubert_status s);
/** The binding of `handle` (named `what` in errors: INVALID_ARGUMENT for NULL, NOT_FOUND for a
   released or foreign handle), after making the calling stream wait (on the device) for the
   last command of any other stream that used it, and recording the calling stream as its last
   user: cubert work on another stream that uses the handle later waits for everything queued
   on the calling stream until then. */
cubert_status cubert_interop_handle(cubert_interop *io, cubert_handle *handle, const char *what,
                                    cubert_binding *out);
/** Waits for the calling stream's work; SERVER_UNHEALTHY with its asynchronous errors. */
cubert_status cubert_interop_sync(cubert_interop *io);
/** A new handle over `slice`, which the backend made for memory of the user: page, offset and
   size set, pool_private NULL, external_release set, refcount 0 (the handle takes the first
   reference). The slice counts as used by the calling stream (a first use on another stream
   waits for the calling stream's work so far). On error the caller still owns it. */
cubert_status cubert_interop_wrap(cubert_interop *io, cubert_slice *slice, cubert_handle **out);

/* ---- backends and devices ---------------------------------------------------------------- */

/** One device a backend can open, as listed by cubert-info. */
typedef struct cubert_device_info {
  char selector[64];                   /**< e.g. "cpu", "opencl:1" */
  int available;                       /**< 0: listed with `reason` */
  char reason[256];                    /**< why the device is not available */
  cubert_device_properties properties; /**< its properties (as far as known) */
} cubert_device_info;

/** A backend: lists and opens the devices of one kind (the CPU server, OpenCL). */
typedef struct cubert_backend {
  const char *name; /**< selector prefix: "cpu", "opencl" */
  /** Lists devices into out[0..capacity), sets *out_count to the total number (which may exceed
     capacity). Zero devices is not an error; `out` may be NULL when capacity is 0
     (a count-only query). */
  cubert_status (*enumerate)(cubert_device_info *out, size_t capacity, size_t *out_count);
  /** Opens the device named by `spec` (the selector after "name:", or "" for the bare name).
     NOT_FOUND naming the valid choices for an unknown spec. */
  cubert_status (*create)(const char *spec, cubert_server **out);
  /** The index (in enumerate's list) of the device `spec` names, without opening it: clients
     of one device share one instance (lib/device_registry.c), and "opencl", "opencl:0" and
     "opencl:gpu" may name the same one. create(the index in decimal) must open that device.
     Errors as create. May be NULL: every client then opens its own instance. */
  cubert_status (*resolve)(const char *spec, size_t *out_index);
  /** Prints backend-specific details of device `index` (topology, caches, ...). May be NULL. */
  void (*describe)(size_t index, FILE *out);
} cubert_backend;

/** The backends compiled into this library, NULL-terminated (generated at build time). */
CUBERT_API const cubert_backend *const *cubert_backends(void);

/** Lists the devices of backend `backend` ("cpu", "opencl"; NULL: of every backend, in the
   order of cubert_backends(), the reference's enumerate_all_devices) into out[0..capacity),
   and sets *out_count to their total number, which may exceed capacity (the reference's
   device_count). Every device a backend enumerates is listed, unavailable ones too
   (available 0, with the reason); out[i].selector opens device i with cubert_client_create.
   Each listed device's properties.properties_hash is filled, equal to the one a client of the
   device reports. Does not open the devices; thread-safe. Errors: INVALID_ARGUMENT for a NULL
   out_count, or a NULL out with capacity > 0; NOT_FOUND for a backend not built into the
   library (naming the ones that are); a backend's enumeration failure as it returns it. */
CUBERT_API cubert_status cubert_devices_list(const char *backend, cubert_device_info *out,
                                             size_t capacity, size_t *out_count);
/** The number of devices cubert_devices_list would list for `backend` (NULL: all backends).
   Errors as cubert_devices_list. */
CUBERT_API cubert_status cubert_devices_count(const char *backend, size_t *out_count);

/** Configuration read once from the environment (config.c). */
typedef struct cubert_config {
  const char *device;     /**< CUBERT_DEVICE or NULL */
  uint32_t cpu_threads;   /**< CUBERT_CPU_THREADS, 0: from hwloc */
  const char *cache_dir;  /**< CUBERT_CACHE_DIR or NULL */
  int log_level;          /**< CUBERT_LOG: 0 error, 1 warn, 2 info, 3 debug */
  const char *log_path;   /**< CUBERT_LOG_FILE: where log lines go (appended); NULL: stderr */
  int profile_level;      /**< CUBERT_PROFILE: 0 off, 1 minimal, 2 basic, 3 full */
  const char *trace_path; /**< CUBERT_TRACE or NULL */
  int check_mode;         /**< CUBERT_CHECK_MODE: 0 auto, 1 enforce, 2 validate */
  uint32_t max_streams;   /**< CUBERT_MAX_STREAMS, default 128 */
  int backtrace;          /**< CUBERT_BACKTRACE=1 */
  int autotune;           /**< CUBERT_AUTOTUNE: CUBERT_AUTOTUNE_OFF|MINIMAL|FULL (default) */
  int autotune_cache;     /**< CUBERT_AUTOTUNE_CACHE: 1 (default) use the disk cache, 0 not */
  /** CUBERT_OPENCL_BINARY_CACHE: CUBERT_BINARY_CACHE_AUTO (default: on, except on drivers that
     keep their own kernel cache, PoCL), _OFF or _ON. */
  int opencl_binary_cache;
  /** CUBERT_SANITIZER: 1 (default) validate-mode launches on the CPU server run the kernel
     sanitizer where the kernel was built with it (docs/debugging.md), 0 not. */
  int sanitizer;
  /** CUBERT_POOLS_EXCLUSIVE=1: every reservation is a storage allocation of its own, of exactly
     its size, freed when released (no pages shared, nothing reused), so that ASan and Oclgrind
     see where each buffer ends. */
  int pools_exclusive;
  /** CUBERT_VALIDATE_SEED=n (0..4294967295): validate-mode launches on the CPU server run the
     cubes of a launch and the units of a cube in an order shuffled by the seed. */
  int validate_shuffle;   /**< 1 when CUBERT_VALIDATE_SEED is set (and valid) */
  uint32_t validate_seed; /**< the seed (CUBERT_VALIDATE_SEED) */
} cubert_config;
/** Values of cubert_config.opencl_binary_cache. */
enum {
  CUBERT_BINARY_CACHE_AUTO = 0, /**< on, except on drivers with their own cache */
  CUBERT_BINARY_CACHE_OFF = 1,  /**< never cache program binaries */
  CUBERT_BINARY_CACHE_ON = 2,   /**< always cache them */
};
/** Values of cubert_config.autotune. */
enum {
  CUBERT_AUTOTUNE_OFF = 0,     /**< the first valid candidate, nothing measured */
  CUBERT_AUTOTUNE_MINIMAL = 1, /**< measure priority-0 candidates */
  CUBERT_AUTOTUNE_FULL = 2,    /**< measure every valid candidate */
};
/** The configuration, read from the environment on the first call. Never NULL; thread-safe. */
CUBERT_API const cubert_config *cubert_config_get(void);

/** Logging: the library logs only when CUBERT_LOG asks for it (to stderr). */
void cubert_log(int level, const char *category, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Log levels of cubert_log. */
enum {
  CUBERT_LOG_ERROR = 0, /**< errors */
  CUBERT_LOG_WARN = 1,  /**< warnings */
  CUBERT_LOG_INFO = 2,  /**< information */
  CUBERT_LOG_DEBUG = 3, /**< debugging detail */
};

/** Monotonic clock in ns. */
uint64_t cubert_now_ns(void);

/* On-disk caches (cache_file.c), shared by the OpenCL program cache and the autotune cache.
   None of them ever fails a user's call: callers treat every error as a cache miss. */
/** The seed that starts a cubert_fnv1a64 chain. */
#define CUBERT_FNV1A64_SEED 0xcbf29ce484222325ull
/** FNV-1a 64 over bytes, chained from `seed` (CUBERT_FNV1A64_SEED to start). */
uint64_t cubert_fnv1a64(uint64_t seed, const void *data, size_t size);
/** "<folder>/<suffix>" (malloc'd) where folder is CUBERT_CACHE_DIR, else
   $XDG_CACHE_HOME/cubert (absolute only), else $HOME/.cache/cubert; NULL when none is set. */
char *cubert_cache_dir(const char *suffix);
/** mkdir -p with mode 0755; 0 or an errno value (ENOTDIR when a non-folder is in the way). */
int cubert_cache_make_dirs(const char *dir);
/** Reads a whole regular file of min_bytes..max_bytes into a malloc'd buffer, or returns NULL
   with *out_reason set (and *out_missing when there is no file). The open never blocks and
   anything but a regular file is refused: a FIFO or device node at a cache path must not hang
   or affect the process. */
unsigned char *cubert_cache_file_read(const char *path, size_t min_bytes, size_t max_bytes,
                                      size_t *out_size, const char **out_reason, int *out_missing);
/** Writes parts[0..count) to a unique temporary file beside `path` and renames it over `path`,
   so readers (other processes included) see the old file or the new one, never a mixture,
   even if the writer is killed. 0 or an errno value; the temporary file is removed on
   failure. */
int cubert_cache_file_write(const char *path, const void *const *parts, const size_t *sizes,
                            size_t count);
/** Removes the temporary files that writers of `path` killed mid-write left behind (those whose
   process no longer exists). Best effort; for callers that serialise their writers. */
void cubert_cache_file_remove_stale(const char *path);

/** Thread teams (thread_team.c): `size` members, the calling thread being member 0 and size - 1
   threads kept waiting for work. run calls fn(arg, index, count) once on every member at once
   (count = the team's size, index in [0, count)) and returns when all calls returned; one
   owner thread calls run at a time. A team whose threads could not all start is smaller
   (size reports it); NULL from create (no memory) still works in run and size, as a team of
   one. For work split across a few CPUs: the OpenCL server's staging copies, the
   communicators' host reductions. */
typedef struct cubert_thread_team cubert_thread_team;
/** A team of `size` members (the caller and size - 1 threads), or NULL without memory. */
cubert_thread_team *cubert_thread_team_create(size_t size);
/** Members the team has (1 for NULL). */
size_t cubert_thread_team_size(const cubert_thread_team *team);
/** Calls fn(arg, index, count) on every member at once; returns when all returned. */
void cubert_thread_team_run(cubert_thread_team *team,
                            void (*fn)(void *arg, size_t index, size_t count), void *arg);
/** Stops and joins the team's threads and frees it. Accepts NULL. */
void cubert_thread_team_destroy(cubert_thread_team *team);
/** CPUs this process may run on (sched_getaffinity), at least 1. */
size_t cubert_thread_team_cpus(void);

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_H */

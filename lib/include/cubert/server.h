/** @file
   cubert — the contract between the core and a compute server (for backend authors).

   The core owns handles, memory pools (over the server's storage), stream slots, cross-stream
   event logic, error queues and validation. What every server must implement is the vtable
   below: 16 entries, no more (storage, streams, launch, read/write, flush/sync, events). The
   rest is optional, one `const` table per capability, each in its own header beside the core
   subsystem that calls it and stating its own locking rules; a server points `struct
   cubert_server`'s fields at the tables it has and leaves the others NULL:

   | table (its header in cubert/server/)  | without it, the core ...                  |
   | ------------------------------------- | ----------------------------------------- |
   | cubert_server_transfers (transfers.h) | reads, writes and copies with read, write |
   | cubert_server_pinned (pinned.h)       | stages through malloc'd memory            |
   | cubert_server_profiler (profiler.h)   | times on the host after a sync            |
   | cubert_server_gates (gates.h)         | refuses communicators                     |
   | cubert_server_combine (combine.h)     | combines collectives on the host          |
   | cubert_server_sanitizer (sanitizer.h) | reports no uninitialised reads            |
   | cubert_server_compiler (compiler.h)   | only validates dry-run launches           |

   A backend lists and opens its servers through cubert/backend.h; tests/null_backend/ is the
   smallest backend there is (the required vtable only), to copy when starting a new one.

   Locking: the core calls every vtable method with the device lock held, except event_sync and
   event_release (any thread, without it) and what a communicator's private streams do
   (cubert/server/gates.h). A backend's workers may call cubert_slice_release() and
   cubert_stream_errors_push() from any thread. */
#ifndef CUBERT_SERVER_H
#define CUBERT_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/geometry.h"
#include "cubert/kernel.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_server cubert_server;
typedef struct cubert_server_stream cubert_server_stream; /**< backend-defined */
typedef struct cubert_event cubert_event;                 /**< backend-defined */
typedef struct cubert_slice cubert_slice;                 /**< core memory slice */
typedef struct cubert_stream_errors cubert_stream_errors; /**< core per-stream error queue */

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
CUBERT_API void cubert_slice_retain(cubert_slice *slice);
CUBERT_API void cubert_slice_release(cubert_slice *slice);
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
   `error` moves in). The next flush/sync/read on the stream returns SERVER_UNHEALTHY. The error
   is tagged with the queue's submitter at the time of the push (see below). */
CUBERT_API void cubert_stream_errors_push(cubert_stream_errors *errors, cubert_status error);
/** True while the stream holds unreported errors, whoever submitted the failed command
   (thread-safe, lock-free). */
CUBERT_API int cubert_stream_errors_pending(cubert_stream_errors *errors);

/** Errors per submitter. Stream ids that share a slot share its server stream and this queue.
   A server that sets cubert_server.tags_errors reads the submitter when it queues a command
   (thread-safe; the core sets it, under the device lock, before it hands a slot to another id)
   and keeps it with the command; a failure of the command is pushed with it
   (cubert_stream_errors_push_for), and work of a submitter is skipped only behind that
   submitter's own failures (cubert_stream_errors_pending_for). The core then hands a slot over
   without waiting for the previous owner's work. A server without the flag is waited for at
   each hand-over, so its plain pushes always find the right submitter. */
CUBERT_API uint64_t cubert_stream_errors_submitter(cubert_stream_errors *errors);
/** cubert_stream_errors_push for a command queued by `submitter`. */
CUBERT_API void cubert_stream_errors_push_for(cubert_stream_errors *errors, uint64_t submitter,
                                              cubert_status error);
/** True while errors of `submitter` are unreported (or some were lost for want of memory). */
CUBERT_API int cubert_stream_errors_pending_for(cubert_stream_errors *errors, uint64_t submitter);

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
  /** Bytes of the kernel's dynamic shared array per cube (its signature's dynamic_shared; 0
     without one), checked by the core against the device's shared memory with the static part
     (rounded up to CUBERT_DYNAMIC_SHARED_ALIGN, where the array starts on the CPU server). */
  uint64_t dynamic_shared_bytes;
} cubert_launch;

/* ---- the required vtable ----------------------------------------------------------------- */

/** Which implementation of a kernel definition a server runs (cubert/kernel.h). */
typedef enum cubert_kernel_form {
  CUBERT_KERNEL_FORM_OPENCL = 0, /**< `opencl_source`, built for the device */
  CUBERT_KERNEL_FORM_CPU = 1,    /**< the C function `cpu` (and `cpu_sanitize`) */
} cubert_kernel_form;

/** What every server implements, one function pointer per operation, none NULL. The core calls
   them with the device lock held unless a method says otherwise. */
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
  /** Frees slice->backend_cache when it is set (the core calls it when a slice changes or
     dies; a backend that caches nothing returns at once). */
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
  /** Copies host `src` into dst after earlier work on the stream. `src` may be reused by the
     caller when this returns. */
  cubert_status (*write)(cubert_server *server, cubert_server_stream *stream,
                         const cubert_binding *dst, const void *src, uint64_t size);
  /** Submits queued work; does not wait. */
  cubert_status (*flush)(cubert_server *server, cubert_server_stream *stream);
  /** Waits until every command queued on the stream completed. */
  cubert_status (*sync)(cubert_server *server, cubert_server_stream *stream);

  /** @{ */
  /** Events (reference EventStreamBackend). record = flush the stream and return an event that
     completes with the work queued so far; wait = make `stream` wait for it on the device;
     event_sync = host wait; done = a non-blocking poll; release frees it. event_sync and
     event_release are called WITHOUT the device lock, from any thread. */
  cubert_status (*event_record)(cubert_server *server, cubert_server_stream *stream,
                                cubert_event **out);
  cubert_status (*event_wait)(cubert_server *server, cubert_server_stream *stream,
                              cubert_event *event);
  cubert_status (*event_sync)(cubert_server *server, cubert_event *event);
  int (*event_done)(cubert_server *server, cubert_event *event);
  void (*event_release)(cubert_server *server, cubert_event *event);
  /** @} */
} cubert_server_vtable;

/** @{ */
/** The optional capability tables (each defined in its header, see the top of this file). */
typedef struct cubert_server_transfers cubert_server_transfers;
typedef struct cubert_server_pinned cubert_server_pinned;
typedef struct cubert_server_profiler cubert_server_profiler;
typedef struct cubert_server_gates cubert_server_gates;
typedef struct cubert_server_combine cubert_server_combine;
typedef struct cubert_server_sanitizer cubert_server_sanitizer;
typedef struct cubert_server_compiler cubert_server_compiler;
/** @} */

/** How the core lays out 2-D tensors on a server (the reference's MemoryLayoutPolicy). */
typedef enum cubert_layout_policy {
  /** Rows packed one after another: host memory gains nothing from padding. */
  CUBERT_LAYOUT_POLICY_CONTIGUOUS = 0,
  /** Rows of "optimized" tensors start at a multiple of the storage alignment (GPUs: each row's
     loads coalesce). */
  CUBERT_LAYOUT_POLICY_PITCHED = 1,
} cubert_layout_policy;

/** A server object; backends embed it as their first member and fill it in their create. */
struct cubert_server {
  const cubert_server_vtable *vtable;       /**< the required methods */
  const cubert_server_transfers *transfers; /**< or NULL (cubert/server/transfers.h) */
  const cubert_server_pinned *pinned;       /**< or NULL (cubert/server/pinned.h) */
  const cubert_server_profiler *profiler;   /**< or NULL (cubert/server/profiler.h) */
  const cubert_server_gates *gates;         /**< or NULL (cubert/server/gates.h) */
  const cubert_server_combine *combine;     /**< or NULL (cubert/server/combine.h) */
  const cubert_server_sanitizer *sanitizer; /**< or NULL (cubert/server/sanitizer.h) */
  const cubert_server_compiler *compiler;   /**< or NULL (cubert/server/compiler.h) */
  cubert_layout_policy layout;              /**< how optimized tensors are laid out */
  cubert_device_properties properties;      /**< filled by the backend's create */
  /** 1: the server tags each command's errors with its submitter (see
     cubert_stream_errors_submitter), so a stream slot changes hands without a host wait. */
  int tags_errors;
};

/** NULL when every entry of `vtable` is set, else INVALID_ARGUMENT naming the first missing
   one and `who` (a backend's name): the core checks each server it is given. */
CUBERT_API cubert_status cubert_server_vtable_check(const cubert_server_vtable *vtable,
                                                    const char *who);

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_H */

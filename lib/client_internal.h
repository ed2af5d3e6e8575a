/* cubert — core-internal objects behind the client API: the device (one server instance,
   its lock and stream slots), client views, handles. Not installed. */
#ifndef CUBERT_CLIENT_INTERNAL_H
#define CUBERT_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/object_table.h"
#include "cubert/backend.h"
#include "cubert/client.h"
#include "cubert/profile.h"
#include "cubert/server.h"
#include "cubert/stream.h"
#include "memory/memory_manager.h"
#include "profile.h"
#include "profile_log.h"
#include "stream/parked.h"
#include "stream/timing.h"
#include "trace.h"
#include "transfer.h"

/* One stream slot: the server's queue, the stream's memory, its error queue and the cursors of
   the cross-stream protocol (stream/README.md). Created on first use. */
typedef struct cubert_stream_slot {
  cubert_server_stream *stream;
  cubert_memory_manager *memory;
  cubert_stream_errors *errors;
  uint64_t cursor;       /* commands submitted on this slot so far */
  uint64_t *last_synced; /* [max_streams]: origin cursor this slot has waited for */
  /* The stream id whose work the slot holds now. Ids share slots (id % max_streams); a slot
     changes owner only after the previous owner's work finished, so every error on its queue
     belongs to its owner. */
  cubert_stream_id owner;
} cubert_stream_slot;

/* A device instance: one server, shared by every client view and handle made from it. */
typedef struct cubert_device {
  _Atomic uint32_t refcount; /* client views + live handles */
  cubert_server *server;
  const cubert_backend *backend;
  size_t index;  /* the device's index in the backend's list */
  int private_;  /* opened with "!private": never shared */
  char name[80]; /* "cpu:0", "opencl:1", "opencl:1!private": for messages */
  /* device_registry.c: the process-wide list of shared instances (its lock protects both) */
  struct cubert_device *registry_next;
  int listed;
  /* The device lock. Recursive so that exclusive()/profile() callbacks can use the client
     from the holding thread. Everything below is protected by it. */
  pthread_mutex_t lock;
  uint32_t max_streams;
  cubert_stream_slot **slots; /* [max_streams], lazily created */
  cubert_storage_iface storage;
  cubert_memory_config *pool_override; /* installed layout, used by later slots */
  cubert_pool_config *pool_override_list;
  uint64_t pitch_align; /* row alignment of optimized layouts (0: contiguous) */
  /* The subsystems' per-device state, each owned by its file (see its header for its lock). */
  cubert_parked_errors parked;            /* stream/parked.h */
  cubert_profile_state profiles;          /* profile.h */
  cubert_kernel_stats_table kernel_stats; /* profile_log.h */
  cubert_trace_state trace;               /* trace.h */
  cubert_transfer_state transfer;         /* transfer.h */
  /* The autotune state (tune/tune_internal.h), created at its first use; has its own lock. */
  _Atomic(struct cubert_tuner *) tuner;
} cubert_device;

/* The objects behind the public cubert_client and cubert_handle tokens (object_table.h). */
typedef struct cubert_client_obj {
  cubert_device *device; /* retained */
  int pinned;            /* 1: every call goes to `stream` */
  cubert_stream_id stream;
} cubert_client_obj;

typedef struct cubert_handle_obj {
  cubert_device *device; /* retained */
  cubert_slice *slice;   /* retained; counted in slice->handle_count */
  uint64_t offset;       /* bytes from the slice start */
  uint64_t size;         /* bytes */
  uint32_t slot;         /* stream slot whose memory manager owns the slice */
} cubert_handle_obj;

/* device lifetime */
void cubert_device_retain(cubert_device *device);
void cubert_device_release(cubert_device *device);
/* The instance of the device `selector` names, with a new reference: the shared one, opened on
   first use (device_registry.c), or a new private one for "!private" selectors. */
cubert_status cubert_device_get(const char *selector, cubert_device **out);
/* Opens the device `key` names (registry.h) as a new, unlisted instance with one reference. */
struct cubert_device_key;
cubert_status cubert_device_create(const struct cubert_device_key *key, cubert_device **out);
/* device_registry.c: unlists an instance whose count reached 0; the number listed (tests). */
void cubert_device_registry_remove(cubert_device *device);
size_t cubert_device_registry_count(void);
static inline void cubert_device_lock(cubert_device *d) {
  pthread_mutex_lock(&d->lock);
}
static inline void cubert_device_unlock(cubert_device *d) {
  pthread_mutex_unlock(&d->lock);
}

/* stream slots (stream/slots.c); call with the device lock held */
/* The calling stream's slot, created on first use, after taking it over for the calling
   stream id when another id used it last (errors of that id are parked for it). */
cubert_status cubert_slot_acquire(cubert_device *device, const cubert_client_obj *client,
                                  uint32_t *out_index, cubert_stream_slot **out);
/* Errors parked for `stream` (see cubert_parked_error) and those on its slot when the stream
   owns it, as one SERVER_UNHEALTHY, or NULL. */
cubert_status cubert_stream_take_errors(cubert_device *device, cubert_stream_id stream,
                                        cubert_stream_slot *slot);
cubert_status cubert_slot_get(cubert_device *device, uint32_t index, cubert_stream_slot **out);
void cubert_slots_destroy(cubert_device *device);
/* Makes slot `index` wait (on the device) for the last command that used each binding on
   another slot (stream/resolve.c). */
cubert_status cubert_slot_resolve(cubert_device *device, uint32_t index,
                                  const cubert_binding *bindings, uint32_t count);
/* Records that a command on slot `index` used these bindings. */
void cubert_slot_mark_used(cubert_device *device, uint32_t index, const cubert_binding *bindings,
                           uint32_t count);

/* stream errors (stream/errors.c) */
cubert_status cubert_stream_errors_create(cubert_stream_errors **out);
void cubert_stream_errors_destroy(cubert_stream_errors *errors);
cubert_status cubert_stream_errors_take(cubert_stream_errors *errors);
/* Moves the queue's errors out, as they are (no SERVER_UNHEALTHY around them): *out_items
   (malloc'd, NULL when none), their count and the pushes that were lost for want of memory. */
void cubert_stream_errors_detach(cubert_stream_errors *errors, cubert_status **out_items,
                                 size_t *out_count, size_t *out_dropped);
/* Puts errors detached earlier back in FRONT of those pushed since (ownership of `items` and
   each error moves in), so that the queue reads as if they had never left. */
void cubert_stream_errors_reattach(cubert_stream_errors *errors, cubert_status *items, size_t count,
                                   size_t dropped);

/* Errors of the calling stream set aside while the core runs work of its own on the stream
   and reads that work's errors (autotune's measurements, tune/tuner.c), so that the stream's
   earlier errors neither fail that work nor get lost: stream/aside.c. */
typedef struct cubert_errors_aside {
  cubert_stream_id stream;
  cubert_status *queued; /* the slot queue's errors, in order */
  size_t queued_count, dropped;
  cubert_status *parked; /* errors parked for the stream, in order */
  size_t parked_count;
} cubert_errors_aside;
/* Waits for the calling stream's work, then moves its pending errors (slot queue and parked)
   into *out. Errors: those of taking the slot (nothing set aside then). */
cubert_status cubert_client_errors_set_aside(cubert_client *client, cubert_errors_aside *out);
/* Gives the stream its set-aside errors back, ahead of any raised since: the next
   flush/sync/read returns them as if they had never been set aside, and the backend skips work
   queued behind them. Frees `aside`'s arrays. Returns nothing: when host memory runs out,
   the queue counts the errors it cannot keep as lost (still reported, as one error). */
void cubert_client_errors_put_back(cubert_client *client, cubert_errors_aside *aside);

/* handles (handle.c) */
cubert_status cubert_handle_new(cubert_device *device, cubert_slice *slice, uint64_t offset,
                                uint64_t size, uint32_t slot, cubert_handle **out);
/* The object behind a live handle, with a reference the caller drops with
   cubert_handle_release(handle); NULL for a NULL, stale or non-handle token. */
cubert_handle_obj *cubert_handle_acquire(const cubert_handle *handle);
/* As acquire, for an argument: INVALID_ARGUMENT for NULL, NOT_FOUND for a released or foreign
   handle; `what` names the argument. */
cubert_status cubert_handle_check(const cubert_client_obj *client, const cubert_handle *handle,
                                  const char *what, cubert_handle_obj **out);
/* The object of a handle the caller holds a reference on (tests look inside this way). */
static inline cubert_handle_obj *cubert_handle_object(const cubert_handle *handle) {
  return (cubert_handle_obj *)cubert_object_get((uintptr_t)handle);
}
static inline cubert_binding cubert_handle_binding(const cubert_handle_obj *h) {
  cubert_binding b = {h->slice, h->slice->offset + h->offset, h->size};
  return b;
}

/* clients (client.c) */
/* The object behind a live client, with a reference the caller drops with
   cubert_client_release(client): INVALID_ARGUMENT for NULL, NOT_FOUND for a released client. */
cubert_status cubert_client_acquire(const cubert_client *client, cubert_client_obj **out);
/* The device of a client the caller holds (tests and benchmarks reach the server this way). */
cubert_device *cubert_client_device(const cubert_client *client);
/* cubert_client_empty for a buffer the caller fills whole at once, by a path the server does
   not see (a host copy into its memory): the kernel sanitizer is not told that its bytes are
   unwritten. */
cubert_status cubert_client_empty_filled_by_caller(cubert_client *client, size_t size,
                                                   cubert_handle **out);

/* kernel_check.c: a kernel-language kernel's declared buffers against the launch's `count`
   bindings (count, element size, and an offset aligned for the element:
   UNSUPPORTED_IO_OPERATION otherwise); NULL for kernels without a signature. */
cubert_status cubert_kernel_check_signature(const cubert_kernel_def *kernel,
                                            const cubert_binding *bindings, uint32_t count);

#endif /* CUBERT_CLIENT_INTERNAL_H */

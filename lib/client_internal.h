/* cubert — core-internal objects behind the client API: the device (one server instance,
   its lock and stream slots), client views, handles. Not installed. */
#ifndef CUBERT_CLIENT_INTERNAL_H
#define CUBERT_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/profile.h"
#include "cubert/server.h"
#include "cubert/stream.h"
#include "memory/memory_manager.h"

/* One stream slot: the server's queue, the stream's memory, its error queue and the cursors of
   the cross-stream protocol (stream/README.md). Created on first use. */
typedef struct cubert_stream_slot {
  cubert_server_stream *stream;
  cubert_memory_manager *memory;
  cubert_stream_errors *errors;
  uint64_t cursor;       /* commands submitted on this slot so far */
  uint64_t *last_synced; /* [max_streams]: origin cursor this slot has waited for */
} cubert_stream_slot;

typedef struct cubert_kernel_stats cubert_kernel_stats; /* profile_log.c */

typedef struct cubert_profile_entry {
  uint64_t token;
  uint32_t slot;
} cubert_profile_entry;

/* A device instance: one server, shared by every client view and handle made from it. */
typedef struct cubert_device {
  _Atomic uint32_t refcount; /* client views + live handles */
  cubert_server *server;
  const cubert_backend *backend;
  /* The device lock. Recursive so that exclusive()/profile() callbacks can use the client
     from the holding thread. Everything below is protected by it. */
  pthread_mutex_t lock;
  uint32_t max_streams;
  cubert_stream_slot **slots; /* [max_streams], lazily created */
  cubert_storage_iface storage;
  cubert_memory_config *pool_override; /* installed layout, used by later slots */
  cubert_pool_config *pool_override_list;
  uint64_t pitch_align; /* row alignment of optimized layouts (0: contiguous) */
  /* Released handle objects, kept (marked dead) so a stale pointer reads as NOT_FOUND. */
  struct cubert_handle **quarantine;
  size_t quarantine_head, quarantine_count;
  /* Open profile tokens. */
  uint64_t next_token;
  cubert_profile_entry *profiles;
  size_t profile_count, profile_cap;
  /* Per-kernel totals of CUBERT_PROFILE=basic|full, printed and reset at every sync. */
  cubert_kernel_stats *kernel_stats;
  size_t kernel_stats_count, kernel_stats_cap;
  /* CUBERT_TRACE: this device's track group (pid) in the process's trace; 0 until its first
     launch was recorded (trace.c). */
  uint32_t trace_id;
  /* The autotune state (lib/tune/tuner.c), created at its first use; has its own lock. */
  _Atomic(struct cubert_tuner *) tuner;
} cubert_device;

#define CUBERT_CLIENT_MAGIC 0x434c4e54u /* "CLNT" */
#define CUBERT_HANDLE_MAGIC 0x48444c45u /* "HDLE" */
#define CUBERT_HANDLE_DEAD 0x44454144u  /* "DEAD" */

struct cubert_client {
  _Atomic uint32_t refcount;
  uint32_t magic;
  cubert_device *device;
  int pinned; /* 1: every call goes to `stream` */
  cubert_stream_id stream;
};

struct cubert_handle {
  _Atomic uint32_t refcount;
  _Atomic uint32_t magic;
  cubert_device *device;
  cubert_slice *slice;
  uint64_t offset; /* bytes from the slice start */
  uint64_t size;   /* bytes */
  uint32_t slot;   /* stream slot whose memory manager owns the slice */
};

/* device lifetime */
void cubert_device_retain(cubert_device *device);
void cubert_device_release(cubert_device *device);
static inline void cubert_device_lock(cubert_device *d) {
  pthread_mutex_lock(&d->lock);
}
static inline void cubert_device_unlock(cubert_device *d) {
  pthread_mutex_unlock(&d->lock);
}

/* stream slots (stream/slots.c); call with the device lock held */
uint32_t cubert_client_slot_index(const cubert_client *client);
cubert_status cubert_slot_get(cubert_device *device, uint32_t index, cubert_stream_slot **out);
void cubert_slots_destroy(cubert_device *device);
/* Makes slot `index` wait (on the device) for the last command that used each binding on
   another slot (stream/resolve.c). */
cubert_status cubert_slot_resolve(cubert_device *device, uint32_t index,
                                  const cubert_binding *bindings, uint32_t count);
/* Records that a command on slot `index` used these bindings. */
void cubert_slot_mark_used(cubert_device *device, uint32_t index, const cubert_binding *bindings,
                           uint32_t count);
/* Errors kept on the slot since they were last returned, as one SERVER_UNHEALTHY, or NULL. */
cubert_status cubert_slot_take_errors(cubert_stream_slot *slot);

/* stream errors (stream/errors.c) */
cubert_status cubert_stream_errors_create(cubert_stream_errors **out);
void cubert_stream_errors_destroy(cubert_stream_errors *errors);
cubert_status cubert_stream_errors_take(cubert_stream_errors *errors);

/* handles (handle.c); call with the device lock held */
cubert_status cubert_handle_new(cubert_device *device, cubert_slice *slice, uint64_t offset,
                                uint64_t size, uint32_t slot, cubert_handle **out);
/* NOT_FOUND for a released, foreign or NULL handle; `what` names the argument. */
cubert_status cubert_handle_check(const cubert_client *client, const cubert_handle *handle,
                                  const char *what);
static inline cubert_binding cubert_handle_binding(const cubert_handle *h) {
  cubert_binding b = {h->slice, h->slice->offset + h->offset, h->size};
  return b;
}
void cubert_handle_quarantine_free(cubert_device *device);

/* client.c helpers shared with tensor.c / profile.c */
cubert_status cubert_client_check(const cubert_client *client);
cubert_status cubert_client_reserve(cubert_client *client, uint64_t size, uint32_t *out_slot,
                                    cubert_handle **out);

/* kernel_check.c: a kernel-language kernel's declared buffers against the launch's (count and
   element size); NULL for kernels without a signature. Handles already checked. */
cubert_status cubert_kernel_check_signature(const cubert_kernel_def *kernel,
                                            const cubert_kernel_args *args);

#endif /* CUBERT_CLIENT_INTERNAL_H */

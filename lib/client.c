/* cubert — the client: client views, buffers, reads and writes and synchronisation, with their
   argument validation and calls into the server (devices are in device.c, launches in launch.c,
   memory control in client_memory.c). One recursive lock per device serialises access to the server
   (docs/architecture.md#clients-devices-and-threads: a lock around the server rather than a
   device thread, since a thread hop costs microseconds on the launch path); re-entrancy lets
   exclusive()/profile() callbacks use the client.

   Lifetime: a public cubert_client is a token of the object table (object_table.h). Every
   call holds a reference on the client, and on each handle it uses, for its whole duration,
   so a release on another thread (or inside an exclusive() callback) takes effect when the
   call returns, and a released client or handle reads as NOT_FOUND. */
#include "client.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/object_table.h"
#include "base/status.h"
#include "call_scope.h"
#include "cubert/config.h"
#include "cubert/server/sanitizer.h"
#include "device.h"
#include "device_registry.h"
#include "dry_run.h"
#include "handle.h"
#include "profile_log.h"
#include "registry.h"
#include "stream/errors.h"
#include "stream/resolve.h"
#include "stream/slots.h"
#include "trace.h"
#include "tune/scratch.h"
#include "tune/tuner.h"

/* ---- client views ------------------------------------------------------------------------ */

static uintptr_t client_token(const cubert_client *client) {
  return (uintptr_t)client;
}

cubert_status cubert_client_acquire(const cubert_client *client, cubert_client_obj **out) {
  *out = NULL;
  if (!client) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "client is NULL");
  cubert_client_obj *c = cubert_object_acquire(client_token(client), CUBERT_OBJECT_CLIENT);
  if (!c)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                              "client was released (or is not a cubert_client)");
  *out = c;
  return NULL;
}

cubert_device *cubert_client_device(const cubert_client *client) {
  cubert_client_obj *c = cubert_object_get(client_token(client));
  return c ? c->device : NULL;
}

/* Drops the reference a call took with cubert_client_acquire. */
static void client_done(const cubert_client *client) {
  cubert_client_release((cubert_client *)client);
}

/* A new client view on `device`; takes over one device reference on success. */
static cubert_status client_new(cubert_device *device, int pinned, cubert_stream_id stream,
                                int dry_run, cubert_client **out) {
  cubert_client_obj *client = calloc(1, sizeof(*client));
  if (!client) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  client->device = device;
  client->pinned = pinned;
  client->stream = stream;
  atomic_init(&client->dry_run, dry_run);
  uintptr_t token = 0;
  cubert_status s = cubert_object_register(CUBERT_OBJECT_CLIENT, client, &token);
  if (s) {
    free(client);
    return s;
  }
  atomic_fetch_add(&device->user_clients, 1);
  *out = (cubert_client *)token;
  return NULL;
}

cubert_status cubert_client_worker_view(cubert_client *client, cubert_client **out) {
  *out = NULL;
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_device_retain(c->device);
  cubert_status s = client_new(c->device, 0, 0, 0, out);
  if (s) {
    cubert_device_release(c->device);
  } else {
    cubert_client_obj *view = cubert_object_get(client_token(*out));
    view->worker = 1;
    atomic_fetch_sub(&c->device->user_clients, 1);
  }
  client_done(client);
  return s;
}

cubert_status cubert_client_create(const char *device_selector, cubert_client **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_device *device = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_device_get(device_selector, &device));
  cubert_status s = client_new(device, 0, 0, cubert_config_get()->dry_run, out);
  if (s) cubert_device_release(device);
  return s;
}

cubert_status cubert_client_with_stream(cubert_client *client, cubert_stream_id id,
                                        cubert_client **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_device_retain(c->device);
  /* A view pinned to a stream inherits the mode of the client it came from. */
  cubert_status s = client_new(c->device, 1, id, atomic_load(&c->dry_run), out);
  if (s) cubert_device_release(c->device);
  client_done(client);
  return s;
}

cubert_stream_id cubert_client_stream(const cubert_client *client) {
  cubert_client_obj *c = NULL;
  cubert_status s = cubert_client_acquire(client, &c);
  if (s) {
    cubert_status_free(s);
    return 0;
  }
  cubert_stream_id id = c->pinned ? c->stream : cubert_stream_id_current();
  client_done(client);
  return id;
}

cubert_client *cubert_client_retain(cubert_client *client) {
  /* Retaining a released client changes nothing: there is nothing left to keep alive. */
  cubert_object_acquire(client_token(client), CUBERT_OBJECT_CLIENT);
  return client;
}

void cubert_client_release(cubert_client *client) {
  cubert_client_obj *c = cubert_object_release(client_token(client), CUBERT_OBJECT_CLIENT);
  if (!c) return;
  cubert_device *device = c->device;
  const int last_user = !c->worker && atomic_fetch_sub(&device->user_clients, 1) == 1;
  free(c);
  /* No client is left to call the tuner: its background measurements stop here, on the
     releasing thread, so none outlives the program's clients (tune/background.h). */
  if (last_user) cubert_tuner_background_stop(device);
  cubert_device_release(device);
}

const cubert_device_properties *cubert_client_properties(const cubert_client *client) {
  cubert_client_obj *c = cubert_object_acquire(client_token(client), CUBERT_OBJECT_CLIENT);
  if (!c) return NULL;
  const cubert_device_properties *p = &c->device->server->properties;
  client_done(client);
  return p;
}

/* ---- buffers ----------------------------------------------------------------------------- */

/* The reference reports a failed allocation from create/empty as IoError::OutOfMemory. */
static cubert_status as_io(cubert_status s) {
  return cubert_status_set_kind(s, CUBERT_KIND_IO);
}

/* Reserves `size` bytes on the call's stream and wraps them in a handle. */
static cubert_status reserve(const cubert_call *call, uint64_t size, cubert_handle **out) {
  cubert_slice *slice = NULL;
  CUBERT_RETURN_IF_ERROR(as_io(cubert_memory_reserve(call->slot->memory, size, &slice)));
  cubert_status s = cubert_handle_new(call->device, slice, 0, size, call->index, out);
  if (s) cubert_slice_release(slice);
  return s;
}

/* Writes host bytes into a binding on slot `index`, after the slice's earlier users. */
static cubert_status write_binding(cubert_device *device, uint32_t index,
                                   const cubert_binding *binding, const void *src) {
  cubert_server *server = device->server;
  CUBERT_RETURN_IF_ERROR(cubert_slot_resolve(device, index, binding, 1));
  CUBERT_RETURN_IF_ERROR(as_io(
      server->vtable->write(server, device->slots[index]->stream, binding, src, binding->size)));
  cubert_slot_mark_used(device, index, binding, 1);
  return NULL;
}

/* A new buffer of `size` bytes holding `data`, or, when `data` is NULL, nothing written: a
   server with a kernel sanitizer then learns that its bytes are unwritten (`unwritten`), unless
   the caller fills them at once by a path the server does not see. */
static cubert_status create_buffer(cubert_client *client, const void *data, size_t size,
                                   int unwritten, cubert_handle **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  cubert_device *device = call.device;
  cubert_handle *handle = NULL;
  /* The reference reports a failure to take the slot here as an IoError too. */
  cubert_status s = as_io(cubert_call_lock(&call));
  if (!s) s = reserve(&call, size, &handle);
  if (!s && data && size) {
    cubert_handle_obj *h = cubert_handle_acquire(handle);
    cubert_binding b = cubert_handle_binding(h);
    s = write_binding(device, call.index, &b, data);
    cubert_handle_release(handle);
  } else if (!s && size && unwritten && device->server->sanitizer) {
    cubert_handle_obj *h = cubert_handle_acquire(handle);
    cubert_binding b = cubert_handle_binding(h);
    device->server->sanitizer->mark_undefined(device->server, &b);
    cubert_handle_release(handle);
  }
  cubert_call_leave(&call, NULL);
  if (s) {
    cubert_handle_release(handle);
    return s;
  }
  cubert_tune_scratch_created(handle);
  *out = handle;
  return NULL;
}

cubert_status cubert_client_create_buffer(cubert_client *client, const void *data, size_t size,
                                          cubert_handle **out) {
  if (!data && size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "data is NULL but size is %zu bytes (use cubert_client_empty)", size);
  return create_buffer(client, data, size, 0, out);
}

cubert_status cubert_client_empty(cubert_client *client, size_t size, cubert_handle **out) {
  return create_buffer(client, NULL, size, 1, out);
}

cubert_status cubert_client_empty_filled_by_caller(cubert_client *client, size_t size,
                                                   cubert_handle **out) {
  return create_buffer(client, NULL, size, 0, out);
}

static cubert_status check_range(const cubert_handle_obj *handle, uint64_t offset, uint64_t size,
                                 const char *what) {
  if (offset > handle->size || size > handle->size - offset)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s of %llu bytes at offset %llu goes past the end of the handle "
                              "(%llu bytes)",
                              what, (unsigned long long)size, (unsigned long long)offset,
                              (unsigned long long)handle->size);
  return NULL;
}

/* Waits for the slot's work and returns the asynchronous errors of its owner. Lock held. */
static cubert_status slot_sync(cubert_device *device, cubert_stream_slot *slot) {
  cubert_status s = cubert_slot_sync(device, slot);
  cubert_status errors = cubert_stream_take_errors(device, slot->owner, slot);
  if (errors) {
    cubert_status_free(s);
    return errors;
  }
  return s;
}

/* Client and handle checked and held for a call on one buffer; released by io_end. */
static cubert_status io_begin(cubert_client *client, cubert_handle *handle, cubert_call *call,
                              cubert_handle_obj **out_handle) {
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, call));
  cubert_status s = cubert_handle_check(call->obj, handle, "handle", out_handle);
  if (s) cubert_call_leave(call, NULL);
  return s;
}

static cubert_status io_end(cubert_call *call, cubert_handle *handle, cubert_status s) {
  cubert_call_unlock(call);
  cubert_handle_release(handle);
  return cubert_call_leave(call, s);
}

cubert_status cubert_client_read_range(cubert_client *client, cubert_handle *handle,
                                       uint64_t offset, void *dst, size_t size) {
  cubert_call call;
  cubert_handle_obj *h = NULL;
  CUBERT_RETURN_IF_ERROR(io_begin(client, handle, &call, &h));
  if (!dst && size)
    return io_end(&call, handle, cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL"));
  cubert_status s = check_range(h, offset, size, "read");
  if (s) return io_end(&call, handle, s);
  if (cubert_dry_run_on(call.obj)) {
    /* Nothing ran whose result could be read; zeros keep a program's reads deterministic and
       its loops over them finite (cubert_client_set_dry_run). */
    if (size) memset(dst, 0, size);
    return io_end(&call, handle, NULL);
  }
  cubert_server *server = call.server;
  cubert_binding b = cubert_handle_binding(h);
  cubert_tune_scratch_apply(&b);
  s = cubert_call_lock(&call);
  if (!s) s = cubert_slot_resolve(call.device, call.index, &b, 1);
  /* Errors first: data from a stream with a pending error is never handed out. */
  if (!s) s = slot_sync(call.device, call.slot);
  if (!s && size) {
    cubert_binding part = {b.slice, b.offset + offset, size};
    s = server->vtable->read(server, call.slot->stream, &part, dst, size);
  }
  return io_end(&call, handle, s);
}

cubert_status cubert_client_read(cubert_client *client, cubert_handle *handle, void *dst,
                                 size_t size) {
  return cubert_client_read_range(client, handle, 0, dst, size);
}

cubert_status cubert_client_write(cubert_client *client, cubert_handle *handle, uint64_t offset,
                                  const void *src, size_t size) {
  /* A candidate autotune measures writes a scratch copy (tune/scratch.h). */
  CUBERT_RETURN_IF_ERROR(cubert_tune_scratch_prepare(client, handle));
  cubert_call call;
  cubert_handle_obj *h = NULL;
  CUBERT_RETURN_IF_ERROR(io_begin(client, handle, &call, &h));
  if (!src && size)
    return io_end(&call, handle, cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "src is NULL"));
  cubert_status s = check_range(h, offset, size, "write");
  if (s || !size) return io_end(&call, handle, s);
  s = cubert_call_lock(&call);
  if (!s) {
    cubert_binding b = cubert_handle_binding(h);
    cubert_tune_scratch_apply(&b);
    cubert_binding part = {b.slice, b.offset + offset, size};
    s = write_binding(call.device, call.index, &part, src);
  }
  return io_end(&call, handle, s);
}

/* ---- synchronisation --------------------------------------------------------------------- */

cubert_status cubert_client_flush(cubert_client *client) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_server *server = call.server;
  cubert_status s = server->vtable->flush(server, call.slot->stream);
  if (!s) s = cubert_stream_take_errors(call.device, call.slot->owner, call.slot);
  return cubert_call_leave(&call, s);
}

cubert_status cubert_client_sync(cubert_client *client) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_status s = slot_sync(call.device, call.slot);
  if (cubert_config_get()->profile_level >= CUBERT_PROFILE_BASIC)
    cubert_profile_log_summary(call.device);
  return cubert_call_leave(&call, s);
}

static int push_error(cubert_status **errors, size_t *count, cubert_status s) {
  cubert_status *grown = realloc(*errors, (*count + 1) * sizeof(*grown));
  if (!grown) return 0;
  *errors = grown;
  (*errors)[(*count)++] = s;
  return 1;
}

cubert_status cubert_client_sync_all(cubert_client *client) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_device *device = c->device;
  cubert_device_lock(device);
  cubert_status *errors = NULL;
  size_t count = 0;
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (!slot) continue;
    cubert_status s = slot_sync(device, slot);
    if (s && !push_error(&errors, &count, s)) cubert_status_free(s);
    /* The errors of ids that handed the slot on without a wait (cubert_server.tags_errors). */
    s = cubert_stream_errors_take(slot->errors);
    if (s && !push_error(&errors, &count, s)) cubert_status_free(s);
  }
  /* Errors parked for streams that lost their slot are theirs, and this waits for them too. */
  while (device->parked.count) {
    cubert_status s = cubert_stream_take_errors(device, device->parked.items[0].stream, NULL);
    if (s && !push_error(&errors, &count, s)) cubert_status_free(s);
  }
  cubert_device_unlock(device);
  client_done(client);
  return cubert_status_merge(errors, count);
}

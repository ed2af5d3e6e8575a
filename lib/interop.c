/* cubert — the core side of interop (server.h "interop"): the backends' public interop headers
   (cubert/opencl.h, cubert/cpu.h) reach a client's server, its calling stream and the memory
   behind handles through these, so that the core never names a backend. The ordering is the
   core's cross-stream protocol (stream/resolve.c): a handle handed out is resolved on the
   calling stream and marked as used there, exactly as if a command of that stream used it. */
#include "cubert/server/interop.h"

#include <string.h>

#include "call_scope.h"
#include "client.h"
#include "cubert/backend.h"
#include "device.h"
#include "handle.h"
#include "stream/resolve.h"
#include "stream/slots.h"

cubert_status cubert_interop_begin(cubert_client *client, const cubert_backend *backend,
                                   const char *fn, cubert_interop *out) {
  memset(out, 0, sizeof(*out));
  if (!client) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: client is NULL", fn);
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  cubert_device *device = call.device;
  if (device->backend != backend)
    return cubert_call_leave(
        &call,
        cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "%s: client is on the '%s' server (device '%s'), not '%s'", fn,
                           device->backend->name, device->server->properties.name, backend->name));
  cubert_status s = cubert_call_lock(&call);
  if (s) return cubert_call_leave(&call, s);
  /* The scope stays open until cubert_interop_end; the public struct carries what it holds. */
  out->server = call.server;
  out->stream = call.slot->stream;
  out->client_ = client;
  out->client_obj_ = call.obj;
  out->slot_ = call.index;
  return NULL;
}

cubert_status cubert_interop_end(cubert_interop *io, cubert_status s) {
  cubert_client_obj *c = io->client_obj_;
  if (c) {
    /* The scope cubert_interop_begin opened, from what the public struct carries. */
    cubert_call call = {.client = io->client_,
                        .obj = c,
                        .device = c->device,
                        .server = c->device->server,
                        .index = io->slot_,
                        .locked = 1};
    cubert_call_leave(&call, NULL);
  }
  memset(io, 0, sizeof(*io));
  return s;
}

cubert_status cubert_interop_handle(cubert_interop *io, cubert_handle *handle, const char *what,
                                    cubert_binding *out) {
  cubert_client_obj *c = io->client_obj_;
  cubert_handle_obj *h = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_handle_check(c, handle, what, &h));
  cubert_binding b = cubert_handle_binding(h);
  cubert_status s = cubert_slot_resolve(c->device, io->slot_, &b, 1);
  if (!s) cubert_slot_mark_used(c->device, io->slot_, &b, 1);
  cubert_handle_release(handle);
  if (!s) *out = b;
  return s;
}

cubert_status cubert_interop_sync(cubert_interop *io) {
  cubert_client_obj *c = io->client_obj_;
  cubert_stream_slot *slot = c->device->slots[io->slot_];
  cubert_status s = cubert_slot_sync(c->device, slot);
  cubert_status errors = cubert_stream_take_errors(c->device, slot->owner, slot);
  if (errors) {
    cubert_status_free(s);
    return errors;
  }
  return s;
}

cubert_status cubert_interop_wrap(cubert_interop *io, cubert_slice *slice, cubert_handle **out) {
  cubert_client_obj *c = io->client_obj_;
  atomic_store_explicit(&slice->refcount, 1, memory_order_relaxed);
  atomic_store_explicit(&slice->handle_count, 0, memory_order_relaxed);
  cubert_status s = cubert_handle_new(c->device, slice, 0, slice->size, io->slot_, out);
  if (s) {
    atomic_store_explicit(&slice->refcount, 0, memory_order_relaxed);
    return s;
  }
  /* Used by the calling stream from now on: a first use on another stream waits for what the
     caller enqueued on this stream's queue before wrapping. */
  cubert_binding b = {slice, slice->offset, slice->size};
  cubert_slot_mark_used(c->device, io->slot_, &b, 1);
  return NULL;
}

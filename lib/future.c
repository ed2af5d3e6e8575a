/* cubert — asynchronous reads. A future owns a device event that completes when the read's
   destination holds the data; backends without asynchronous reads complete it at once. */
#include <stdlib.h>

#include "client_internal.h"

struct cubert_future {
  cubert_device *device; /* retained */
  cubert_event *event;   /* NULL once waited, or for a synchronous read */
  cubert_stream_slot *slot;
  cubert_stream_id stream; /* whose errors the read reports */
  cubert_status result;
  int done;
};

static cubert_status read_async(cubert_client *client, cubert_client_obj *c, cubert_handle *handle,
                                cubert_handle_obj *h, void *dst, size_t size, cubert_future **out) {
  if (!dst && size) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  if (size > h->size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "read of %zu bytes goes past the end of the handle (%llu bytes)",
                              size, (unsigned long long)h->size);
  cubert_future *f = calloc(1, sizeof(*f));
  if (!f) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cubert_device *device = c->device;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  uint32_t index = 0;
  cubert_binding b = cubert_handle_binding(h);
  b.size = size;
  cubert_status s = cubert_slot_acquire(device, c, &index, &f->slot);
  if (!s) f->stream = f->slot->owner;
  if (!s) s = cubert_slot_resolve(device, index, &b, 1);
  if (!s && server->vtable->read_async && size) {
    s = server->vtable->read_async(server, f->slot->stream, &b, dst, size, &f->event);
    if (!s) cubert_slot_mark_used(device, index, &b, 1);
  } else if (!s) {
    /* The lock is recursive, so the synchronous read can run under it. */
    f->result = cubert_client_read(client, handle, dst, size);
    f->done = 1;
  }
  cubert_device_unlock(device);
  if (s) {
    free(f);
    return s;
  }
  cubert_device_retain(device);
  f->device = device;
  *out = f;
  return NULL;
}

cubert_status cubert_client_read_async(cubert_client *client, cubert_handle *handle, void *dst,
                                       size_t size, cubert_future **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_handle_obj *h = NULL;
  cubert_status s = cubert_handle_check(c, handle, "handle", &h);
  if (!s) {
    s = read_async(client, c, handle, h, dst, size, out);
    cubert_handle_release(handle);
  }
  cubert_client_release(client);
  return s;
}

cubert_status cubert_future_wait(cubert_future *f) {
  if (!f) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "future is NULL");
  if (!f->done) {
    cubert_server *server = f->device->server;
    cubert_status s = server->vtable->event_sync(server, f->event);
    cubert_device_lock(f->device);
    server->vtable->event_release(server, f->event);
    f->event = NULL;
    cubert_status errors = cubert_stream_take_errors(f->device, f->stream, f->slot);
    cubert_device_unlock(f->device);
    if (errors) {
      cubert_status_free(s);
      s = errors;
    }
    f->result = s;
    f->done = 1;
  }
  cubert_status result = f->result;
  f->result = NULL;
  return result;
}

cubert_status cubert_future_poll(cubert_future *f, int *out_ready) {
  if (!f || !out_ready)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "future and out_ready must be non-NULL");
  if (f->done) {
    *out_ready = 1;
    return NULL;
  }
  cubert_server *server = f->device->server;
  *out_ready = server->vtable->event_done(server, f->event) != 0;
  return NULL;
}

void cubert_future_release(cubert_future *f) {
  if (!f) return;
  cubert_status_free(cubert_future_wait(f));
  cubert_device_release(f->device);
  free(f);
}

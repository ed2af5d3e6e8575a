/* cubert — handles. A handle object keeps one reference on its slice and one on its device;
   the pointer the API hands out is a token of the object table (object_table.h), so a stale,
   doubly released or foreign handle is recognised on every use, for any number of releases,
   and never reaches another allocation. Every call that uses a handle holds a reference on it
   for the duration of the call, so a release on another thread cannot pull the slice away
   from under a launch or a read. */
#include "handle.h"

#include <stdlib.h>

#include "base/object_table.h"
#include "base/status.h"
#include "client.h"
#include "device.h"

static uintptr_t token(const cubert_handle *handle) {
  return (uintptr_t)handle;
}

cubert_status cubert_handle_new(cubert_device *device, cubert_slice *slice, uint64_t offset,
                                uint64_t size, uint32_t slot, cubert_handle **out) {
  *out = NULL;
  cubert_handle_obj *h = malloc(sizeof(*h));
  if (!h)
    return cubert_status_set_kind(
        cubert_status_set_size(
            cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of a handle failed"),
            sizeof(*h)),
        CUBERT_KIND_IO);
  h->device = device;
  h->slice = slice;
  h->offset = offset;
  h->size = size;
  h->slot = slot;
  uintptr_t t = 0;
  cubert_status s = cubert_object_register(CUBERT_OBJECT_HANDLE, h, &t);
  if (s) {
    free(h);
    return s;
  }
  atomic_fetch_add_explicit(&slice->handle_count, 1, memory_order_relaxed);
  cubert_device_retain(device);
  *out = (cubert_handle *)t;
  return NULL;
}

cubert_handle *cubert_handle_retain(cubert_handle *handle) {
  /* A retain of a stale handle changes nothing: there is no object left to keep alive. */
  cubert_object_acquire(token(handle), CUBERT_OBJECT_HANDLE);
  return handle;
}

void cubert_handle_release(cubert_handle *handle) {
  cubert_handle_obj *h = cubert_object_release(token(handle), CUBERT_OBJECT_HANDLE);
  if (!h) return;
  cubert_device *device = h->device;
  atomic_fetch_sub_explicit(&h->slice->handle_count, 1, memory_order_acq_rel);
  cubert_slice_release(h->slice);
  free(h);
  cubert_device_release(device);
}

cubert_handle_obj *cubert_handle_acquire(const cubert_handle *handle) {
  return cubert_object_acquire(token(handle), CUBERT_OBJECT_HANDLE);
}

cubert_status cubert_handle_check(const cubert_client_obj *client, const cubert_handle *handle,
                                  const char *what, cubert_handle_obj **out) {
  *out = NULL;
  if (!handle) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s is NULL", what);
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s was released (or is not a handle)", what);
  if (h->device != client->device) {
    cubert_handle_release((cubert_handle *)handle);
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s belongs to another device instance", what);
  }
  *out = h;
  return NULL;
}

uint64_t cubert_handle_size(const cubert_handle *handle) {
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h) return 0;
  uint64_t size = h->size;
  cubert_handle_release((cubert_handle *)handle);
  return size;
}

cubert_status cubert_handle_view(cubert_handle *handle, uint64_t offset, uint64_t size,
                                 cubert_handle **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (!handle) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "handle is NULL");
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "handle was released");
  cubert_status s = NULL;
  if (offset > h->size || size > h->size - offset) {
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "view [%llu, %llu) leaves the handle of %llu bytes",
                           (unsigned long long)offset, (unsigned long long)(offset + size),
                           (unsigned long long)h->size);
  } else {
    cubert_slice_retain(h->slice);
    s = cubert_handle_new(h->device, h->slice, h->offset + offset, size, h->slot, out);
    if (s) cubert_slice_release(h->slice);
  }
  cubert_handle_release(handle);
  return s;
}

int cubert_handle_can_mut(const cubert_handle *handle) {
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h) return 0;
  /* Views of the same memory count (each is a handle on the slice); bindings held by queued
     launches do not (the reference's can_mut). The reference this call took is discounted. */
  int alone = atomic_load_explicit(&h->slice->handle_count, memory_order_acquire) == 1 &&
              cubert_object_refcount((uintptr_t)handle) == 2;
  cubert_handle_release((cubert_handle *)handle);
  return alone;
}

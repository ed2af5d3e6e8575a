/* cubert — handles. A handle keeps one reference on its slice and one on its device.
   Released handle objects are not returned to malloc at once: they are marked dead and kept
   in a per-device FIFO quarantine (and recycled from it), so a stale pointer used with a live
   client reads as NOT_FOUND instead of touching another allocation. */
#include <stdlib.h>

#include "client_internal.h"

#define QUARANTINE_CAPACITY 4096

cubert_status cubert_handle_new(cubert_device *device, cubert_slice *slice, uint64_t offset,
                                uint64_t size, uint32_t slot, cubert_handle **out) {
  *out = NULL;
  cubert_handle *h = NULL;
  /* Recycle the oldest quarantined object once the quarantine is full: it has been dead for
     QUARANTINE_CAPACITY releases. */
  if (device->quarantine_count == QUARANTINE_CAPACITY) {
    h = device->quarantine[device->quarantine_head];
    device->quarantine_head = (device->quarantine_head + 1) % QUARANTINE_CAPACITY;
    device->quarantine_count--;
  } else {
    h = malloc(sizeof(*h));
    if (!h)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of a handle failed"),
          sizeof(*h));
  }
  atomic_init(&h->refcount, 1);
  h->device = device;
  h->slice = slice;
  h->offset = offset;
  h->size = size;
  h->slot = slot;
  atomic_store_explicit(&h->magic, CUBERT_HANDLE_MAGIC, memory_order_release);
  cubert_device_retain(device);
  *out = h;
  return NULL;
}

cubert_handle *cubert_handle_retain(cubert_handle *handle) {
  if (handle && atomic_load_explicit(&handle->magic, memory_order_acquire) == CUBERT_HANDLE_MAGIC)
    atomic_fetch_add_explicit(&handle->refcount, 1, memory_order_relaxed);
  return handle;
}

void cubert_handle_release(cubert_handle *handle) {
  if (!handle) return;
  if (atomic_load_explicit(&handle->magic, memory_order_acquire) != CUBERT_HANDLE_MAGIC) return;
  if (atomic_fetch_sub_explicit(&handle->refcount, 1, memory_order_acq_rel) != 1) return;
  cubert_device *device = handle->device;
  atomic_store_explicit(&handle->magic, CUBERT_HANDLE_DEAD, memory_order_release);
  cubert_slice_release(handle->slice);
  handle->slice = NULL;
  handle->size = 0;
  cubert_device_lock(device);
  if (device->quarantine && device->quarantine_count < QUARANTINE_CAPACITY) {
    size_t tail = (device->quarantine_head + device->quarantine_count) % QUARANTINE_CAPACITY;
    device->quarantine[tail] = handle;
    device->quarantine_count++;
    handle = NULL;
  }
  cubert_device_unlock(device);
  free(handle);
  cubert_device_release(device);
}

void cubert_handle_quarantine_free(cubert_device *device) {
  for (size_t i = 0; i < device->quarantine_count; ++i)
    free(device->quarantine[(device->quarantine_head + i) % QUARANTINE_CAPACITY]);
  device->quarantine_count = 0;
  free(device->quarantine);
  device->quarantine = NULL;
}

cubert_status cubert_handle_check(const cubert_client *client, const cubert_handle *handle,
                                  const char *what) {
  if (!handle) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s is NULL", what);
  if (atomic_load_explicit(&handle->magic, memory_order_acquire) != CUBERT_HANDLE_MAGIC)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s was released", what);
  if (handle->device != client->device)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s belongs to another device instance", what);
  return NULL;
}

uint64_t cubert_handle_size(const cubert_handle *handle) {
  if (!handle || atomic_load_explicit(&handle->magic, memory_order_acquire) != CUBERT_HANDLE_MAGIC)
    return 0;
  return handle->size;
}

cubert_status cubert_handle_view(cubert_handle *handle, uint64_t offset, uint64_t size,
                                 cubert_handle **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (!handle) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "handle is NULL");
  if (atomic_load_explicit(&handle->magic, memory_order_acquire) != CUBERT_HANDLE_MAGIC)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "handle was released");
  if (offset > handle->size || size > handle->size - offset)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "view [%llu, %llu) leaves the handle of %llu bytes",
                              (unsigned long long)offset, (unsigned long long)(offset + size),
                              (unsigned long long)handle->size);
  cubert_device *device = handle->device;
  cubert_device_lock(device);
  cubert_slice_retain(handle->slice);
  cubert_status s =
      cubert_handle_new(device, handle->slice, handle->offset + offset, size, handle->slot, out);
  if (s) cubert_slice_release(handle->slice);
  cubert_device_unlock(device);
  return s;
}

int cubert_handle_can_mut(const cubert_handle *handle) {
  if (!handle || atomic_load_explicit(&handle->magic, memory_order_acquire) != CUBERT_HANDLE_MAGIC)
    return 0;
  /* Views and in-flight bindings hold slice references too: only a lone handle may mutate. */
  return atomic_load_explicit(&handle->slice->refcount, memory_order_acquire) == 1 &&
         atomic_load_explicit(&handle->refcount, memory_order_acquire) == 1;
}

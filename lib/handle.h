/* cubert — the objects behind cubert_handle tokens (handle.c): a range of a slice on one
   device, checked on every use through the object table. Thread-safe: every call that uses a
   handle holds a reference on it for the call's duration. */
#ifndef CUBERT_CORE_HANDLE_H
#define CUBERT_CORE_HANDLE_H

#include <stdint.h>

#include "base/object_table.h"
#include "cubert/handle.h"
#include "cubert/server.h"
#include "device.h"
#include "memory/memory_manager.h"

typedef struct cubert_client_obj cubert_client_obj;

typedef struct cubert_handle_obj {
  cubert_device *device; /* retained */
  cubert_slice *slice;   /* retained; counted in slice->handle_count */
  uint64_t offset;       /* bytes from the slice start */
  uint64_t size;         /* bytes */
  uint32_t slot;         /* stream slot whose memory manager owns the slice */
} cubert_handle_obj;

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

#endif

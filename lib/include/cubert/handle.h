/* cubert — handles: reference-counted views of device memory.

   A handle refers to (part of) a slice of a memory pool page. The slice is free for reuse
   once no handle and no binding (including one held by a queued launch) refers to it; there
   is no explicit free. Handles retain their client, so release order never matters.
   Using a handle after its last release, or with another client, gives NOT_FOUND (released
   handle objects are quarantined, never handed back to malloc while they could be mistaken
   for a live one). Retain/release are thread-safe. */
#ifndef CUBERT_HANDLE_H
#define CUBERT_HANDLE_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_handle cubert_handle;

/* Adds a reference; returns `handle`. Accepts NULL. */
CUBERT_API cubert_handle *cubert_handle_retain(cubert_handle *handle);
/* Drops a reference. Accepts NULL. */
CUBERT_API void cubert_handle_release(cubert_handle *handle);
/* Size of the view in bytes (0 for a released handle). */
CUBERT_API uint64_t cubert_handle_size(const cubert_handle *handle);
/* A new handle viewing bytes [offset, offset+size) of `handle` (same memory; keeps it alive).
   INVALID_ARGUMENT when the range leaves the handle; NOT_FOUND for a released handle. */
CUBERT_API cubert_status cubert_handle_view(cubert_handle *handle, uint64_t offset, uint64_t size,
                                            cubert_handle **out);
/* True while the handle is the only user reference to its memory (reference `can_mut`):
   bindings held by launches do not count. */
CUBERT_API int cubert_handle_can_mut(const cubert_handle *handle);

CUBERT_EXTERN_C_END

#endif /* CUBERT_HANDLE_H */

/** @file
   cubert — handles: reference-counted views of device memory.

   A handle refers to (part of) a slice of a memory pool page. The slice is free for reuse
   once no handle and no binding (including one held by a queued launch) refers to it; there
   is no explicit free. Handles retain their device, so release order never matters: a handle
   stays usable after its client was released, with any client of the same device instance.

   Stale handles: a cubert_handle pointer is an opaque token, not an address; the library never
   dereferences it. After the last release the token is dead for good, whatever number of
   handles is created and released afterwards: every function given it returns NOT_FOUND (0
   for cubert_handle_size/can_mut), and retain/release of it change nothing, so a stale double
   release never touches another owner's handle. What no check can tell apart: dropping more
   references than one took while other owners still hold the handle (that takes theirs).

   Thread safety: every function may be called from any thread. A call that uses a handle
   while another thread drops its last reference either completes with the handle as it was
   (the call holds a reference for its duration; a launch's bindings keep the memory until the
   kernel ran) or returns NOT_FOUND; it never sees freed memory. */
#ifndef CUBERT_HANDLE_H
#define CUBERT_HANDLE_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A reference-counted view of device memory (opaque). */
typedef struct cubert_handle cubert_handle;

/** Adds a reference; returns `handle`. Accepts NULL and released handles (no effect). */
CUBERT_API cubert_handle *cubert_handle_retain(cubert_handle *handle);
/** Drops a reference; the last one frees the handle (its memory once no launch uses it).
   Accepts NULL and released handles (no effect). */
CUBERT_API void cubert_handle_release(cubert_handle *handle);
/** Size of the view in bytes (0 for a released handle). */
CUBERT_API uint64_t cubert_handle_size(const cubert_handle *handle);
/** A new handle viewing bytes [offset, offset+size) of `handle` (same memory; keeps it alive).
   INVALID_ARGUMENT when the range leaves the handle; NOT_FOUND for a released handle. */
CUBERT_API cubert_status cubert_handle_view(cubert_handle *handle, uint64_t offset, uint64_t size,
                                            cubert_handle **out);
/** True while the handle is the only user reference to its memory (reference `can_mut`): one
   reference, no other view of the same memory. Bindings held by queued or running launches
   do not count. 0 for NULL or a released handle. */
CUBERT_API int cubert_handle_can_mut(const cubert_handle *handle);

CUBERT_EXTERN_C_END

#endif /* CUBERT_HANDLE_H */

/** @file
   cubert — pinned host memory for users (the reference's reserve_staging,
   create_from_slice_pinned and create_tensors_from_slices_pinned).

   A device with its own memory (an OpenCL GPU) copies host memory that the driver has pinned
   by DMA at the link's speed (about 55 GB/s on an H100 or H200), while malloc'd memory goes
   through the driver's bounce buffer (about 7-8 GB/s) or cubert's staging threads. A block from
   cubert_client_reserve_pinned is memory of the first kind: cubert_client_create_buffer,
   cubert_client_write, cubert_client_read, cubert_client_read_range and the asynchronous reads
   whose host side lies in such a block hand it straight to the driver, for any client of any
   device in the process. Servers without pinned memory (the CPU server, host-unified OpenCL
   devices where the driver's copy is a memcpy either way) give ordinary heap memory instead,
   so the calls can be used unconditionally (the reference's fallback).

   Lifetime rule: cubert_pinned_release gives a block back at once when no transfer uses it;
   while a queued transfer (a future's read, cubert_client_read_async and the other calls that
   return a cubert_future) still reads into it, the block stays allocated and is given back
   when the last such future completed (cubert_future_wait or cubert_future_release). The caller
   must not touch the bytes after the release in either case, as after free(). Synchronous calls
   (create_buffer, write, read) are done with the memory when they return. Each block retains
   its device instance until it is given back. Pinned memory is a limited system resource:
   reserve it for data that moves often, and release it when done. */
#ifndef CUBERT_PINNED_H
#define CUBERT_PINNED_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/layout.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** What backs host memory, as cubert_pinned_kind_of reports it. */
typedef enum cubert_pinned_kind {
  CUBERT_PINNED_NONE = 0, /**< no live block of cubert_client_reserve_pinned holds it */
  CUBERT_PINNED_HEAP = 1, /**< a block of the heap fallback (server without pinned memory) */
  /** a block of the server's pinned memory (server.h host_alloc; on a host-unified OpenCL
     device such as PoCL, aligned host memory, which that driver copies as fast as any) */
  CUBERT_PINNED_DEVICE = 2,
} cubert_pinned_kind;

/** The largest block cubert_client_reserve_pinned accepts, in bytes (PTRDIFF_MAX). */
#define CUBERT_PINNED_MAX_BYTES ((size_t)PTRDIFF_MAX)

/** *out = a new block of `size` bytes of host memory (64-byte aligned, uninitialised) that the
   client's device copies to and from at full speed: the server's pinned memory where it has
   some, else (no pinned memory, or the server refused the size) ordinary heap memory
   (cubert_pinned_kind_of tells which). The block is the caller's until cubert_pinned_release.
   Thread-safe. Errors (*out NULL): INVALID_ARGUMENT for a NULL out, `size` 0, or `size` above
   CUBERT_PINNED_MAX_BYTES (the message names the size and the limit); NOT_FOUND for a released
   client; OUT_OF_MEMORY (with the size) when neither pinned nor heap memory could be had. */
CUBERT_API cubert_status cubert_client_reserve_pinned(cubert_client *client, size_t size,
                                                      void **out);
/** Gives back a block of cubert_client_reserve_pinned: at once, or, while a queued transfer
   still reads into it, when the last such future completed (see the lifetime rule above).
   `ptr` must be the address reserve returned. Thread-safe. Accepts NULL (no effect). Errors
   (nothing is freed): INVALID_ARGUMENT for an address inside a block but not its start
   (naming the block's start and size), or for one that is no live block (never reserved, or
   released already). */
CUBERT_API cubert_status cubert_pinned_release(void *ptr);
/** What backs the byte at `ptr`: the kind of the live block holding it, or CUBERT_PINNED_NONE.
   Thread-safe; never fails. */
CUBERT_API cubert_pinned_kind cubert_pinned_kind_of(const void *ptr);

/** cubert_client_create_buffer through pinned memory (the reference's create_from_slice_pinned):
   copies `data` into a block of cubert_client_reserve_pinned (heap fallback as there), creates
   the buffer from that block, and releases it. When `data` already lies in a block, the buffer
   is created from it directly. Costs one host allocation per call: for repeated uploads,
   reserve a block once, fill it, and call cubert_client_create_buffer from it. Errors: those of
   cubert_client_create_buffer and cubert_client_reserve_pinned. */
CUBERT_API cubert_status cubert_client_create_buffer_pinned(cubert_client *client, const void *data,
                                                            size_t size, cubert_handle **out);
/** cubert_client_create_tensors through pinned memory (the reference's
   create_tensors_from_slices_pinned): for each data[k] (contiguous row-major, NULL leaves the
   tensor uninitialised) a block of the tensor's whole span is reserved, the rows are copied
   into it at the tensor's pitch, and the tensor's memory is written from it in one transfer.
   Errors: those of cubert_client_create_tensors and cubert_client_reserve_pinned; on error no
   tensor is left allocated and no block is left reserved. */
CUBERT_API cubert_status cubert_client_create_tensors_pinned(cubert_client *client,
                                                             const void *const *data,
                                                             const cubert_layout_desc *descs,
                                                             size_t count, cubert_tensor *out);

CUBERT_EXTERN_C_END

#endif /* CUBERT_PINNED_H */

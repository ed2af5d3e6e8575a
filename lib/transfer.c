/* cubert — data between devices: cubert_client_to_client copies a handle's bytes into a new
   handle of another client's device, stream-ordered on both sides.

   Paths, by the two device instances:
   - one instance (two clients of one device, or one client): a device-side copy queued on the
     destination client's stream, after the source's last writer (the cross-stream protocol):
     the server's copy (clEnqueueCopyBuffer on OpenCL, a queued memcpy on the CPU server); the
     call returns at once. A server without the transfers table copies through host memory.
   - the source's memory is host memory (CPU server): wait for the source's writers (a size-0
     read future), then one write of that memory into the destination (on an OpenCL GPU its
     pinned staging pipeline; on a host-unified OpenCL device or another CPU instance a memcpy).
   - the destination's memory is host memory (CPU server): one read of the source straight into
     the new buffer's memory (an OpenCL GPU's staged read; a memcpy on host-unified devices).
   - otherwise (two OpenCL servers: two GPUs, two platforms, PoCL and a GPU): a pipeline through
     pinned host memory of the source's server (host_alloc), in chunks: the reads of the next
     TRANSFER_SLOTS - 1 chunks are queued (non-blocking reads on the source's stream, DMA into
     pinned memory) while chunk k is written to the destination (a write on its stream), so
     the two legs overlap. The call returns when the last chunk's write was queued.

   The core calls the public client functions and two optional server capabilities (the
   transfers table's copy, the pinned table); no backend is named here. */
#include "transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "call_scope.h"
#include "client.h"
#include "cubert/server/pinned.h"
#include "cubert/server/transfers.h"
#include "device.h"
#include "dry_run.h"
#include "handle.h"
#include "stream/resolve.h"
#include "stream/slots.h"

#ifndef TRANSFER_CHUNK
#define TRANSFER_CHUNK (8u << 20) /* bytes per pipeline chunk */
#endif
#define TRANSFER_SLOTS 4 /* chunks in flight (one being written, the rest being read) */

struct cubert_transfer_staging {
  void *slots[TRANSFER_SLOTS];
  int pinned; /* 1: slots came from the server's host_alloc, else malloc */
};

/* "'opencl:0 (NVIDIA H200)'" for messages. */
static void device_label(const cubert_device *d, char *buf, size_t capacity) {
  snprintf(buf, capacity, "'%.79s (%.200s)'", d->name, d->server->properties.name);
}

/* ---- the source device's pinned staging ---------------------------------------------------- */

static void staging_free(cubert_device *device, cubert_transfer_staging *st) {
  if (!st) return;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  for (int i = 0; i < TRANSFER_SLOTS; ++i) {
    if (!st->slots[i]) continue;
    if (st->pinned)
      server->pinned->host_free(server, st->slots[i]);
    else
      free(st->slots[i]);
  }
  cubert_device_unlock(device);
  free(st);
}

void cubert_transfer_init(cubert_transfer_state *state) {
  pthread_mutex_init(&state->lock, NULL);
  state->staging = NULL;
}

void cubert_transfer_release(cubert_device *device) {
  staging_free(device, device->transfer.staging);
  device->transfer.staging = NULL;
  pthread_mutex_destroy(&device->transfer.lock);
}

static cubert_status staging_alloc(cubert_device *device, cubert_transfer_staging **out) {
  *out = NULL;
  cubert_transfer_staging *st = calloc(1, sizeof(*st));
  if (!st) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cubert_server *server = device->server;
  st->pinned = server->pinned != NULL;
  cubert_status s = NULL;
  cubert_device_lock(device);
  for (int i = 0; i < TRANSFER_SLOTS && !s; ++i) {
    if (st->pinned) {
      s = server->pinned->host_alloc(server, TRANSFER_CHUNK, &st->slots[i]);
    } else {
      st->slots[i] = aligned_alloc(4096, TRANSFER_CHUNK);
      if (!st->slots[i])
        s = cubert_status_set_size(
            cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host staging of %u bytes failed",
                               TRANSFER_CHUNK),
            TRANSFER_CHUNK);
    }
  }
  if (s) staging_free(device, st);
  cubert_device_unlock(device);
  if (s) return s;
  *out = st;
  return NULL;
}

/* The device's staging, kept for later transfers, with its transfer lock held (*owned = 0);
   while another transfer holds that lock (or inside an exclusive() callback of the device, so
   that lock order never matters) a staging of this call's own (*owned = 1). */
static cubert_status staging_take(cubert_device *device, cubert_transfer_staging **out,
                                  int *owned) {
  if (pthread_mutex_trylock(&device->transfer.lock) == 0) {
    *owned = 0;
    if (!device->transfer.staging) {
      cubert_status s = staging_alloc(device, &device->transfer.staging);
      if (s) {
        pthread_mutex_unlock(&device->transfer.lock);
        return s;
      }
    }
    *out = device->transfer.staging;
    return NULL;
  }
  *owned = 1;
  return staging_alloc(device, out);
}

static void staging_give(cubert_device *device, cubert_transfer_staging *st, int owned) {
  if (owned)
    staging_free(device, st);
  else
    pthread_mutex_unlock(&device->transfer.lock);
}

/* ---- the paths ----------------------------------------------------------------------------- */

/* The bytes of `src` into `dst` (bindings of one device, of one size) on the client's stream,
   after the last users of both buffers on other streams: the server's copy
   (clEnqueueCopyBuffer; a queued memcpy on the CPU server), else, on a server without the
   transfers table, through host memory (a read, then a write: cubert/server/transfers.h). The
   caller keeps both slices alive. */
cubert_status cubert_transfer_copy_on_device(cubert_client *client, cubert_binding src,
                                             cubert_binding dst) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_device *device = call.device;
  cubert_server *server = call.server;
  cubert_stream_slot *slot = call.slot;
  cubert_binding b[2] = {src, dst};
  const uint64_t size = src.size;
  uint32_t index = call.index;
  cubert_status s = cubert_slot_resolve(device, index, b, 2);
  if (!s && server->transfers) {
    s = server->transfers->copy(server, slot->stream, &b[0], &b[1]);
  } else if (!s) {
    void *staging = malloc(size ? size : 1);
    if (!staging)
      s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                             "host allocation of %llu bytes to stage a copy failed",
                             (unsigned long long)size);
    if (!s) s = server->vtable->read(server, slot->stream, &b[0], staging, size);
    if (!s) s = server->vtable->write(server, slot->stream, &b[1], staging, size);
    free(staging);
  }
  if (!s) cubert_slot_mark_used(device, index, b, 2);
  return cubert_call_leave(&call, s);
}

/* Waits until the work queued so far that writes src (on any stream) finished. */
static cubert_status wait_for_writers(cubert_client *client, cubert_handle *src) {
  cubert_future *f = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_read_async(client, src, NULL, 0, &f));
  cubert_status s = cubert_future_wait(f);
  cubert_future_release(f);
  return s;
}

/* Queues the read of chunk k of the range into staging slot k % TRANSFER_SLOTS. */
static cubert_status read_chunk(cubert_client *client, cubert_handle *src, uint64_t offset,
                                uint64_t size, uint64_t k, const cubert_transfer_staging *st,
                                cubert_future **out) {
  uint64_t begin = k * TRANSFER_CHUNK;
  uint64_t n = size - begin < TRANSFER_CHUNK ? size - begin : TRANSFER_CHUNK;
  cubert_handle *view = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_handle_view(src, offset + begin, n, &view));
  cubert_status s =
      cubert_client_read_async(client, view, st->slots[k % TRANSFER_SLOTS], (size_t)n, out);
  cubert_handle_release(view);
  return s;
}

static cubert_status staged_pipeline(cubert_client *src_client, cubert_device *src_device,
                                     cubert_handle *src, uint64_t offset, uint64_t size,
                                     cubert_client *dst_client, cubert_handle *dst) {
  cubert_transfer_staging *st = NULL;
  int owned = 0;
  CUBERT_RETURN_IF_ERROR(staging_take(src_device, &st, &owned));
  uint64_t chunks = (size + TRANSFER_CHUNK - 1) / TRANSFER_CHUNK;
  cubert_future *futures[TRANSFER_SLOTS] = {NULL};
  uint64_t issued = 0;
  cubert_status s = NULL;
  for (uint64_t k = 0; k < chunks && !s; ++k) {
    /* Slot (k - 1) % SLOTS was written last round: read ahead into it and the others. */
    for (; issued < chunks && issued < k + TRANSFER_SLOTS && !s; ++issued)
      s = read_chunk(src_client, src, offset, size, issued, st, &futures[issued % TRANSFER_SLOTS]);
    if (s) break;
    cubert_future **f = &futures[k % TRANSFER_SLOTS];
    s = cubert_future_wait(*f);
    cubert_future_release(*f);
    *f = NULL;
    if (s) break;
    uint64_t begin = k * TRANSFER_CHUNK;
    uint64_t n = size - begin < TRANSFER_CHUNK ? size - begin : TRANSFER_CHUNK;
    /* The write takes the bytes before it returns; the slot is free again. */
    s = cubert_client_write(dst_client, dst, begin, st->slots[k % TRANSFER_SLOTS], (size_t)n);
  }
  /* After an error: reads still in flight finish before their slots go back. */
  for (int i = 0; i < TRANSFER_SLOTS; ++i) cubert_future_release(futures[i]);
  staging_give(src_device, st, owned);
  return s;
}

/* ---- the call ------------------------------------------------------------------------------ */

/* The copy proper, with both clients and the source handle held. */
static cubert_status transfer(cubert_client *src_client, cubert_device *src_device,
                              cubert_handle *src, const cubert_handle_obj *h, uint64_t offset,
                              uint64_t size, cubert_client *dst_client, cubert_device *dst_device,
                              cubert_handle **out) {
  cubert_handle *dst = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_empty_filled_by_caller(dst_client, (size_t)size, &dst));
  cubert_status s = NULL;
  if (size == 0) {
    /* nothing to move */
  } else if (src_device == dst_device) {
    cubert_binding from = cubert_handle_binding(h);
    from.offset += offset;
    from.size = size;
    cubert_handle_obj *d = cubert_handle_acquire(dst);
    s = cubert_transfer_copy_on_device(dst_client, from, cubert_handle_binding(d));
    cubert_handle_release(dst);
  } else if (h->slice->page->host_ptr) {
    cubert_binding b = cubert_handle_binding(h);
    s = wait_for_writers(src_client, src);
    if (!s)
      s = cubert_client_write(dst_client, dst, 0,
                              (const char *)cubert_binding_host_ptr(&b) + offset, (size_t)size);
  } else {
    cubert_handle_obj *d = cubert_handle_acquire(dst);
    cubert_binding b = cubert_handle_binding(d);
    void *host = cubert_binding_host_ptr(&b);
    cubert_handle_release(dst);
    /* A new buffer no queued work uses: its host memory may be written from here. */
    if (host)
      s = cubert_client_read_range(src_client, src, offset, host, (size_t)size);
    else
      s = staged_pipeline(src_client, src_device, src, offset, size, dst_client, dst);
  }
  if (s) {
    cubert_handle_release(dst);
    return s;
  }
  *out = dst;
  return NULL;
}

cubert_status cubert_client_to_client_range(cubert_client *src_client, cubert_handle *src,
                                            uint64_t offset, uint64_t size,
                                            cubert_client *dst_client, cubert_handle **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "to_client: out is NULL");
  *out = NULL;
  cubert_client_obj *sc = NULL, *dc = NULL;
  CUBERT_RETURN_IF_ERROR_CONTEXT(cubert_client_acquire(src_client, &sc), "to_client: src_client");
  cubert_status s = cubert_client_acquire(dst_client, &dc);
  if (s) {
    cubert_client_release(src_client);
    return cubert_status_wrap(cubert_status_code(s), s, "to_client: dst_client");
  }
  char from[300], to[300];
  device_label(sc->device, from, sizeof(from));
  device_label(dc->device, to, sizeof(to));
  cubert_handle_obj *h = NULL;
  if (!src) {
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "to_client from %s to %s: src is NULL",
                           from, to);
  } else if (!(h = cubert_handle_acquire(src))) {
    s = cubert_status_make(CUBERT_CODE_NOT_FOUND,
                           "to_client from %s to %s: src was released (or is not a handle)", from,
                           to);
  } else if (h->device != sc->device) {
    char owner[300];
    device_label(h->device, owner, sizeof(owner));
    s = cubert_status_make(CUBERT_CODE_NOT_FOUND,
                           "to_client from %s to %s: src belongs to device instance %s, not to "
                           "src_client's",
                           from, to, owner);
  } else if (offset > h->size || size > h->size - offset) {
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "to_client from %s to %s: %llu bytes at offset %llu go past the end of "
                           "src (%llu bytes)",
                           from, to, (unsigned long long)size, (unsigned long long)offset,
                           (unsigned long long)h->size);
  } else {
    /* The new handle is written as any buffer is, dry run or not (cubert_client_set_dry_run):
       the reads of src that the paths between device instances make are part of the copy. */
    cubert_dry_run_real_begin();
    s = transfer(src_client, sc->device, src, h, offset, size, dst_client, dc->device, out);
    cubert_dry_run_real_end();
    if (s)
      s = cubert_status_wrap(cubert_status_code(s), s,
                             "to_client from %s to %s, %llu bytes at offset %llu of src (%llu "
                             "bytes)",
                             from, to, (unsigned long long)size, (unsigned long long)offset,
                             (unsigned long long)h->size);
  }
  if (h) cubert_handle_release(src);
  cubert_client_release(dst_client);
  cubert_client_release(src_client);
  return s;
}

cubert_status cubert_client_to_client(cubert_client *src_client, cubert_handle *src,
                                      cubert_client *dst_client, cubert_handle **out) {
  if (out) *out = NULL;
  uint64_t size = src ? cubert_handle_size(src) : 0;
  return cubert_client_to_client_range(src_client, src, 0, size, dst_client, out);
}

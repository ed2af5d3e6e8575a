/* cubert — host memory handed to users for fast transfers (cubert/pinned.h).

   A block is the server's pinned memory (server.h host_alloc) or, where the server has none or
   refuses, 64-byte aligned heap memory: the reference falls back the same way, so a caller
   never needs two code paths. The servers recognise their pinned ranges themselves (the OpenCL
   server's registry, backends/opencl/pinned.c), so the core only has to hand the memory out
   and take it back; this file is the one place that calls host_alloc/host_free for users.

   Blocks live in one process-wide list under `blocks_mu`, a leaf lock: nothing else is locked
   while it is held, and device locks are taken only after it is dropped (a block is given back
   under its device's lock). A release while a queued transfer reads into the block (a future,
   future.c, counted by use/unuse) only marks it; the last unuse gives it back. Users keep a
   handful of blocks, so a list walk per lookup is cheap next to the transfer it precedes. */
#include "pinned_host.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/status.h"
#include "client.h"
#include "cubert/pinned.h"
#include "cubert/server/pinned.h"
#include "device.h"

struct cubert_pinned_block {
  void *ptr;
  size_t size;
  cubert_device *device; /* retained until the block is given back */
  int device_pinned;     /* 1: from host_alloc, else aligned_alloc */
  uint32_t uses;         /* queued transfers into the block */
  int released;          /* cubert_pinned_release was called; given back at uses 0 */
  struct cubert_pinned_block *next;
};

static pthread_mutex_t blocks_mu = PTHREAD_MUTEX_INITIALIZER;
static cubert_pinned_block *blocks;

/* The live (not released) block holding [ptr, ptr + size), or NULL. blocks_mu held. */
static cubert_pinned_block *block_holding(const void *ptr, size_t size) {
  uintptr_t begin = (uintptr_t)ptr;
  for (cubert_pinned_block *b = blocks; b; b = b->next) {
    uintptr_t start = (uintptr_t)b->ptr;
    if (!b->released && begin >= start && begin - start < b->size &&
        size <= b->size - (begin - start))
      return b;
  }
  return NULL;
}

static void block_unlink(cubert_pinned_block *block) {
  for (cubert_pinned_block **at = &blocks; *at; at = &(*at)->next)
    if (*at == block) {
      *at = block->next;
      return;
    }
}

/* Frees an unlinked block's memory (under its device's lock, as host_free requires). */
static void block_give_back(cubert_pinned_block *block) {
  cubert_device *device = block->device;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  if (block->device_pinned)
    server->pinned->host_free(server, block->ptr);
  else
    free(block->ptr);
  cubert_device_unlock(device);
  cubert_device_release(device);
  free(block);
}

/* The block's memory: the server's pinned memory, else the heap (reference reserve_staging:
   "fall back to plain heap allocations so the caller always gets buffers"). */
static cubert_status block_alloc(cubert_device *device, cubert_pinned_block *block) {
  cubert_server *server = device->server;
  if (server->pinned) {
    cubert_device_lock(device);
    cubert_status s = server->pinned->host_alloc(server, block->size, &block->ptr);
    cubert_device_unlock(device);
    if (!s) {
      block->device_pinned = 1;
      return NULL;
    }
    cubert_log(CUBERT_LOG_INFO, "memory",
               "%s: no pinned host memory of %zu bytes (%s); heap memory instead", device->name,
               block->size, cubert_status_message(s));
    cubert_status_free(s);
    block->ptr = NULL;
  }
  size_t rounded = (block->size + 63) & ~(size_t)63;
  block->ptr = aligned_alloc(64, rounded);
  if (block->ptr) return NULL;
  return cubert_status_set_size(
      cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                         "cubert_client_reserve_pinned: no host memory of %zu bytes, pinned or "
                         "not",
                         block->size),
      block->size);
}

cubert_status cubert_client_reserve_pinned(cubert_client *client, size_t size, void **out) {
  if (!out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_client_reserve_pinned: out "
                              "is NULL");
  *out = NULL;
  if (size == 0 || size > CUBERT_PINNED_MAX_BYTES)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "cubert_client_reserve_pinned: size is %zu bytes; it must be 1 to "
                           "%zu (CUBERT_PINNED_MAX_BYTES)",
                           size, CUBERT_PINNED_MAX_BYTES),
        size, CUBERT_PINNED_MAX_BYTES);
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_pinned_block *block = calloc(1, sizeof(*block));
  cubert_status s =
      block ? NULL : cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (!s) {
    block->size = size;
    block->device = c->device;
    s = block_alloc(c->device, block);
  }
  if (s) {
    free(block);
    cubert_client_release(client);
    return s;
  }
  cubert_device_retain(c->device);
  cubert_client_release(client);
  pthread_mutex_lock(&blocks_mu);
  block->next = blocks;
  blocks = block;
  pthread_mutex_unlock(&blocks_mu);
  *out = block->ptr;
  return NULL;
}

cubert_status cubert_pinned_release(void *ptr) {
  if (!ptr) return NULL;
  pthread_mutex_lock(&blocks_mu);
  cubert_pinned_block *block = block_holding(ptr, 1);
  if (!block || block->ptr != ptr) {
    pthread_mutex_unlock(&blocks_mu);
    if (block)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "cubert_pinned_release: ptr %p lies %zu bytes into the block at "
                                "%p (%zu bytes); pass the address cubert_client_reserve_pinned "
                                "returned",
                                ptr, (size_t)((char *)ptr - (char *)block->ptr), block->ptr,
                                block->size);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_pinned_release: ptr %p is no live block of "
                              "cubert_client_reserve_pinned (never reserved, or released "
                              "already)",
                              ptr);
  }
  block->released = 1;
  int now = block->uses == 0;
  if (now) block_unlink(block);
  pthread_mutex_unlock(&blocks_mu);
  if (now) block_give_back(block);
  return NULL;
}

cubert_pinned_kind cubert_pinned_kind_of(const void *ptr) {
  pthread_mutex_lock(&blocks_mu);
  const cubert_pinned_block *block = ptr ? block_holding(ptr, 1) : NULL;
  cubert_pinned_kind kind = !block                 ? CUBERT_PINNED_NONE
                            : block->device_pinned ? CUBERT_PINNED_DEVICE
                                                   : CUBERT_PINNED_HEAP;
  pthread_mutex_unlock(&blocks_mu);
  return kind;
}

cubert_pinned_block *cubert_pinned_host_use(const void *ptr, size_t size) {
  if (!ptr || !size) return NULL;
  pthread_mutex_lock(&blocks_mu);
  cubert_pinned_block *block = block_holding(ptr, size);
  if (block) ++block->uses;
  pthread_mutex_unlock(&blocks_mu);
  return block;
}

void cubert_pinned_host_unuse(cubert_pinned_block *block) {
  if (!block) return;
  pthread_mutex_lock(&blocks_mu);
  int now = --block->uses == 0 && block->released;
  if (now) block_unlink(block);
  pthread_mutex_unlock(&blocks_mu);
  if (now) block_give_back(block);
}

size_t cubert_pinned_host_live_count(void) {
  size_t n = 0;
  pthread_mutex_lock(&blocks_mu);
  for (const cubert_pinned_block *b = blocks; b; b = b->next) ++n;
  pthread_mutex_unlock(&blocks_mu);
  return n;
}

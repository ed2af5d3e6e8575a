/* cubert — slice objects (slice.c): the reference count of a pool's blocks (cubert_slice_retain
   and cubert_slice_release of cubert/server.h) and the spare block objects the pools take and
   give back, so that reserving does no host allocation in the steady state. */
#ifndef CUBERT_MEMORY_SLICE_H
#define CUBERT_MEMORY_SLICE_H

#include <stddef.h>

#include "cubert/status.h"
#include "memory/memory_manager.h"
#include "memory/pool.h"

/* Makes sure `count` spare block objects exist so that the operation that follows cannot fail
   half-way. OUT_OF_MEMORY when the host refuses. */
cubert_status cubert_mem_spares_ensure(cubert_memory_manager *mm, size_t count);
/* A zeroed block from the spares (cubert_mem_spares_ensure must have provided it). */
mem_block *cubert_mem_block_get(mem_pool *pool);
/* Returns a block object to the spares, releasing its backend cache. */
void cubert_mem_block_put(mem_pool *pool, mem_block *block);
/* Releases the backend cache of a block whose offset/size is about to change. */
void cubert_mem_block_cache_drop(mem_pool *pool, mem_block *block);

#endif /* CUBERT_MEMORY_SLICE_H */

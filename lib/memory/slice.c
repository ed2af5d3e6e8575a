/* cubert — slice objects: reference counting and recycling of block objects. */
#include "memory/slice.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "memory/pool.h"

void cubert_slice_retain(cubert_slice *slice) {
  /* Relaxed: a new reference is always made from an existing one, which already orders it. */
  if (slice) atomic_fetch_add_explicit(&slice->refcount, 1, memory_order_relaxed);
}

void cubert_slice_release(cubert_slice *slice) {
  if (!slice) return;
  /* acq_rel: the last user's writes (a kernel's output, say) happen before the pool hands the
     memory out again. */
  if (atomic_fetch_sub_explicit(&slice->refcount, 1, memory_order_acq_rel) != 1) return;
  cubert_memory_manager *mm = slice->pool_private;
  if (!mm) {
    /* A slice that no manager owns: wrapped user memory, or a test's static slice. */
    if (slice->external_release) slice->external_release(slice);
    return;
  }
  /* The last reference is gone: tell the manager with a lock-free push (Treiber stack). This
     runs on worker threads without the device lock; the manager takes the whole stack at once
     with an exchange, so the push has no ABA problem. */
  mem_block *block = (mem_block *)slice;
  mem_block *head = atomic_load_explicit(&mm->freed, memory_order_relaxed);
  do {
    block->freed_next = head;
  } while (!atomic_compare_exchange_weak_explicit(&mm->freed, &head, block, memory_order_release,
                                                  memory_order_relaxed));
}

cubert_status cubert_mem_spares_ensure(cubert_memory_manager *mm, size_t count) {
  while (mm->spare_count < count) {
    mem_chunk *chunk = calloc(1, sizeof *chunk);
    if (!chunk)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                             "host out of memory: %zu bytes for memory pool bookkeeping",
                             sizeof *chunk),
          sizeof *chunk);
    chunk->next = mm->chunks;
    mm->chunks = chunk;
    for (size_t i = 0; i < CUBERT_MEM_CHUNK_BLOCKS; i++) {
      mem_block *b = &chunk->blocks[i];
      b->free_next = mm->spares;
      mm->spares = b;
    }
    mm->spare_count += CUBERT_MEM_CHUNK_BLOCKS;
  }
  return NULL;
}

mem_block *cubert_mem_block_get(mem_pool *pool) {
  cubert_memory_manager *mm = pool->mm;
  mem_block *b = mm->spares;
  /* The caller reserved spares with cubert_mem_spares_ensure before changing anything. */
  if (!b) return NULL;
  mm->spares = b->free_next;
  mm->spare_count--;
  memset(b, 0, sizeof *b);
  b->pool = pool;
  b->slice.pool_private = mm;
  return b;
}

void cubert_mem_block_cache_drop(mem_pool *pool, mem_block *block) {
  cubert_slice *s = &block->slice;
  if (!s->backend_cache) return;
  const cubert_storage_iface *st = &pool->mm->storage;
  if (st->slice_cache_release) st->slice_cache_release(st->ctx, s);
  s->backend_cache = NULL;
  s->backend_cache_offset = 0;
  s->backend_cache_size = 0;
}

void cubert_mem_block_put(mem_pool *pool, mem_block *block) {
  cubert_memory_manager *mm = pool->mm;
  cubert_mem_block_cache_drop(pool, block);
  block->free_next = mm->spares;
  mm->spares = block;
  mm->spare_count++;
}

/* cubert — direct pool: one storage allocation per reservation, reused by exact size.

   With a reclaim watermark (`reclaim_at`), a new allocation that would take the pool over it
   first frees idle allocations, oldest first, just until it fits; it still allocates when it
   cannot fit (a watermark, not a budget), as the reference does. */
#include "memory/direct_pool.h"

#include "memory/pool.h"

static uint64_t page_bytes(const mem_pool *pool, uint64_t eff) {
  /* Never ask the storage for 0 bytes (see cubert_mem_size_class). */
  return eff ? eff : cubert_mem_alignment(pool);
}

static int direct_accepts(const mem_pool *pool, uint64_t size) {
  return size <= pool->mm->storage.max_page_size;
}

static mem_block *direct_try_reserve(mem_pool *pool, uint64_t size, uint64_t eff) {
  (void)size; /* the pools route by effective size */
  uint64_t bytes = page_bytes(pool, eff);
  for (mem_block *b = pool->free_head; b; b = b->free_next) {
    if (b->page->bytes != bytes) continue;
    cubert_mem_free_list_remove(&pool->free_head, b);
    return b;
  }
  return NULL;
}

static cubert_status direct_alloc(mem_pool *pool, uint64_t size, uint64_t eff, mem_block **out) {
  (void)size; /* the pools route by effective size */
  uint64_t bytes = page_bytes(pool, eff);
  uint64_t reclaim_at = pool->config.reclaim_at;
  if (reclaim_at && pool->usage.bytes_reserved + bytes > reclaim_at) {
    mem_page *page = pool->pages_head;
    while (page && pool->usage.bytes_reserved + bytes > reclaim_at) {
      mem_page *next = page->next;
      if (!page->first->used) {
        cubert_mem_free_list_remove(&pool->free_head, page->first);
        cubert_mem_page_free(pool, page);
      }
      page = next;
    }
  }
  return cubert_mem_single_page_alloc(pool, bytes, out);
}

static void direct_on_free(mem_pool *pool, mem_block *b) {
  cubert_mem_block_count_free(pool, b);
  cubert_mem_free_list_push(&pool->free_head, b);
}

static void direct_cleanup(mem_pool *pool, int explicit_cleanup) {
  if (!explicit_cleanup) return;
  while (pool->free_head) {
    mem_block *b = pool->free_head;
    cubert_mem_free_list_remove(&pool->free_head, b);
    cubert_mem_page_free(pool, b->page);
  }
}

const mem_pool_ops cubert_direct_pool_ops = {
    .accepts = direct_accepts,
    .try_reserve = direct_try_reserve,
    .alloc = direct_alloc,
    .on_free = direct_on_free,
    .cleanup = direct_cleanup,
};

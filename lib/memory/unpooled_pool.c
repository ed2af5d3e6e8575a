/* cubert — the unpooled "pool" of CUBERT_POOLS_EXCLUSIVE=1: one storage allocation per
   reservation, of exactly the requested size, freed as soon as the slice is released.

   For debugging, not speed: with no page shared between buffers and no padding after one, an
   access past the end of a buffer leaves its allocation, where AddressSanitizer (the CPU
   server's pages are host memory) and Oclgrind (each buffer is its own cl_mem) report it; and
   with nothing reused, a buffer never inherits another's bytes, so a read of memory that was
   never written is not hidden by an earlier buffer's data. The manager routes every
   reservation here (the persistent window included) while it is on. */
#include "memory/unpooled_pool.h"

#include "memory/pool.h"

static int unpooled_accepts(const mem_pool *pool, uint64_t size) {
  return size <= pool->mm->storage.max_page_size;
}

static mem_block *unpooled_try_reserve(mem_pool *pool, uint64_t size, uint64_t eff) {
  (void)pool, (void)size, (void)eff;
  return NULL; /* nothing is ever reused */
}

static cubert_status unpooled_alloc(mem_pool *pool, uint64_t size, uint64_t eff, mem_block **out) {
  (void)eff;
  /* A zero-size buffer still gets storage of its own (the storage gives it a distinct
     address); every other one ends exactly where the user's bytes end. */
  return cubert_mem_single_page_alloc(pool, size ? size : 1, out);
}

static void unpooled_on_free(mem_pool *pool, mem_block *b) {
  cubert_mem_block_count_free(pool, b);
  cubert_mem_page_free(pool, b->page);
}

static void unpooled_cleanup(mem_pool *pool, int explicit_cleanup) {
  (void)pool, (void)explicit_cleanup; /* no free pages are ever kept */
}

const mem_pool_ops cubert_unpooled_pool_ops = {
    .accepts = unpooled_accepts,
    .try_reserve = unpooled_try_reserve,
    .alloc = unpooled_alloc,
    .on_free = unpooled_on_free,
    .cleanup = unpooled_cleanup,
};

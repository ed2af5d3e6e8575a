/* cubert — what every pool kind shares: pages, hand-out and usage accounting. */
#include "memory/pool.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "memory/slice.h"

uint64_t cubert_mem_alignment(const mem_pool *pool) {
  uint64_t a = pool->mm->storage.alignment;
  return a ? a : 1;
}

uint64_t cubert_mem_size_class(uint64_t eff, uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  /* A zero-size reservation still gets a real (one alignment unit) page: storages are never
     asked for 0 bytes, which OpenCL refuses (CL_INVALID_BUFFER_SIZE). */
  if (eff == 0) return alignment;
  /* Eight classes per power of two: a page is at most 12.5% larger than its request, and
     requests of similar sizes land on the same class, so free pages get reused. (Four
     classes wasted ~3% more of the mixed benchmark's peak for no fewer allocations.) */
  uint64_t p = (uint64_t)1 << (63 - __builtin_clzll(eff));
  uint64_t step = p >= 8 ? p / 8 : 1;
  uint64_t c = eff;
  if (eff % step) {
    if (eff > UINT64_MAX - step) return eff;
    c = eff + (step - eff % step);
  }
  return cubert_align_up(c, alignment);
}

void cubert_mem_free_list_push(mem_block **head, mem_block *block) {
  block->free_prev = NULL;
  block->free_next = *head;
  if (*head) (*head)->free_prev = block;
  *head = block;
}

void cubert_mem_free_list_remove(mem_block **head, mem_block *block) {
  if (block->free_prev)
    block->free_prev->free_next = block->free_next;
  else
    *head = block->free_next;
  if (block->free_next) block->free_next->free_prev = block->free_prev;
  block->free_prev = block->free_next = NULL;
}

cubert_status cubert_mem_page_alloc(mem_pool *pool, uint64_t bytes, mem_page **out) {
  *out = NULL;
  mem_page *page = calloc(1, sizeof *page);
  if (!page)
    return cubert_status_set_size(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                           "host out of memory: %zu bytes for a memory page record", sizeof *page),
        sizeof *page);
  const cubert_storage_iface *st = &pool->mm->storage;
  cubert_status status = st->alloc(st->ctx, bytes, &page->storage);
  if (status) {
    free(page);
    if (cubert_status_code(status) != CUBERT_CODE_OUT_OF_MEMORY)
      status = cubert_status_set_size(
          cubert_status_wrap(CUBERT_CODE_OUT_OF_MEMORY, status,
                             "the storage refused a page of %llu bytes", (unsigned long long)bytes),
          bytes);
    return status;
  }
  if (page->storage.size == 0) page->storage.size = bytes;
  page->bytes = bytes;
  page->prev = pool->pages_tail;
  if (pool->pages_tail)
    pool->pages_tail->next = page;
  else
    pool->pages_head = page;
  pool->pages_tail = page;
  pool->pages++;
  if (pool->pages > pool->pages_peak) pool->pages_peak = pool->pages;
  pool->usage.bytes_reserved += bytes;
  *out = page;
  return NULL;
}

cubert_status cubert_mem_single_page_alloc(mem_pool *pool, uint64_t bytes, mem_block **out) {
  mem_page *page;
  *out = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_mem_page_alloc(pool, bytes, &page));
  mem_block *b = cubert_mem_block_get(pool);
  b->page = page;
  b->slice.page = &page->storage;
  b->span = bytes;
  page->first = b;
  *out = b;
  return NULL;
}

void cubert_mem_page_free(mem_pool *pool, mem_page *page) {
  /* Backend caches (OpenCL sub-buffers) go before the page they view. */
  mem_block *b = page->first;
  while (b) {
    mem_block *next = b->next;
    cubert_mem_block_put(pool, b);
    b = next;
  }
  const cubert_storage_iface *st = &pool->mm->storage;
  st->free(st->ctx, &page->storage);
  if (page->prev)
    page->prev->next = page->next;
  else
    pool->pages_head = page->next;
  if (page->next)
    page->next->prev = page->prev;
  else
    pool->pages_tail = page->prev;
  pool->pages--;
  pool->usage.bytes_reserved -= page->bytes;
  free(page);
}

void cubert_mem_block_hand_out(mem_pool *pool, mem_block *block, uint64_t size, uint64_t eff) {
  cubert_slice *s = &block->slice;
  /* A cached view stays valid only when it still starts at the slice and covers exactly the
     requested bytes or the whole effective size. */
  if (s->backend_cache && (s->backend_cache_offset != s->offset ||
                           (s->backend_cache_size != size && s->backend_cache_size != eff)))
    cubert_mem_block_cache_drop(pool, block);
  s->page = &block->page->storage;
  s->size = size;
  s->padding = eff - size;
  s->last_stream = 0;
  s->last_cursor = 0;
  s->pool_private = pool->mm;
  atomic_store_explicit(&s->refcount, 1, memory_order_relaxed);
  atomic_store_explicit(&s->handle_count, 0, memory_order_relaxed);
  block->used = 1;
  pool->usage.number_allocs++;
  pool->usage.bytes_in_use += size;
  pool->usage.bytes_padding += eff - size;
  if (size > pool->largest_alloc) pool->largest_alloc = size;
}

void cubert_mem_block_count_free(mem_pool *pool, mem_block *block) {
  block->used = 0;
  pool->usage.number_allocs--;
  pool->usage.bytes_in_use -= block->slice.size;
  pool->usage.bytes_padding -= block->slice.padding;
}

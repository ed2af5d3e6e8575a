/* cubert — sliced pool: pages carved first-fit into slices, free neighbours merged.

   Each page keeps its blocks in address order (prev/next) and its free blocks on a list with
   their total and the largest one cached, so a page that cannot fit a request costs O(1).

   Merging is lazy, as in the reference (which coalesces a page before searching it): a
   released block stays as it is until a request finds no single free block large enough in a
   page whose free bytes would suffice; then that page is coalesced. Why lazy: the common
   pattern of a loop that releases and re-reserves the same sizes then finds its old block
   intact (an exact fit is preferred over first fit), skipping the split and merge and keeping
   the backend's cached view of the block (an OpenCL sub-buffer) valid. */
#include "memory/sliced_pool.h"

#include "base/status.h"
#include "memory/pool.h"
#include "memory/slice.h"

static int sliced_accepts(const mem_pool *pool, uint64_t size) {
  const cubert_pool_config *c = &pool->config;
  if (size <= c->max_slice_size) return 1;
  /* The reference also lets an uncapped pool take a near-page-size request (wasting less than
     a fifth of the page) rather than sending it to a coarser pool. */
  return c->max_pool_size == 0 && size <= c->page_size && (c->page_size - size) * 5 < c->page_size;
}

static void recompute_largest(mem_page *page) {
  uint64_t largest = 0;
  for (mem_block *b = page->free_head; b; b = b->free_next)
    if (b->span > largest) largest = b->span;
  page->largest_free = largest;
}

static void free_block_add(mem_page *page, mem_block *b) {
  cubert_mem_free_list_push(&page->free_head, b);
  page->free_bytes += b->span;
  if (b->span > page->largest_free) page->largest_free = b->span;
}

/* Merges every run of adjacent free blocks of the page into its first block. */
static void coalesce(mem_pool *pool, mem_page *page) {
  for (mem_block *b = page->first; b; b = b->next) {
    if (b->used) continue;
    while (b->next && !b->next->used) {
      mem_block *n = b->next;
      cubert_mem_free_list_remove(&page->free_head, n);
      b->span += n->span;
      b->next = n->next;
      if (n->next) n->next->prev = b;
      cubert_mem_block_put(pool, n);
      cubert_mem_block_cache_drop(pool, b);
    }
  }
  recompute_largest(page);
}

/* Takes the free block `b` for a request of `eff` bytes, splitting the remainder off. */
static mem_block *take(mem_pool *pool, mem_page *page, mem_block *b, uint64_t eff) {
  uint64_t old_span = b->span;
  cubert_mem_free_list_remove(&page->free_head, b);
  page->free_bytes -= old_span;
  if (old_span > eff) {
    mem_block *rest = cubert_mem_block_get(pool);
    rest->page = page;
    rest->slice.page = &page->storage;
    rest->slice.offset = b->slice.offset + eff;
    rest->span = old_span - eff;
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->span = eff;
    cubert_mem_block_cache_drop(pool, b);
    cubert_mem_free_list_push(&page->free_head, rest);
    page->free_bytes += rest->span;
  }
  page->used_blocks++;
  if (old_span >= page->largest_free) recompute_largest(page);
  return b;
}

static mem_block *sliced_try_reserve(mem_pool *pool, uint64_t size, uint64_t eff) {
  (void)size; /* the pools route by effective size */
  for (mem_page *page = pool->pages_head; page; page = page->next) {
    if (!page->free_head || page->free_bytes < eff) continue;
    if (page->largest_free < eff) {
      coalesce(pool, page);
      if (page->largest_free < eff) continue;
    }
    /* An exact fit first (see above), else first fit by address as the reference: low
       offsets fill first, so the tail of a page stays in one piece for large requests. */
    mem_block *best = NULL;
    for (mem_block *b = page->free_head; b; b = b->free_next) {
      if (b->span == eff) {
        best = b;
        break;
      }
      if (b->span > eff && (!best || b->slice.offset < best->slice.offset)) best = b;
    }
    if (best) return take(pool, page, best, eff);
  }
  return NULL;
}

static cubert_status sliced_alloc(mem_pool *pool, uint64_t size, uint64_t eff, mem_block **out) {
  *out = NULL;
  const cubert_pool_config *c = &pool->config;
  if (pool->max_pages && pool->pages >= pool->max_pages)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_POOL_CAPACITY_EXCEEDED,
                           "sliced memory pool (page_size %llu, %llu pages, %llu bytes in use) "
                           "cannot fit %llu bytes within its max_pool_size %llu",
                           (unsigned long long)c->page_size, (unsigned long long)pool->pages,
                           (unsigned long long)pool->usage.bytes_in_use, (unsigned long long)size,
                           (unsigned long long)c->max_pool_size),
        size, c->max_pool_size);
  mem_page *page;
  CUBERT_RETURN_IF_ERROR(cubert_mem_page_alloc(pool, c->page_size, &page));
  mem_block *b = cubert_mem_block_get(pool);
  b->page = page;
  b->slice.page = &page->storage;
  b->slice.offset = 0;
  b->span = c->page_size;
  page->first = b;
  free_block_add(page, b);
  *out = take(pool, page, b, eff);
  return NULL;
}

static void sliced_on_free(mem_pool *pool, mem_block *b) {
  cubert_mem_block_count_free(pool, b);
  b->page->used_blocks--;
  free_block_add(b->page, b);
}

static void sliced_cleanup(mem_pool *pool, int explicit_cleanup) {
  /* Sliced pages are only returned on request: they are small relative to the device, and
     re-carving them is cheap compared with a driver allocation. */
  if (!explicit_cleanup) return;
  mem_page *page = pool->pages_head;
  while (page) {
    mem_page *next = page->next;
    if (page->used_blocks == 0)
      cubert_mem_page_free(pool, page);
    else
      coalesce(pool, page);
    page = next;
  }
}

const mem_pool_ops cubert_sliced_pool_ops = {
    .accepts = sliced_accepts,
    .try_reserve = sliced_try_reserve,
    .alloc = sliced_alloc,
    .on_free = sliced_on_free,
    .cleanup = sliced_cleanup,
};

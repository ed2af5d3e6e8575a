/* cubert — exclusive pool: one allocation per page, free pages reused, idle pages released.

   Page sizing differs from the reference on purpose. The reference sizes a new page to
   max(running average of requests, request), with the average starting at half the pool's
   maximum, so the first small request of a 128 MiB tail pool reserves 64 MiB. Here a new page
   is the request rounded up to its size class (eight classes per power of two: at most
   12.5% over), and a free page is reused only for requests it fits without wasting more than a
   third of itself. See memory/README.md. */
#include "memory/exclusive_pool.h"

#include "memory/pool.h"

/* The reference's aging: a new page starts at 4 and dies when a periodic check finds it free
   with a count of 5, so a page never reused goes at the first check that finds it free; each
   reuse buys it one more check. */
#define FREE_COUNT_NEW 4u
#define FREE_COUNT_DEAD 5u

static int exclusive_accepts(const mem_pool *pool, uint64_t size) {
  return size <= pool->config.max_alloc_size;
}

/* Largest page a request of `eff` bytes may take over: half as much again as the request (or
   its own size class for tiny requests), so that a large idle page is not tied up by a small
   buffer while the next large request allocates a new page. */
static uint64_t reuse_limit(const mem_pool *pool, uint64_t eff) {
  uint64_t cls = cubert_mem_size_class(eff, cubert_mem_alignment(pool));
  uint64_t half_more = eff + eff / 2;
  return half_more > cls ? half_more : cls;
}

static mem_block *exclusive_try_reserve(mem_pool *pool, uint64_t size, uint64_t eff) {
  (void)size; /* the pools route by effective size */
  uint64_t limit = reuse_limit(pool, eff);
  mem_block *best = NULL;
  /* Best fit, then the page reused most (lowest free_count): the reference prefers the most
     reused page so that rarely used ones age out; trying the smallest fitting page first keeps
     bigger pages for the requests that need them. */
  for (mem_block *b = pool->free_head; b; b = b->free_next) {
    uint64_t bytes = b->page->bytes;
    if (bytes < eff || bytes > limit) continue;
    if (!best || bytes < best->page->bytes ||
        (bytes == best->page->bytes && b->page->free_count < best->page->free_count))
      best = b;
  }
  if (!best) return NULL;
  cubert_mem_free_list_remove(&pool->free_head, best);
  if (best->page->free_count > 0) best->page->free_count--;
  return best;
}

/* Before a new page is allocated, idle pages of this pool are released, least reused first,
   while the manager would otherwise hold more than 1.5 times its bytes in use. Why: a new page
   is needed only when no idle page fits, so the idle ones are of the wrong size for the
   current work, and the reference's periodic check (thousands of reservations apart) lets them
   pile up to several times the memory in use. Sliced pages are never released implicitly (as
   in the reference), so the budget counts them too: this pool gives back what they hold idle.
   A steady loop never gets here (its requests find their old pages), so it keeps its pages. */
static void trim_idle(mem_pool *pool, uint64_t bytes) {
  cubert_memory_usage total;
  cubert_mem_manager_totals(pool->mm, &total);
  uint64_t in_use = total.bytes_in_use + bytes;
  uint64_t reserved = total.bytes_reserved + bytes;
  uint64_t budget = in_use + in_use / 2;
  while (pool->free_head && reserved > budget) {
    mem_block *victim = NULL;
    for (mem_block *b = pool->free_head; b; b = b->free_next)
      if (!victim || b->page->free_count > victim->page->free_count ||
          (b->page->free_count == victim->page->free_count && b->page->bytes > victim->page->bytes))
        victim = b;
    reserved -= victim->page->bytes;
    cubert_mem_free_list_remove(&pool->free_head, victim);
    cubert_mem_page_free(pool, victim->page);
  }
}

static cubert_status exclusive_alloc(mem_pool *pool, uint64_t size, uint64_t eff, mem_block **out) {
  (void)size; /* the pools route by effective size */
  uint64_t bytes = cubert_mem_size_class(eff, cubert_mem_alignment(pool));
  uint64_t max = pool->config.max_alloc_size;
  if (bytes > max && max >= eff && max > 0) bytes = max;
  trim_idle(pool, bytes);
  CUBERT_RETURN_IF_ERROR(cubert_mem_single_page_alloc(pool, bytes, out));
  (*out)->page->free_count = FREE_COUNT_NEW;
  return NULL;
}

static void exclusive_on_free(mem_pool *pool, mem_block *b) {
  cubert_mem_block_count_free(pool, b);
  cubert_mem_free_list_push(&pool->free_head, b);
}

static void exclusive_cleanup(mem_pool *pool, int explicit_cleanup) {
  mem_block *b = pool->free_head;
  while (b) {
    mem_block *next = b->free_next;
    mem_page *page = b->page;
    if (!explicit_cleanup && page->free_count < FREE_COUNT_DEAD) page->free_count++;
    if (explicit_cleanup || page->free_count >= FREE_COUNT_DEAD) {
      cubert_mem_free_list_remove(&pool->free_head, b);
      cubert_mem_page_free(pool, page);
    }
    b = next;
  }
}

const mem_pool_ops cubert_exclusive_pool_ops = {
    .accepts = exclusive_accepts,
    .try_reserve = exclusive_try_reserve,
    .alloc = exclusive_alloc,
    .on_free = exclusive_on_free,
    .cleanup = exclusive_cleanup,
};

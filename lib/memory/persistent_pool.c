/* cubert — persistent pool: exact-size buckets, one storage allocation per slice.

   Serves reservations made inside a persistent window (model weights, say): they live long,
   so each gets its own allocation and only a later request of the identical effective size
   reuses it. Never cleaned up implicitly. Buckets are a sorted array searched by bisection. */
#include "memory/persistent_pool.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "memory/pool.h"

/* Index of the bucket of `eff`, or where it would be inserted. */
static size_t bucket_search(const mem_pool *pool, uint64_t eff) {
  size_t lo = 0, hi = pool->bucket_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pool->buckets[mid].eff < eff)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static mem_bucket *bucket_find(mem_pool *pool, uint64_t eff) {
  size_t i = bucket_search(pool, eff);
  return i < pool->bucket_count && pool->buckets[i].eff == eff ? &pool->buckets[i] : NULL;
}

static int persistent_accepts(const mem_pool *pool, uint64_t size) {
  return size <= pool->mm->storage.max_page_size;
}

static mem_block *persistent_try_reserve(mem_pool *pool, uint64_t size, uint64_t eff) {
  (void)size; /* the pools route by effective size */
  mem_bucket *bucket = bucket_find(pool, eff);
  if (!bucket || !bucket->free_head) return NULL;
  mem_block *b = bucket->free_head;
  cubert_mem_free_list_remove(&bucket->free_head, b);
  return b;
}

static cubert_status persistent_alloc(mem_pool *pool, uint64_t size, uint64_t eff,
                                      mem_block **out) {
  (void)size; /* the pools route by effective size */
  *out = NULL;
  size_t i = bucket_search(pool, eff);
  int exists = i < pool->bucket_count && pool->buckets[i].eff == eff;
  if (!exists && pool->bucket_count == pool->bucket_capacity) {
    size_t cap = pool->bucket_capacity ? pool->bucket_capacity * 2 : 16;
    mem_bucket *grown = realloc(pool->buckets, cap * sizeof *grown);
    if (!grown)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                             "host out of memory: %zu bytes for persistent pool buckets",
                             cap * sizeof *grown),
          cap * sizeof *grown);
    pool->buckets = grown;
    pool->bucket_capacity = cap;
  }
  /* Storage first, bucket second: a failed allocation leaves no empty bucket behind. */
  mem_block *b;
  CUBERT_RETURN_IF_ERROR(
      cubert_mem_single_page_alloc(pool, eff ? eff : cubert_mem_alignment(pool), &b));
  if (!exists) {
    memmove(&pool->buckets[i + 1], &pool->buckets[i],
            (pool->bucket_count - i) * sizeof *pool->buckets);
    memset(&pool->buckets[i], 0, sizeof *pool->buckets);
    pool->buckets[i].eff = eff;
    pool->bucket_count++;
  }
  pool->buckets[i].blocks++;
  b->span = eff; /* the bucket key; the page may be one alignment unit for eff 0 */
  *out = b;
  return NULL;
}

static void persistent_on_free(mem_pool *pool, mem_block *b) {
  cubert_mem_block_count_free(pool, b);
  mem_bucket *bucket = bucket_find(pool, b->span);
  cubert_mem_free_list_push(&bucket->free_head, b);
}

static void persistent_cleanup(mem_pool *pool, int explicit_cleanup) {
  if (!explicit_cleanup) return;
  size_t kept = 0;
  for (size_t i = 0; i < pool->bucket_count; i++) {
    mem_bucket *bucket = &pool->buckets[i];
    while (bucket->free_head) {
      mem_block *b = bucket->free_head;
      cubert_mem_free_list_remove(&bucket->free_head, b);
      cubert_mem_page_free(pool, b->page);
      bucket->blocks--;
    }
    if (bucket->blocks) pool->buckets[kept++] = *bucket;
  }
  pool->bucket_count = kept;
}

const mem_pool_ops cubert_persistent_pool_ops = {
    .accepts = persistent_accepts,
    .try_reserve = persistent_try_reserve,
    .alloc = persistent_alloc,
    .on_free = persistent_on_free,
    .cleanup = persistent_cleanup,
};

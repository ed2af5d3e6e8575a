/* cubert — memory pool layouts: presets and validation of explicit lists. */
#include "memory/pool_config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/server.h"

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

uint64_t cubert_pool_default_dealloc_period(uint64_t max_alloc_size) {
  /* Bigger pools are checked less often: freeing and re-allocating a big page costs more than
     keeping it a while (reference build_pools). */
  double gib = (double)max_alloc_size / (double)GIB;
  return 5000u * (uint64_t)llround(1.0 + gib);
}

static cubert_pool_config exclusive_pool(uint64_t max_alloc_size) {
  cubert_pool_config pool;
  memset(&pool, 0, sizeof pool);
  pool.kind = CUBERT_POOL_EXCLUSIVE;
  pool.max_alloc_size = max_alloc_size;
  pool.dealloc_period = cubert_pool_default_dealloc_period(max_alloc_size);
  return pool;
}

/* The default layout: a zero-size exclusive pool, a ladder of sliced pools whose pages are a
   quarter of the previous one (so small buffers share pages and fragment little), and an
   exclusive tail for everything up to the device's maximum page. */
/* The ladder starts from min(max page, 128 MiB): see README.md, "Sliced pages from a huge max
   page". */
#define LADDER_TOP (128 * MIB)

static cubert_status subslices(uint64_t alignment, uint64_t max_page, cubert_pool_layout *out) {
  cubert_pool_config ladder[64];
  size_t rungs = 0;
  uint64_t cur = max_page < LADDER_TOP ? max_page : LADDER_TOP;
  unsigned base = 1;
  while (cur >= 32 * MIB && rungs < 64 && base < 63) {
    cur = cubert_align_up(cur / 4, alignment);
    cubert_pool_config pool;
    memset(&pool, 0, sizeof pool);
    pool.kind = CUBERT_POOL_SLICED;
    pool.page_size = cur;
    pool.max_slice_size = cubert_align_up(cur >> base, alignment);
    if (pool.max_slice_size > cur) pool.max_slice_size = cur;
    ladder[rungs++] = pool;
    base++;
  }
  out->pools = calloc(rungs + 2, sizeof *out->pools);
  if (!out->pools) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "pool layout");
  size_t n = 0;
  out->pools[n++] = exclusive_pool(0);
  for (size_t i = rungs; i-- > 0;) out->pools[n++] = ladder[i];
  out->pools[n++] = exclusive_pool(cubert_align_down(max_page, alignment));
  out->count = n;
  return NULL;
}

/* 24 exclusive buckets, log-spaced from 32 KiB to the maximum page (reference
   ExclusivePages); equal sizes after alignment collapse into one bucket. */
static cubert_status exclusive_pages(uint64_t alignment, uint64_t max_page,
                                     cubert_pool_layout *out) {
  enum { BUCKETS = 24 };
  const double lo = (double)(32 * KIB);
  uint64_t top = cubert_align_down(max_page, alignment);
  out->pools = calloc(BUCKETS, sizeof *out->pools);
  if (!out->pools) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "pool layout");
  double ratio = max_page > 32 * KIB ? (double)max_page / lo : 1.0;
  size_t n = 0;
  for (int i = 0; i < BUCKETS; i++) {
    uint64_t size;
    if (i == BUCKETS - 1) {
      size = top; /* exact, whatever pow() rounds to */
    } else {
      size = cubert_align_up((uint64_t)ceil(lo * pow(ratio, (double)i / (BUCKETS - 1))), alignment);
      if (size > top) size = top;
    }
    if (n > 0 && out->pools[n - 1].max_alloc_size >= size) continue;
    out->pools[n++] = exclusive_pool(size);
  }
  out->count = n;
  return NULL;
}

static cubert_status resolve_one(const cubert_pool_config *in, size_t index, uint64_t alignment,
                                 uint64_t max_page, cubert_pool_config *out) {
  memset(out, 0, sizeof *out);
  out->kind = in->kind;
  switch (in->kind) {
    case CUBERT_POOL_SLICED: {
      if (in->page_size == 0)
        return cubert_status_make(CUBERT_CODE_ZERO_SIZE,
                                  "pools[%zu].page_size is 0; a sliced pool needs pages", index);
      uint64_t page = cubert_align_up(in->page_size, alignment);
      uint64_t slice = in->max_slice_size ? cubert_align_up(in->max_slice_size, alignment) : page;
      if (slice > page)
        return cubert_status_set_limits(
            cubert_status_make(CUBERT_CODE_SLICE_LARGER_THAN_PAGE,
                               "pools[%zu].max_slice_size %llu is larger than its page_size %llu",
                               index, (unsigned long long)slice, (unsigned long long)page),
            slice, page);
      if (page > max_page)
        return cubert_status_set_limits(
            cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                               "pools[%zu].page_size %llu exceeds the device's max_page_size %llu",
                               index, (unsigned long long)page, (unsigned long long)max_page),
            page, max_page);
      uint64_t cap = in->max_pool_size ? cubert_align_up(in->max_pool_size, alignment) : 0;
      if (cap && cap < page)
        return cubert_status_set_limits(
            cubert_status_make(CUBERT_CODE_CAP_SMALLER_THAN_PAGE,
                               "pools[%zu].max_pool_size %llu is smaller than its page_size %llu",
                               index, (unsigned long long)cap, (unsigned long long)page),
            cap, page);
      if (cap && cap / page > CUBERT_POOL_PAGE_LIMIT)
        return cubert_status_set_limits(
            cubert_status_make(CUBERT_CODE_TOO_MANY_PAGES,
                               "pools[%zu] would hold %llu pages (max_pool_size %llu / page_size "
                               "%llu); the limit is %d",
                               index, (unsigned long long)(cap / page), (unsigned long long)cap,
                               (unsigned long long)page, CUBERT_POOL_PAGE_LIMIT),
            cap / page, CUBERT_POOL_PAGE_LIMIT);
      out->page_size = page;
      out->max_slice_size = slice;
      out->max_pool_size = cap;
      out->dealloc_period = in->dealloc_period;
      return NULL;
    }
    case CUBERT_POOL_EXCLUSIVE: {
      if (in->max_alloc_size == 0)
        return cubert_status_make(CUBERT_CODE_ZERO_SIZE,
                                  "pools[%zu].max_alloc_size is 0; an exclusive pool needs a size",
                                  index);
      uint64_t max = cubert_align_up(in->max_alloc_size, alignment);
      if (max > max_page)
        return cubert_status_set_limits(
            cubert_status_make(
                CUBERT_CODE_INVALID_ARGUMENT,
                "pools[%zu].max_alloc_size %llu exceeds the device's max_page_size %llu", index,
                (unsigned long long)max, (unsigned long long)max_page),
            max, max_page);
      out->max_alloc_size = max;
      out->dealloc_period =
          in->dealloc_period ? in->dealloc_period : cubert_pool_default_dealloc_period(max);
      return NULL;
    }
    case CUBERT_POOL_DIRECT:
      out->reclaim_at = in->reclaim_at ? cubert_align_up(in->reclaim_at, alignment) : 0;
      return NULL;
    case CUBERT_POOL_PERSISTENT:
    default:
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "pools[%zu].kind %d is not a dynamic pool kind (SLICED, EXCLUSIVE "
                                "or DIRECT); the persistent pool always exists",
                                index, (int)in->kind);
  }
}

cubert_status cubert_pool_layout_resolve(const cubert_memory_config *config, uint64_t alignment,
                                         uint64_t max_page_size, cubert_pool_layout *out) {
  out->pools = NULL;
  out->count = 0;
  if (alignment == 0) alignment = 1;
  cubert_pool_preset preset = config ? config->preset : CUBERT_POOLS_SUBSLICES;
  switch (preset) {
    case CUBERT_POOLS_SUBSLICES:
      return subslices(alignment, max_page_size, out);
    case CUBERT_POOLS_EXCLUSIVE_PAGES:
      return exclusive_pages(alignment, max_page_size, out);
    case CUBERT_POOLS_EXPLICIT:
      break;
    default:
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "memory config preset %d is unknown (SUBSLICES, EXCLUSIVE_PAGES "
                                "or EXPLICIT)",
                                (int)preset);
  }
  if (!config->pools || config->pool_count == 0)
    return cubert_status_make(CUBERT_CODE_EMPTY_POOL_LIST,
                              "an explicit memory layout needs at least one pool");
  if (config->pool_count >= CUBERT_POOL_LIST_LIMIT)
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_TOO_MANY_POOLS,
                           "an explicit memory layout has %zu pools; at most %d are allowed",
                           config->pool_count, CUBERT_POOL_LIST_LIMIT - 1),
        config->pool_count, CUBERT_POOL_LIST_LIMIT - 1);
  cubert_pool_config *pools = calloc(config->pool_count, sizeof *pools);
  if (!pools) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "pool layout");
  for (size_t i = 0; i < config->pool_count; i++) {
    cubert_status st = resolve_one(&config->pools[i], i, alignment, max_page_size, &pools[i]);
    if (st) {
      free(pools);
      return st;
    }
  }
  out->pools = pools;
  out->count = config->pool_count;
  return NULL;
}

void cubert_pool_layout_free(cubert_pool_layout *layout) {
  free(layout->pools);
  layout->pools = NULL;
  layout->count = 0;
}

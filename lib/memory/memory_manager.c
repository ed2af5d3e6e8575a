/* cubert — the memory manager of one stream: routes reservations through its pools.

   Locking: every function runs under the device lock (the caller's), so the pools need no
   lock of their own. The only cross-thread traffic is cubert_slice_release pushing released
   slices onto `freed` (lock-free); each entry point drains that stack first, so the pools see
   every release that happened before the call. See memory/README.md. */
#include "memory/memory_manager.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "cubert/config.h"
#include "memory/direct_pool.h"
#include "memory/exclusive_pool.h"
#include "memory/persistent_pool.h"
#include "memory/pool.h"
#include "memory/slice.h"
#include "memory/sliced_pool.h"
#include "memory/unpooled_pool.h"

/* Reserve needs at most two new block objects (a new page's block and the remainder of its
   split); having them before touching anything keeps every error path clean. */
#define SPARES_PER_RESERVE 2

static void pool_init(cubert_memory_manager *mm, mem_pool *pool, const cubert_pool_config *c) {
  memset(pool, 0, sizeof *pool);
  pool->config = *c;
  pool->mm = mm;
  switch (c->kind) {
    case CUBERT_POOL_SLICED:
      pool->ops = &cubert_sliced_pool_ops;
      pool->max_pages = c->max_pool_size ? c->max_pool_size / c->page_size : 0;
      break;
    case CUBERT_POOL_EXCLUSIVE:
      pool->ops = &cubert_exclusive_pool_ops;
      break;
    case CUBERT_POOL_DIRECT:
      pool->ops = &cubert_direct_pool_ops;
      break;
    case CUBERT_POOL_PERSISTENT:
    default:
      pool->ops = &cubert_persistent_pool_ops;
      break;
  }
  /* The reference checks idle exclusive pages five times per dealloc period. */
  pool->until_check = c->dealloc_period >= 5 ? c->dealloc_period / 5 : 1;
}

static void pool_free_pages(mem_pool *pool) {
  while (pool->pages_head) cubert_mem_page_free(pool, pool->pages_head);
  free(pool->buckets);
  pool->buckets = NULL;
  pool->bucket_count = pool->bucket_capacity = 0;
  pool->free_head = NULL;
}

static cubert_status build_pools(cubert_memory_manager *mm, const cubert_memory_config *config,
                                 mem_pool **out_pools, size_t *out_count) {
  cubert_pool_layout layout;
  *out_pools = NULL;
  *out_count = 0;
  CUBERT_RETURN_IF_ERROR(cubert_pool_layout_resolve(config, mm->storage.alignment,
                                                    mm->storage.max_page_size, &layout));
  if (mm->unpooled) {
    /* CUBERT_POOLS_EXCLUSIVE: the layout was validated (an install still fails as it would
       without the setting) but every reservation goes to one unpooled pool. */
    mem_pool *pool = calloc(1, sizeof *pool);
    cubert_pool_layout_free(&layout);
    if (!pool) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host out of memory: pools");
    cubert_pool_config direct;
    memset(&direct, 0, sizeof direct);
    direct.kind = CUBERT_POOL_DIRECT;
    pool_init(mm, pool, &direct);
    pool->ops = &cubert_unpooled_pool_ops;
    *out_pools = pool;
    *out_count = 1;
    return NULL;
  }
  mem_pool *pools = calloc(layout.count, sizeof *pools);
  if (!pools) {
    cubert_pool_layout_free(&layout);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host out of memory: memory pools");
  }
  for (size_t i = 0; i < layout.count; i++) pool_init(mm, &pools[i], &layout.pools[i]);
  *out_pools = pools;
  *out_count = layout.count;
  cubert_pool_layout_free(&layout);
  return NULL;
}

/* Applies every release pushed since the last call. */
static void drain(cubert_memory_manager *mm) {
  mem_block *b = atomic_exchange_explicit(&mm->freed, NULL, memory_order_acquire);
  while (b) {
    mem_block *next = b->freed_next;
    /* A block pushed, then (wrongly) retained again is left alone; it is pushed again when
       its count next reaches 0. */
    if (b->used && atomic_load_explicit(&b->slice.refcount, memory_order_acquire) == 0)
      b->pool->ops->on_free(b->pool, b);
    b = next;
  }
}

cubert_status cubert_memory_manager_create(const cubert_storage_iface *storage,
                                           const cubert_memory_config *config,
                                           cubert_memory_manager **out) {
  *out = NULL;
  if (!storage || !storage->alloc || !storage->free)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "storage interface needs alloc and free functions");
  cubert_memory_manager *mm = calloc(1, sizeof *mm);
  if (!mm) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host out of memory: manager");
  mm->storage = *storage;
  mm->unpooled = cubert_config_get()->pools_exclusive;
  atomic_init(&mm->freed, NULL);
  cubert_pool_config persistent;
  memset(&persistent, 0, sizeof persistent);
  persistent.kind = CUBERT_POOL_PERSISTENT;
  persistent.max_alloc_size = storage->max_page_size;
  pool_init(mm, &mm->persistent, &persistent);
  cubert_status st = build_pools(mm, config, &mm->pools, &mm->pool_count);
  if (st) {
    free(mm);
    return st;
  }
  *out = mm;
  return NULL;
}

void cubert_memory_manager_destroy(cubert_memory_manager *mm) {
  if (!mm) return;
  for (size_t i = 0; i < mm->pool_count; i++) pool_free_pages(&mm->pools[i]);
  pool_free_pages(&mm->persistent);
  free(mm->pools);
  while (mm->chunks) {
    mem_chunk *next = mm->chunks->next;
    free(mm->chunks);
    mm->chunks = next;
  }
  free(mm);
}

/* The largest size some pool accepts, for error messages. */
static uint64_t largest_accepted(const cubert_memory_manager *mm) {
  uint64_t largest = 0;
  for (size_t i = 0; i < mm->pool_count; i++) {
    const cubert_pool_config *c = &mm->pools[i].config;
    uint64_t v = 0;
    switch (c->kind) {
      case CUBERT_POOL_SLICED:
        v = c->max_pool_size ? c->max_slice_size : c->page_size;
        break;
      case CUBERT_POOL_EXCLUSIVE:
        v = c->max_alloc_size;
        break;
      default:
        v = mm->storage.max_page_size;
        break;
    }
    if (v > largest) largest = v;
  }
  return largest;
}

static cubert_status too_big(const cubert_memory_manager *mm, uint64_t size) {
  return cubert_status_set_size(
      cubert_status_make(CUBERT_CODE_BUFFER_TOO_BIG,
                         "no memory pool accepts %llu bytes: the largest accepted size is %llu "
                         "bytes (device max_page_size %llu)",
                         (unsigned long long)size, (unsigned long long)largest_accepted(mm),
                         (unsigned long long)mm->storage.max_page_size),
      size);
}

/* One pass over the pools. Sets *storage_failed when a storage allocation failed (the caller
   then cleans up and retries once). */
static cubert_status reserve_once(cubert_memory_manager *mm, uint64_t size, uint64_t eff,
                                  mem_block **out, int *storage_failed) {
  *out = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_mem_spares_ensure(mm, SPARES_PER_RESERVE));
  if (mm->persistent_depth > 0 && !mm->unpooled) {
    mem_pool *pool = &mm->persistent;
    mem_block *b = pool->ops->try_reserve(pool, size, eff);
    if (!b) {
      cubert_status st = pool->ops->alloc(pool, size, eff, &b);
      if (st) {
        *storage_failed = 1;
        return st;
      }
    }
    cubert_mem_block_hand_out(pool, b, size, eff);
    *out = b;
    return NULL;
  }
  cubert_status capacity_error = NULL;
  mem_pool *full = NULL;
  int accepted = 0;
  for (size_t i = 0; i < mm->pool_count; i++) {
    mem_pool *pool = &mm->pools[i];
    if (!pool->ops->accepts(pool, size)) continue;
    accepted = 1;
    mem_block *b = pool->ops->try_reserve(pool, size, eff);
    cubert_status st = b ? NULL : pool->ops->alloc(pool, size, eff, &b);
    if (!st) {
      if (full && !full->capacity_warned) {
        /* A capped pool spilled into a later one; say so once per pool and layout, since a
           planned layout that spills usually means the plan is out of date. Info, not a
           warning: the allocation succeeded, nothing is wrong for the user (the default log
           level stays silent). */
        full->capacity_warned = 1;
        cubert_log(CUBERT_LOG_INFO, "memory", "memory pool %zu spills into pool %zu: %s",
                   (size_t)(full - mm->pools), i, cubert_status_message(capacity_error));
      }
      cubert_status_free(capacity_error);
      cubert_mem_block_hand_out(pool, b, size, eff);
      *out = b;
      return NULL;
    }
    if (cubert_status_code(st) == CUBERT_CODE_POOL_CAPACITY_EXCEEDED) {
      /* Keep the first capacity error: it names the pool the size was meant for. */
      if (capacity_error) {
        cubert_status_free(st);
      } else {
        capacity_error = st;
        full = pool;
      }
      continue;
    }
    *storage_failed = 1;
    if (capacity_error) {
      cubert_status_free(st);
      return capacity_error;
    }
    return st;
  }
  if (!accepted) return too_big(mm, size);
  return capacity_error;
}

/* Reservations counted per exclusive pool drive its periodic release of idle pages. */
static void tick_exclusive(cubert_memory_manager *mm) {
  for (size_t i = 0; i < mm->pool_count; i++) {
    mem_pool *pool = &mm->pools[i];
    if (pool->config.kind != CUBERT_POOL_EXCLUSIVE) continue;
    if (--pool->until_check > 0) continue;
    pool->until_check = pool->config.dealloc_period >= 5 ? pool->config.dealloc_period / 5 : 1;
    pool->ops->cleanup(pool, 0);
  }
}

cubert_status cubert_memory_reserve(cubert_memory_manager *mm, uint64_t size, cubert_slice **out) {
  *out = NULL;
  drain(mm);
  tick_exclusive(mm);
  if (size > mm->storage.max_page_size) return too_big(mm, size);
  /* Unpooled, a buffer's allocation ends where the buffer does: no padding. */
  uint64_t eff = mm->unpooled ? size : cubert_align_up(size, mm->storage.alignment);
  mem_block *b;
  int storage_failed = 0;
  cubert_status st = reserve_once(mm, size, eff, &b, &storage_failed);
  if (st && storage_failed) {
    /* The device (or host) may be full of pages that only idle slices hold: give them back and
       try once more, as the reference's CUDA server does. */
    cubert_status_free(st);
    cubert_memory_cleanup(mm, 1);
    storage_failed = 0;
    st = reserve_once(mm, size, eff, &b, &storage_failed);
  }
  /* Other streams' managers may hold the rest as idle pages (a slot keeps its pages after its
     buffers went): give those back too, as a CUDA caching allocator frees every stream's cached
     blocks before it reports out of memory. Only here, so that a slot's pages stay with it
     for reuse while there is room. */
  if (st && storage_failed && mm->storage.reclaim && mm->storage.reclaim(mm->storage.ctx, mm)) {
    cubert_status_free(st);
    storage_failed = 0;
    st = reserve_once(mm, size, eff, &b, &storage_failed);
  }
  if (st) return st;
  *out = &b->slice;
  return NULL;
}

void cubert_mem_manager_totals(const cubert_memory_manager *mm, cubert_memory_usage *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i <= mm->pool_count; i++) {
    const cubert_memory_usage *u = i < mm->pool_count ? &mm->pools[i].usage : &mm->persistent.usage;
    out->number_allocs += u->number_allocs;
    out->bytes_in_use += u->bytes_in_use;
    out->bytes_padding += u->bytes_padding;
    out->bytes_reserved += u->bytes_reserved;
  }
}

void cubert_memory_usage_get(const cubert_memory_manager *mm, cubert_memory_usage *out) {
  /* Under the device lock; draining is bookkeeping, not a visible change. */
  drain((cubert_memory_manager *)mm);
  cubert_mem_manager_totals(mm, out);
}

_Static_assert(CUBERT_POOL_LIST_LIMIT <= CUBERT_MAX_POOLS,
               "a memory report must hold every pool of a layout and the persistent pool");

void cubert_memory_report_get(const cubert_memory_manager *mm, cubert_memory_report *out) {
  cubert_memory_manager *m = (cubert_memory_manager *)mm;
  drain(m);
  for (size_t i = 0; i <= m->pool_count && out->pool_count < CUBERT_MAX_POOLS; i++) {
    const mem_pool *pool = i < m->pool_count ? &m->pools[i] : &m->persistent;
    cubert_pool_report *r = &out->pools[out->pool_count++];
    memset(r, 0, sizeof *r);
    r->config = pool->config;
    r->usage = pool->usage;
    r->pages = pool->pages;
    r->pages_peak = pool->pages_peak;
    r->largest_alloc = pool->largest_alloc;
  }
}

void cubert_memory_cleanup(cubert_memory_manager *mm, int explicit_cleanup) {
  drain(mm);
  for (size_t i = 0; i < mm->pool_count; i++) {
    mem_pool *pool = &mm->pools[i];
    if (!explicit_cleanup && pool->config.kind == CUBERT_POOL_EXCLUSIVE)
      pool->until_check = pool->config.dealloc_period >= 5 ? pool->config.dealloc_period / 5 : 1;
    pool->ops->cleanup(pool, explicit_cleanup);
  }
  mm->persistent.ops->cleanup(&mm->persistent, explicit_cleanup);
}

cubert_status cubert_memory_set_mode(cubert_memory_manager *mm, cubert_allocation_mode mode) {
  /* Windows nest: each PERSISTENT opens one, each AUTO closes the innermost. */
  if (mode == CUBERT_ALLOCATION_PERSISTENT) {
    mm->persistent_depth++;
    return NULL;
  }
  if (mm->persistent_depth == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "allocation_mode(AUTO) without an open PERSISTENT window on this "
                              "stream");
  mm->persistent_depth--;
  return NULL;
}

struct cubert_memory_pools {
  mem_pool *pools;
  size_t count;
};

cubert_status cubert_memory_pools_build(cubert_memory_manager *mm,
                                        const cubert_memory_config *config,
                                        cubert_memory_pools **out) {
  *out = NULL;
  cubert_memory_pools *built = calloc(1, sizeof *built);
  if (!built) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host out of memory: pools");
  cubert_status st = build_pools(mm, config, &built->pools, &built->count);
  if (st) {
    free(built);
    return st;
  }
  *out = built;
  return NULL;
}

void cubert_memory_pools_free(cubert_memory_pools *built) {
  if (!built) return;
  free(built->pools);
  free(built);
}

cubert_status cubert_memory_pools_in_use(cubert_memory_manager *mm) {
  cubert_memory_cleanup(mm, 1);
  /* Slices, not bytes: a live 0-byte slice holds no bytes but still points into a pool. */
  uint64_t live = 0, in_use = 0;
  for (size_t i = 0; i < mm->pool_count; i++) {
    live += mm->pools[i].usage.number_allocs;
    in_use += mm->pools[i].usage.bytes_in_use;
  }
  if (!live) return NULL;
  return cubert_status_set_size(
      cubert_status_make(CUBERT_CODE_POOLS_IN_USE,
                         "cannot install memory pools: %llu allocations (%llu bytes; 0-byte "
                         "buffers count too) are still live; release them first",
                         (unsigned long long)live, (unsigned long long)in_use),
      in_use);
}

cubert_status cubert_memory_pools_install(cubert_memory_manager *mm, cubert_memory_pools *built) {
  CUBERT_RETURN_IF_ERROR(cubert_memory_pools_in_use(mm));
  for (size_t i = 0; i < mm->pool_count; i++) pool_free_pages(&mm->pools[i]);
  free(mm->pools);
  mm->pools = built->pools;
  mm->pool_count = built->count;
  free(built);
  return NULL;
}

cubert_status cubert_memory_install_pools(cubert_memory_manager *mm,
                                          const cubert_memory_config *config) {
  cubert_memory_pools *built = NULL;
  /* Validate first: a bad layout leaves everything as it was. */
  CUBERT_RETURN_IF_ERROR(cubert_memory_pools_build(mm, config, &built));
  cubert_status st = cubert_memory_pools_install(mm, built);
  if (st) cubert_memory_pools_free(built);
  return st;
}

/* cubert — the memory manager of one stream (core-internal; see memory/README.md).

   Pools over a server's storage. Every function except cubert_slice_retain/release (declared
   in cubert/server.h) is called with the device lock held. */
#ifndef CUBERT_MEMORY_MANAGER_H
#define CUBERT_MEMORY_MANAGER_H

#include <stdint.h>

#include "cubert/memory.h"
#include "cubert/server.h"

typedef struct cubert_memory_manager cubert_memory_manager;

/* What the pools allocate from. `ctx` is passed back to each function. */
typedef struct cubert_storage_iface {
  void *ctx;
  cubert_status (*alloc)(void *ctx, uint64_t size, cubert_storage *out);
  void (*free)(void *ctx, cubert_storage *storage);
  /* Optional: frees slice->backend_cache when a slice is split, merged or destroyed. */
  void (*slice_cache_release)(void *ctx, cubert_slice *slice);
  /* Optional: frees the idle pages (no live slice) of every other manager over the same
     storage, `self` excepted; returns the bytes given back. Called by reserve when the storage
     refused a page even after `self`'s own cleanup. */
  uint64_t (*reclaim)(void *ctx, const cubert_memory_manager *self);
  uint64_t alignment;     /* every slice offset and page size is a multiple of this */
  uint64_t max_page_size; /* device limit for one page */
} cubert_storage_iface;

/* Builds the pools of `config` (NULL: the default SubSlices preset). Errors: the layout
   errors of cubert_client_install_memory_pools. */
cubert_status cubert_memory_manager_create(const cubert_storage_iface *storage,
                                           const cubert_memory_config *config,
                                           cubert_memory_manager **out);
/* Frees every page and slice object. The caller guarantees that nothing refers to them any
   more (the device is being destroyed after a full sync of every stream). */
void cubert_memory_manager_destroy(cubert_memory_manager *mm);

/* Reserves `size` bytes (size 0 is valid). Returns a slice with refcount 1 owned by the
   caller. BUFFER_TOO_BIG when no pool accepts the size, POOL_CAPACITY_EXCEEDED (with
   requested/capacity) when every accepting pool is capped and full, OUT_OF_MEMORY when the
   storage refuses even after an explicit cleanup and a retry, and, when that retry failed too,
   after the storage's reclaim of other managers' idle pages and one more retry. */
cubert_status cubert_memory_reserve(cubert_memory_manager *mm, uint64_t size, cubert_slice **out);
/* Sums usage over the pools. */
void cubert_memory_usage_get(const cubert_memory_manager *mm, cubert_memory_usage *out);
/* The same without first draining the released slices (for the pools themselves). */
void cubert_mem_manager_totals(const cubert_memory_manager *mm, cubert_memory_usage *out);
/* Appends this manager's pools to `out` (pool_count grows). */
void cubert_memory_report_get(const cubert_memory_manager *mm, cubert_memory_report *out);
/* explicit=1: frees every free page of every pool; explicit=0: the periodic cleanup of
   exclusive pools (run by reserve itself; exposed for tests). */
void cubert_memory_cleanup(cubert_memory_manager *mm, int explicit_cleanup);
/* Persistent windows nest: PERSISTENT enters, AUTO leaves. INVALID_ARGUMENT for AUTO without
   an open PERSISTENT window. */
cubert_status cubert_memory_set_mode(cubert_memory_manager *mm, cubert_allocation_mode mode);
/* Rebuilds the dynamic pools (explicit cleanup first). POOLS_IN_USE with bytes in use when a
   dynamic pool still has live slices; the old layout stays. */
cubert_status cubert_memory_install_pools(cubert_memory_manager *mm,
                                          const cubert_memory_config *config);
/* The same in two steps, for callers that install on several managers all or nothing:
   build (may fail: layout errors, OUT_OF_MEMORY; nothing changes), then install, which fails
   only with POOLS_IN_USE (the built pools then stay with the caller) and takes them over on
   success. Free unused built pools with cubert_memory_pools_free (accepts NULL). */
typedef struct cubert_memory_pools cubert_memory_pools;
/* POOLS_IN_USE (with the bytes in use) when a dynamic pool still has a live slice, 0-byte ones
   included (after an explicit cleanup); NULL when cubert_memory_pools_install would succeed. */
cubert_status cubert_memory_pools_in_use(cubert_memory_manager *mm);
cubert_status cubert_memory_pools_build(cubert_memory_manager *mm,
                                        const cubert_memory_config *config,
                                        cubert_memory_pools **out);
cubert_status cubert_memory_pools_install(cubert_memory_manager *mm, cubert_memory_pools *built);
void cubert_memory_pools_free(cubert_memory_pools *built);

#endif /* CUBERT_MEMORY_MANAGER_H */

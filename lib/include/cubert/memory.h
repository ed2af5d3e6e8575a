/** @file
   cubert — memory pool configuration, allocation modes and reports (`docs/architecture.md#memory`,
   lib/memory/README.md). */
#ifndef CUBERT_MEMORY_H
#define CUBERT_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** Allocation modes (cubert_client_allocation_mode). */
typedef enum cubert_allocation_mode {
  CUBERT_ALLOCATION_AUTO = 0,       /**< leave a persistent window (nesting) */
  CUBERT_ALLOCATION_PERSISTENT = 1, /**< enter a persistent window: exact-size persistent pool */
} cubert_allocation_mode;

/** Kinds of memory pool. */
typedef enum cubert_pool_kind {
  CUBERT_POOL_SLICED = 0,     /**< pages carved into first-fit slices */
  CUBERT_POOL_EXCLUSIVE = 1,  /**< one allocation per page, free pages reused */
  CUBERT_POOL_DIRECT = 2,     /**< one allocation per reservation, reused by exact size */
  CUBERT_POOL_PERSISTENT = 3, /**< exact-size buckets (report only) */
} cubert_pool_kind;

/** One pool of an explicit layout. Zero fields take defaults where the reference has one. */
typedef struct cubert_pool_config {
  cubert_pool_kind kind;   /**< SLICED, EXCLUSIVE or DIRECT (PERSISTENT in reports) */
  uint64_t page_size;      /**< SLICED: page bytes */
  uint64_t max_slice_size; /**< SLICED: largest slice (0: page_size) */
  uint64_t max_pool_size;  /**< SLICED: cap in bytes (0: uncapped) */
  uint64_t max_alloc_size; /**< EXCLUSIVE: largest allocation */
  uint64_t dealloc_period; /**< SLICED/EXCLUSIVE: reservations between implicit cleanups */
  uint64_t reclaim_at;     /**< DIRECT: watermark in bytes (0: none) */
} cubert_pool_config;

/** Pool layouts to install (cubert_client_install_memory_pools). */
typedef enum cubert_pool_preset {
  CUBERT_POOLS_SUBSLICES = 0,       /**< default: sliced ladder + exclusive tail */
  CUBERT_POOLS_EXCLUSIVE_PAGES = 1, /**< 24 log-spaced exclusive buckets */
  CUBERT_POOLS_EXPLICIT = 2,        /**< `pools[count]` */
} cubert_pool_preset;

/** A pool layout: a preset, or an explicit list of pools. */
typedef struct cubert_memory_config {
  cubert_pool_preset preset;       /**< SUBSLICES, EXCLUSIVE_PAGES or EXPLICIT */
  const cubert_pool_config *pools; /**< EXPLICIT: the pools, in order (copied) */
  size_t pool_count;               /**< EXPLICIT: entries of pools */
} cubert_memory_config;

/** Per pool statistics. */
typedef struct cubert_pool_report {
  cubert_pool_config config; /**< the pool's configuration */
  cubert_memory_usage usage; /**< its usage */
  uint64_t pages;            /**< pages it holds now */
  uint64_t pages_peak;       /**< most pages it held at once */
  uint64_t largest_alloc;    /**< largest allocation it served, bytes */
} cubert_pool_report;

/** Room for every pool a layout may have (at most 254 explicit pools) and the persistent one. */
#define CUBERT_MAX_POOLS 256
/** Per-pool statistics of one stream (cubert_client_memory_report). */
typedef struct cubert_memory_report {
  size_t pool_count;                          /**< entries of pools in use */
  cubert_pool_report pools[CUBERT_MAX_POOLS]; /**< dynamic pools in order, then persistent */
} cubert_memory_report;

CUBERT_EXTERN_C_END

#endif /* CUBERT_MEMORY_H */

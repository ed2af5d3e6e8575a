/* cubert — resolution of a memory pool layout against a device (core-internal).

   Turns a cubert_memory_config (a preset or an explicit list) into the list of dynamic pools a
   memory manager builds, with every size rounded up to the device alignment and every default
   filled in. See memory/README.md for the presets. */
#ifndef CUBERT_MEMORY_POOL_CONFIG_H
#define CUBERT_MEMORY_POOL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/memory.h"

/* An explicit list holds at most this many pools minus one (the reference's u8 pool index
   with one sentinel value). */
#define CUBERT_POOL_LIST_LIMIT 255
/* A capped sliced pool holds at most this many pages (the reference's u16 page index). */
#define CUBERT_POOL_PAGE_LIMIT 65535

/* A resolved layout: `pools[0..count)` in reservation order. Free with
   cubert_pool_layout_free(). */
typedef struct cubert_pool_layout {
  cubert_pool_config *pools;
  size_t count;
} cubert_pool_layout;

/* Resolves `config` (NULL: SubSlices) for a device with the given alignment and maximum page
   size (both bytes, alignment a power of two or any non-zero value). On success `out` owns a
   heap array. Errors: EMPTY_POOL_LIST, ZERO_SIZE (naming the field), SLICE_LARGER_THAN_PAGE,
   CAP_SMALLER_THAN_PAGE, TOO_MANY_PAGES (requested = page count), TOO_MANY_POOLS (requested =
   pool count), INVALID_ARGUMENT (unknown preset or kind, a page larger than the device's maximum
   page), OUT_OF_MEMORY. */
cubert_status cubert_pool_layout_resolve(const cubert_memory_config *config, uint64_t alignment,
                                         uint64_t max_page_size, cubert_pool_layout *out);
void cubert_pool_layout_free(cubert_pool_layout *layout);

/* The reference's implicit-cleanup period for an exclusive pool of `max_alloc_size` bytes:
   5000 reservations per started GiB (5000 * round(1 + size / 1 GiB)). */
uint64_t cubert_pool_default_dealloc_period(uint64_t max_alloc_size);

/* Rounds `size` up to a multiple of `alignment` (alignment 0 or 1: unchanged). Saturates at
   UINT64_MAX rounded down. */
static inline uint64_t cubert_align_up(uint64_t size, uint64_t alignment) {
  if (alignment <= 1) return size;
  uint64_t rem = size % alignment;
  if (rem == 0) return size;
  if (size > UINT64_MAX - (alignment - rem)) return UINT64_MAX - (UINT64_MAX % alignment);
  return size + (alignment - rem);
}

static inline uint64_t cubert_align_down(uint64_t size, uint64_t alignment) {
  return alignment <= 1 ? size : size - size % alignment;
}

#endif /* CUBERT_MEMORY_POOL_CONFIG_H */

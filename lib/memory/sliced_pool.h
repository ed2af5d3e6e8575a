/* cubert — the sliced pool kind (sliced_pool.c): pages carved first-fit into slices, free
   neighbours merged lazily. The memory manager (memory_manager.c) gives it CUBERT_POOL_SLICED
   pools. */
#ifndef CUBERT_MEMORY_SLICED_POOL_H
#define CUBERT_MEMORY_SLICED_POOL_H

#include "memory/pool.h"

/* The sliced pool's operations. */
extern const mem_pool_ops cubert_sliced_pool_ops;

#endif /* CUBERT_MEMORY_SLICED_POOL_H */

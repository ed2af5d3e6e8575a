/* cubert — the unpooled pool kind (unpooled_pool.c): one storage allocation of exactly the
   requested size per reservation, freed at release (for debugging). The memory manager
   (memory_manager.c) gives it every reservation under CUBERT_POOLS_EXCLUSIVE=1. */
#ifndef CUBERT_MEMORY_UNPOOLED_POOL_H
#define CUBERT_MEMORY_UNPOOLED_POOL_H

#include "memory/pool.h"

/* The unpooled pool's operations. */
extern const mem_pool_ops cubert_unpooled_pool_ops;

#endif /* CUBERT_MEMORY_UNPOOLED_POOL_H */

/* cubert — the exclusive pool kind (exclusive_pool.c): one allocation per page, free pages reused
   by size class, idle pages released. The memory manager (memory_manager.c) gives it
   CUBERT_POOL_EXCLUSIVE pools. */
#ifndef CUBERT_MEMORY_EXCLUSIVE_POOL_H
#define CUBERT_MEMORY_EXCLUSIVE_POOL_H

#include "memory/pool.h"

/* The exclusive pool's operations. */
extern const mem_pool_ops cubert_exclusive_pool_ops;

#endif /* CUBERT_MEMORY_EXCLUSIVE_POOL_H */

/* cubert — the direct pool kind (direct_pool.c): one storage allocation per reservation, reused by
   exact size, with an optional reclaim watermark. The memory manager (memory_manager.c) gives it
   CUBERT_POOL_DIRECT pools. */
#ifndef CUBERT_MEMORY_DIRECT_POOL_H
#define CUBERT_MEMORY_DIRECT_POOL_H

#include "memory/pool.h"

/* The direct pool's operations. */
extern const mem_pool_ops cubert_direct_pool_ops;

#endif /* CUBERT_MEMORY_DIRECT_POOL_H */

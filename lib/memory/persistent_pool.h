/* cubert — the persistent pool kind (persistent_pool.c): exact-size buckets, one storage allocation
   per slice, never cleaned up implicitly. The memory manager (memory_manager.c) gives it the
   persistent window's pool. */
#ifndef CUBERT_MEMORY_PERSISTENT_POOL_H
#define CUBERT_MEMORY_PERSISTENT_POOL_H

#include "memory/pool.h"

/* The persistent pool's operations. */
extern const mem_pool_ops cubert_persistent_pool_ops;

#endif /* CUBERT_MEMORY_PERSISTENT_POOL_H */

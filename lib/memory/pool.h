/* cubert — memory pools: the objects shared by the pool kinds (core-internal).

   A pool owns pages (one storage allocation each) and the blocks carved from them. A block is
   the core's cubert_slice plus the pool's bookkeeping; handles and bindings point at the
   embedded slice, so a block never moves or changes identity while referenced. Every function
   here runs under the device lock, except cubert_slice_release's push onto `freed`.
   See memory/README.md. */
#ifndef CUBERT_MEMORY_POOL_H
#define CUBERT_MEMORY_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cubert/memory.h"
#include "cubert/server.h"
#include "memory/memory_manager.h"
#include "memory/pool_config.h"

typedef struct mem_pool mem_pool;
typedef struct mem_page mem_page;

typedef struct mem_block {
  cubert_slice slice; /* first member: a cubert_slice* is a mem_block* */
  /* Address-ordered neighbours within the page (sliced pools only). */
  struct mem_block *prev, *next;
  /* The list the block sits on while free (a page's or a pool's free list, the spare list). */
  struct mem_block *free_prev, *free_next;
  /* Link of the lock-free stack of released slices (written by the releasing thread). */
  struct mem_block *freed_next;
  mem_page *page;
  mem_pool *pool;
  uint64_t span; /* bytes of the page this block covers (effective size when used) */
  uint8_t used;  /* pool view: handed out and not yet seen released */
} mem_block;

struct mem_page {
  cubert_storage storage; /* slice.page points here */
  mem_page *prev, *next;  /* the pool's pages, in allocation order */
  uint64_t bytes;         /* bytes requested from the storage (counted as reserved) */
  mem_block *first;       /* blocks in address order (one block outside sliced pools) */
  /* Sliced pools: the free blocks, their total and the largest one. */
  mem_block *free_head;
  uint64_t free_bytes;
  uint64_t largest_free;
  uint32_t used_blocks;
  /* Exclusive pools: the reference's free_count (age while free, minus reuses). */
  uint32_t free_count;
};

typedef struct mem_pool_ops {
  /* Whether this pool takes a request of `size` bytes at all. */
  int (*accepts)(const mem_pool *pool, uint64_t size);
  /* A free block of the pool that fits, made ready (offset set, span >= eff), or NULL. */
  mem_block *(*try_reserve)(mem_pool *pool, uint64_t size, uint64_t eff);
  /* Grows the pool by one page and carves the request from it. POOL_CAPACITY_EXCEEDED or
     the storage's error; nothing changes on error. */
  cubert_status (*alloc)(mem_pool *pool, uint64_t size, uint64_t eff, mem_block **out);
  /* A handed-out block was released (its refcount reached 0). */
  void (*on_free)(mem_pool *pool, mem_block *block);
  /* explicit_cleanup: free every free page; else the periodic check (exclusive pools). */
  void (*cleanup)(mem_pool *pool, int explicit_cleanup);
} mem_pool_ops;

/* One persistent bucket: free blocks of one effective size. */
typedef struct mem_bucket {
  uint64_t eff;
  mem_block *free_head;
  uint64_t blocks; /* free and used */
} mem_bucket;

struct mem_pool {
  const mem_pool_ops *ops;
  cubert_pool_config config; /* resolved */
  cubert_memory_manager *mm;
  mem_page *pages_head, *pages_tail;
  uint64_t pages, pages_peak, largest_alloc;
  cubert_memory_usage usage;
  int capacity_warned;
  /* SLICED */
  uint64_t max_pages; /* 0: uncapped */
  /* EXCLUSIVE / DIRECT: free blocks (one per page) */
  mem_block *free_head;
  uint64_t until_check; /* EXCLUSIVE: reservations left before the periodic check */
  /* PERSISTENT: buckets sorted by eff */
  mem_bucket *buckets;
  size_t bucket_count, bucket_capacity;
};

/* Block objects are allocated in chunks and recycled through the spare list, so reserve does no
   host allocation in the steady state. */
#define CUBERT_MEM_CHUNK_BLOCKS 64
typedef struct mem_chunk {
  struct mem_chunk *next;
  mem_block blocks[CUBERT_MEM_CHUNK_BLOCKS];
} mem_chunk;

struct cubert_memory_manager {
  cubert_storage_iface storage;
  /* Slices whose refcount reached 0, pushed by any thread, drained under the device lock. */
  _Atomic(mem_block *) freed;
  mem_pool *pools; /* dynamic pools in reservation order */
  size_t pool_count;
  mem_pool persistent;
  uint32_t persistent_depth;
  /* CUBERT_POOLS_EXCLUSIVE=1 when the manager was made: `pools` is one unpooled pool
     (unpooled_pool.c) and it serves the persistent window too. */
  int unpooled;
  mem_block *spares;
  size_t spare_count;
  mem_chunk *chunks;
};

/* ---- services of the manager to its pools (pool.c; the block objects: slice.h) ---------- */

/* One storage allocation of `bytes` (> 0) appended to the pool's pages. The storage's error on
   failure (as OUT_OF_MEMORY), OUT_OF_MEMORY when the host refuses the page object. */
cubert_status cubert_mem_page_alloc(mem_pool *pool, uint64_t bytes, mem_page **out);
/* A page of `bytes` holding one block that covers it (exclusive, direct, persistent pools). */
cubert_status cubert_mem_single_page_alloc(mem_pool *pool, uint64_t bytes, mem_block **out);
/* Frees the page and the block objects on it (the `first` chain). */
void cubert_mem_page_free(mem_pool *pool, mem_page *page);

/* Hands `block` (placed by the pool) to the caller: refcount 1, size/padding set, stream
   tracking reset, usage counted. */
void cubert_mem_block_hand_out(mem_pool *pool, mem_block *block, uint64_t size, uint64_t eff);
/* Undoes the usage accounting of a released block (called by on_free). */
void cubert_mem_block_count_free(mem_pool *pool, mem_block *block);

/* Doubly linked free list helpers (free_prev/free_next). */
void cubert_mem_free_list_push(mem_block **head, mem_block *block);
void cubert_mem_free_list_remove(mem_block **head, mem_block *block);

/* The page size an exclusive-style pool allocates for an effective size: the size class
   (eight classes per power of two, so at most 12.5% over), at least one alignment unit. */
uint64_t cubert_mem_size_class(uint64_t eff, uint64_t alignment);

/* The pool's alignment (device alignment, at least 1). */
uint64_t cubert_mem_alignment(const mem_pool *pool);

#endif /* CUBERT_MEMORY_POOL_H */

/* cubert — host memory handed to users for fast transfers (cubert/pinned.h): the process-wide
   list of blocks from cubert_client_reserve_pinned, and the use counts that keep a block alive
   while a queued transfer still reads into it. Not installed. */
#ifndef CUBERT_PINNED_HOST_H
#define CUBERT_PINNED_HOST_H

#include <stddef.h>

/** A block of cubert_client_reserve_pinned (opaque outside pinned_host.c). */
typedef struct cubert_pinned_block cubert_pinned_block;

/** Marks bytes [ptr, ptr + size) as the host side of a transfer queued now and finished later
   (a future's read): the block holding them, if any, is not given back before
   cubert_pinned_host_unuse. Returns that block, or NULL when the bytes lie in no live block
   (ordinary memory: nothing to track). Thread-safe; never blocks on a device. */
cubert_pinned_block *cubert_pinned_host_use(const void *ptr, size_t size);
/** Ends a use of cubert_pinned_host_use (NULL: nothing); gives the block back when it was
   released during the transfer and this was its last use. Call without any device lock. */
void cubert_pinned_host_unuse(cubert_pinned_block *block);
/** Blocks reserved and not yet given back, released ones still in use included (tests). */
size_t cubert_pinned_host_live_count(void);

#endif /* CUBERT_PINNED_HOST_H */

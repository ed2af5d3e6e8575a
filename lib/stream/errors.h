/* cubert — a stream's queue of asynchronous errors (errors.c; its push, submitter and pending
   checks are the servers', in cubert/server.h). Thread-safe: backends push from any thread.
   Each error is tagged with the stream id that submitted the failed command. */
#ifndef CUBERT_STREAM_ERRORS_H
#define CUBERT_STREAM_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/server.h"
#include "cubert/status.h"

cubert_status cubert_stream_errors_create(cubert_stream_errors **out);
void cubert_stream_errors_destroy(cubert_stream_errors *errors);
/* The id whose commands are queued from now on (the slot's owner): what
   cubert_stream_errors_submitter returns to the backends. */
void cubert_stream_errors_set_submitter(cubert_stream_errors *errors, uint64_t id);
/* All of the queue's errors as one SERVER_UNHEALTHY (NULL when none); the queue is empty
   after. */
cubert_status cubert_stream_errors_take(cubert_stream_errors *errors);
/* The errors of `submitter` only (and any that were lost for want of memory), as one
   SERVER_UNHEALTHY, NULL when none; the other ids' errors stay, in order. */
cubert_status cubert_stream_errors_take_for(cubert_stream_errors *errors, uint64_t submitter);
/* Moves the errors of `submitter` out, as they are (no SERVER_UNHEALTHY around them):
   *out_items (malloc'd, NULL when none), their count and the pushes that were lost for want
   of memory. */
void cubert_stream_errors_detach(cubert_stream_errors *errors, uint64_t submitter,
                                 cubert_status **out_items, size_t *out_count, size_t *out_dropped);
/* Puts errors of `submitter` detached earlier back in FRONT of those pushed since (ownership of
   `items` and each error moves in), so that the queue reads as if they had never left. */
void cubert_stream_errors_reattach(cubert_stream_errors *errors, uint64_t submitter,
                                   cubert_status *items, size_t count, size_t dropped);

#endif

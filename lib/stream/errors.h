/* cubert — a stream's queue of asynchronous errors (errors.c; its push and pending check are
   the servers', in cubert/server.h). Thread-safe: backends push from any thread. */
#ifndef CUBERT_STREAM_ERRORS_H
#define CUBERT_STREAM_ERRORS_H

#include <stddef.h>

#include "cubert/server.h"
#include "cubert/status.h"

cubert_status cubert_stream_errors_create(cubert_stream_errors **out);
void cubert_stream_errors_destroy(cubert_stream_errors *errors);
/* The queue's errors as one SERVER_UNHEALTHY (NULL when none); the queue is empty after. */
cubert_status cubert_stream_errors_take(cubert_stream_errors *errors);
/* Moves the queue's errors out, as they are (no SERVER_UNHEALTHY around them): *out_items
   (malloc'd, NULL when none), their count and the pushes that were lost for want of memory. */
void cubert_stream_errors_detach(cubert_stream_errors *errors, cubert_status **out_items,
                                 size_t *out_count, size_t *out_dropped);
/* Puts errors detached earlier back in FRONT of those pushed since (ownership of `items` and
   each error moves in), so that the queue reads as if they had never left. */
void cubert_stream_errors_reattach(cubert_stream_errors *errors, cubert_status *items, size_t count,
                                   size_t dropped);

#endif

/** @file
   cubert — stream identity. Each OS thread gets its own stream id by default; a client view
   can be pinned to an explicit id. Ids map onto CUBERT_MAX_STREAMS slots (id % slots), as in
   the reference StreamPool. Ids sharing a slot take turns on it (a slot passes to another id
   after the work of the previous one finished), so an asynchronous error is always returned
   to the stream id that raised it and never skips another stream's work. */
#ifndef CUBERT_STREAM_H
#define CUBERT_STREAM_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
/** A stream's id: any value; ids map onto slots as the file description says. */
typedef uint64_t cubert_stream_id;

/** The calling thread's stream id: taken lazily from a process-wide counter. */
CUBERT_API cubert_stream_id cubert_stream_id_current(void);
/** A new view of `client` whose work always goes to stream `id`, whatever thread submits it.
   The view shares the device, its memory and handles; release it with
   cubert_client_release. */
CUBERT_API cubert_status cubert_client_with_stream(cubert_client *client, cubert_stream_id id,
                                                   cubert_client **out);
/** The stream id the calling thread's work goes to through `client`. */
CUBERT_API cubert_stream_id cubert_client_stream(const cubert_client *client);

CUBERT_EXTERN_C_END

#endif /* CUBERT_STREAM_H */

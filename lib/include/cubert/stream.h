/** @file
   cubert — stream identity. Each OS thread gets its own stream id by default; a client view
   can be pinned to an explicit id. Ids map onto CUBERT_MAX_STREAMS slots (id % slots), as in
   the reference StreamPool. Ids sharing a slot take turns on it, one owner id at a time; when
   another id submits, the slot changes hands (only when more ids than slots are active):
   - CPU server: at once, without a host wait. The server keeps the submitting id with each
     queued command, so the previous owner's queued work goes on running ahead of the new
     owner's, in the slot's one queue.
   - OpenCL (and any server that does not set cubert_server.tags_errors): after the host waited
     for the previous owner's queued work to finish, because a failed command of an in-order
     queue fails the commands queued behind it, whoever queued them; its errors are kept for
     it.
   Either way an asynchronous error is returned to the stream id that raised it, and a
   stream's work is skipped only behind its own failures, never behind another stream's. */
#ifndef CUBERT_STREAM_H
#define CUBERT_STREAM_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
/** A stream's id: any value; ids map onto slots as the file description says. */
typedef uint64_t cubert_stream_id;

/** The calling thread's stream id: taken from a process-wide counter the first time the thread
   needs one (this call or its first submission), then the same for the thread's whole life; every
   thread gets a different id. Views pinned with cubert_client_with_stream do not change it.
   Thread-safe; never fails. */
CUBERT_API cubert_stream_id cubert_stream_id_current(void);
/** A new view of `client` whose work always goes to stream `id`, whatever thread submits it.
   The view shares the device, its memory and handles; release it with
   cubert_client_release. */
CUBERT_API cubert_status cubert_client_with_stream(cubert_client *client, cubert_stream_id id,
                                                   cubert_client **out);
/** The stream id the calling thread's work goes to through `client`: the view's pinned id, or
   cubert_stream_id_current() for a client that is not pinned. 0 for NULL or a released
   client. */
CUBERT_API cubert_stream_id cubert_client_stream(const cubert_client *client);

CUBERT_EXTERN_C_END

#endif /* CUBERT_STREAM_H */

/* cubert — errors of the calling stream set aside while the core runs work of its own on the
   stream and reads that work's errors (autotune's measurements, tune/tuner.c), so that the
   stream's earlier errors neither fail that work nor get lost (aside.c). Each call takes the
   client's call scope (call_scope.h) itself. */
#ifndef CUBERT_STREAM_ASIDE_H
#define CUBERT_STREAM_ASIDE_H

#include <stddef.h>

#include "cubert/client.h"
#include "cubert/stream.h"

typedef struct cubert_errors_aside {
  cubert_stream_id stream;
  cubert_status *queued; /* the slot queue's errors, in order */
  size_t queued_count, dropped;
  cubert_status *parked; /* errors parked for the stream, in order */
  size_t parked_count;
} cubert_errors_aside;

/* Waits for the calling stream's work, then moves its pending errors (slot queue and parked)
   into *out. Errors: those of taking the slot (nothing set aside then). */
cubert_status cubert_client_errors_set_aside(cubert_client *client, cubert_errors_aside *out);
/* Gives the stream its set-aside errors back, ahead of any raised since: the next
   flush/sync/read returns them as if they had never been set aside, and the backend skips work
   queued behind them. Frees `aside`'s arrays. Returns nothing: when host memory runs out,
   the queue counts the errors it cannot keep as lost (still reported, as one error). */
void cubert_client_errors_put_back(cubert_client *client, cubert_errors_aside *aside);

#endif

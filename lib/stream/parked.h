/* cubert — parked errors: the asynchronous errors of streams that lost their slot to another
   stream id (stream/slots.c takes a slot over and parks the previous owner's errors here), kept
   until their own stream collects them (a sync, a read, a profile's end, stream/aside.c).

   One list per device (cubert_device.parked), valid when zeroed, freed by
   cubert_parked_release at device destruction. Lock: the device lock, held by every caller. */
#ifndef CUBERT_STREAM_PARKED_H
#define CUBERT_STREAM_PARKED_H

#include <stddef.h>

#include "cubert/status.h"
#include "cubert/stream.h"

/* An asynchronous error of stream `stream`, raised while it owned a slot that another stream
   id has taken over since. */
typedef struct cubert_parked_error {
  cubert_stream_id stream;
  cubert_status error;
} cubert_parked_error;

typedef struct cubert_parked_errors {
  cubert_parked_error *items; /* oldest first */
  size_t count, cap;
} cubert_parked_errors;

/* Makes room for `more` errors, so that pushing them cannot fail. 0 when host memory ran out
   (the list is unchanged). */
int cubert_parked_reserve(cubert_parked_errors *parked, size_t more);
/* Appends `error` (owned now) for `stream`, in room reserved before; NULL is ignored. */
void cubert_parked_push(cubert_parked_errors *parked, cubert_stream_id stream, cubert_status error);
/* The number of errors parked for `stream`. */
size_t cubert_parked_count_of(const cubert_parked_errors *parked, cubert_stream_id stream);
/* Moves the errors parked for `stream` into out[] (room for cubert_parked_count_of of them),
   oldest first; keeps the others in order. Returns how many moved. */
size_t cubert_parked_take(cubert_parked_errors *parked, cubert_stream_id stream,
                          cubert_status *out);
/* Frees errors parked for streams that never collected them (device destruction). */
void cubert_parked_release(cubert_parked_errors *parked);

#endif

/* cubert — scratch copies for autotune (scratch.c): while a thread measures the candidates of a
   tunable set, every buffer a candidate may write is replaced by a copy of it, so that tuning
   never changes memory the caller can see; only the winner's launch after the measurement
   writes the caller's buffers.

   The copies are made where buffers are used, not by the tuner: tuning passes the caller's
   `args` through unchanged (they are opaque to it), and the launch, write and read paths of the
   core ask this file which memory to use. A buffer may be written unless the tuned call declared
   it read-only (cubert_tune_execute_reading) or it was created during the measurement (it is
   the candidate's own, the caller cannot see it). The first launch or write that may write a
   buffer copies its whole slice (a device copy on the calling stream, ordered after the
   caller's earlier work); every later use of that slice during the measurement, reads included,
   goes to the copy (launch.c, client.c's writes and reads, future.c's asynchronous reads). Copies
   are kept until the measurement ends, so each costs one allocation and one copy per tuning, not
   per sample.

   State is per thread: a measurement runs on the thread that called cubert_tune_execute, and a
   candidate that tunes another key nests inside it (the inner measurement shares the outer
   copies and ignores its own read-only declarations, so that nothing the outer candidates
   write can pass as read-only). */
#ifndef CUBERT_TUNE_SCRATCH_H
#define CUBERT_TUNE_SCRATCH_H

#include <stddef.h>

#include "cubert/client.h"
#include "cubert/server.h"

/* One measurement's scratch state; lives on the measuring thread's stack. */
typedef struct cubert_tune_scratch {
  struct cubert_tune_scratch *outer; /* the measurement this one nests in, or NULL */
  cubert_client *client;
  struct scratch_entry *entries;
  size_t count, capacity;
} cubert_tune_scratch;

/* Starts redirecting this thread's writes for a measurement on `client`: the `read_only_count`
   handles of `read_only` (those the tuned call declared read-only; ignored when nested) are used
   in place. Never fails: an entry it cannot record is treated as written. */
void cubert_tune_scratch_begin(cubert_tune_scratch *scratch, cubert_client *client,
                               cubert_handle *const *read_only, size_t read_only_count);
/* Ends the measurement begun on `scratch`: the copies are released (queued work that uses them
   keeps their memory until it finished). */
void cubert_tune_scratch_end(cubert_tune_scratch *scratch);

/* Before a call on `client` that may write `handle` (a launch binding it, a write): during a
   measurement, makes the copy of its slice unless there is one or the handle may be used in
   place. Outside a measurement, or for a handle the call will refuse (released, of another
   device), does nothing. Returns the error of the allocation or the copy. */
cubert_status cubert_tune_scratch_prepare(cubert_client *client, cubert_handle *handle);
/* Points `binding` at the copy of its slice when this thread's measurement made one (the same
   bytes of the copy); else leaves it. */
void cubert_tune_scratch_apply(cubert_binding *binding);
/* A buffer created on this thread during a measurement is the candidate's own: used in place. */
void cubert_tune_scratch_created(cubert_handle *handle);
/* Copies the caller's bytes into every copy again, so that the next candidate starts from the
   caller's data (the result checks of CUBERT_AUTOTUNE_CHECKS compare candidates on one input).
   Nothing to do outside a measurement, or in a nested one (the copies hold the outer
   candidate's work in progress). */
cubert_status cubert_tune_scratch_refresh(void);

#endif /* CUBERT_TUNE_SCRATCH_H */

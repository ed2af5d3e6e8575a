/* cubert — stream identity: each OS thread lazily takes the next id of a process-wide
   counter (the reference's per-thread policy). */
#include <stdatomic.h>

#include "cubert/stream.h"

static atomic_uint_fast64_t next_stream_id;
static _Thread_local cubert_stream_id thread_stream_id;
static _Thread_local int thread_stream_set;

cubert_stream_id cubert_stream_id_current(void) {
  if (!thread_stream_set) {
    thread_stream_id = atomic_fetch_add_explicit(&next_stream_id, 1, memory_order_relaxed);
    thread_stream_set = 1;
  }
  return thread_stream_id;
}

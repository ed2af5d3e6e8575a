/* cubert CPU server — events between streams (reference EventStreamBackend).

   An event is a point in one stream's command sequence: (stream, number of commands submitted
   when it was recorded). It is complete when the stream's completion counter reaches that
   number, which needs no extra bookkeeping because a stream completes its commands in order.
   Waiting on the device queues a wait record on the waiting stream: commands behind it start
   only once the event's stream got there. The event holds a reference on its stream, so it may
   outlive the stream's destruction by the core. */
#include "cpu/events.h"

#include <stdlib.h>

#include "cpu/scheduler.h"
#include "cpu/server.h"

struct cubert_event {
  cubert_server_stream *stream;
  uint64_t target; /* stream->completed value that completes the event */
};

static int event_reached(const cubert_event *e) {
  return atomic_load_explicit(&e->stream->completed, memory_order_acquire) >= e->target;
}

cubert_status cubert_cpu_event_record(cubert_server *server, cubert_server_stream *s,
                                      cubert_event **out) {
  (void)server;
  *out = NULL;
  cubert_event *e = malloc(sizeof *e);
  if (!e)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of an event failed");
  cubert_cpu_stream_ref(s);
  e->stream = s;
  e->target = atomic_load_explicit(&s->submitted, memory_order_relaxed);
  *out = e;
  return NULL;
}

cubert_status cubert_cpu_event_wait(cubert_server *server, cubert_server_stream *s,
                                    cubert_event *e) {
  (void)server;
  /* A stream is in order with itself, and a reached event needs no wait. */
  if (e->stream == s || event_reached(e)) return NULL;
  cubert_cpu_job *job = cubert_cpu_job_obtain(s, 0, 0);
  if (!job)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a wait record for an event failed");
  job->kind = CUBERT_CPU_JOB_WAIT;
  cubert_cpu_stream_ref(e->stream);
  job->wait_stream = e->stream;
  job->wait_target = e->target;
  cubert_cpu_stream_submit(s, job);
  return NULL;
}

cubert_status cubert_cpu_event_sync(cubert_server *server, cubert_event *e) {
  cubert_cpu_wait(cubert_cpu_device_of(server), e->stream, e->target);
  return NULL;
}

int cubert_cpu_event_done(cubert_server *server, cubert_event *e) {
  (void)server;
  if (event_reached(e)) return 1;
  /* Callers poll this: leave the core to a worker that may share it (see cubert_cpu_flush). */
  sched_yield();
  return 0;
}

void cubert_cpu_event_release(cubert_server *server, cubert_event *e) {
  (void)server;
  if (!e) return;
  cubert_cpu_stream_unref(e->stream);
  free(e);
}

/* cubert CPU server — gates (server.h): a stream waits for something a host thread finishes.

   A gate is a stream of its own that is never registered with the workers: it counts one
   command submitted and none completed, and opening it completes that command. A stream that
   waits on the gate queues an ordinary wait record on that stream (events.c, scheduler.c), so
   the scheduler's wait machinery (blocked_on, blocked_waiters, recheck) does the rest: opening
   bumps the counter, wakes host waiters and rechecks the blocked streams, exactly as a stream
   completing a command that others wait for. An error given to gate_open is pushed to the
   waiting stream's queue before the gate opens, so a sync that returns afterwards reports it
   and the scheduler skips what was queued behind it. */
#include "cpu/gate.h"

#include <string.h>

#include "cpu/scheduler.h"
#include "cpu/server.h"
#include "cubert/server/gates.h"

struct cubert_gate {
  cubert_gate_state state;
  cubert_server_stream *stream; /* the gate's own counter stream (not registered) */
};

cubert_status cubert_cpu_gate_create(cubert_server *server, cubert_gate **out) {
  *out = NULL;
  cubert_gate *g = calloc(1, sizeof *g);
  cubert_server_stream *s = cubert_cpu_alloc_lines(sizeof *s);
  if (!g || !s) {
    free(g);
    free(s);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of a gate failed");
  }
  memset(s, 0, sizeof *s);
  s->device = cubert_cpu_device_of(server);
  atomic_init(&s->refs, 1);
  atomic_init(&s->submitted, 1);
  atomic_init(&s->completed, 0);
  atomic_init(&s->blocked_waiters, 0);
  s->slot = UINT32_MAX; /* no publication slot: nothing ever runs on it */
  cubert_gate_state_init(&g->state);
  g->stream = s;
  *out = g;
  return NULL;
}

cubert_status cubert_cpu_gate_wait(cubert_server *server, cubert_server_stream *s, cubert_gate *g) {
  (void)server;
  int state = cubert_gate_state_wait(&g->state, s->errors);
  if (state < 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "gate_wait: the gate has a waiter");
  if (state > 0) return NULL; /* open already */
  cubert_cpu_job *job = cubert_cpu_job_obtain(s, 0, 0);
  if (!job) {
    cubert_gate_state_unwait(&g->state);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a wait record for a gate failed");
  }
  job->kind = CUBERT_CPU_JOB_WAIT;
  cubert_cpu_stream_ref(g->stream);
  job->wait_stream = g->stream;
  job->wait_target = 1;
  cubert_cpu_stream_submit(s, job);
  return NULL;
}

void cubert_cpu_gate_open(cubert_server *server, cubert_gate *g, cubert_status error) {
  (void)server;
  if (cubert_gate_state_open(&g->state, error) == 2) cubert_cpu_stream_signal(g->stream);
}

void cubert_cpu_gate_release(cubert_server *server, cubert_gate *g) {
  if (!g) return;
  cubert_cpu_gate_open(server, g, NULL); /* a waiter never hangs on a released gate */
  cubert_gate_state_destroy(&g->state);
  cubert_cpu_stream_unref(g->stream); /* a queued wait record holds its own reference */
  free(g);
}

/* cubert — OpenCL gates (server.h): a user event (clCreateUserEvent) the waiting stream's
   queue waits for through a barrier (cubert_ocl_wait_cl_event, which always carries an event
   and, on PoCL, makes the commands behind it carry events until it resolved). Opening sets
   the user event CL_COMPLETE. An error given to gate_open is pushed to the waiting stream's
   error queue first and the event still completes normally: a failed user event would fail
   every command behind it on the device, which some drivers handle badly (PoCL 3.1 aborts in
   some of those chains, README.md), while the queue's error already makes the next
   flush/sync/read report it. */
#include "opencl/gate.h"

#include <stdlib.h>

#include "cubert/server/gates.h"
#include "opencl/errors.h"
#include "opencl/queue.h"
#include "opencl/server.h"

struct cubert_gate {
  cubert_gate_state state;
  cl_event user;
};

cubert_status cubert_ocl_gate_create(cubert_server *base, cubert_gate **out) {
  *out = NULL;
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  cubert_gate *g = calloc(1, sizeof *g);
  if (!g) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of a gate failed");
  cl_int err = CL_SUCCESS;
  g->user = clCreateUserEvent(server->context, &err);
  if (err != CL_SUCCESS || !g->user) {
    free(g);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "clCreateUserEvent on OpenCL device '%s'",
                             base->properties.name);
  }
  cubert_gate_state_init(&g->state);
  *out = g;
  return NULL;
}

cubert_status cubert_ocl_gate_wait(cubert_server *base, cubert_server_stream *stream,
                                   cubert_gate *g) {
  (void)base;
  int state = cubert_gate_state_wait(&g->state, stream->errors);
  if (state < 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "gate_wait: the gate has a waiter");
  if (state > 0) return NULL; /* open already */
  cubert_status s = cubert_ocl_wait_cl_event(stream, g->user, "a wait for a collective (gate)");
  if (s) {
    cubert_gate_state_unwait(&g->state);
    return s;
  }
  /* Submit the barrier now: the gate may open before the caller's next flush. */
  clFlush(stream->queue);
  return NULL;
}

void cubert_ocl_gate_open(cubert_server *base, cubert_gate *g, cubert_status error) {
  (void)base;
  /* Completes the user event even when nobody waits yet: a later barrier on it passes. */
  if (cubert_gate_state_open(&g->state, error) > 0) clSetUserEventStatus(g->user, CL_COMPLETE);
}

void cubert_ocl_gate_release(cubert_server *base, cubert_gate *g) {
  if (!g) return;
  cubert_ocl_gate_open(base, g, NULL); /* a waiter never hangs on a released gate */
  cubert_gate_state_destroy(&g->state);
  clReleaseEvent(g->user); /* the barrier holds its own reference */
  free(g);
}

/* cubert — OpenCL gates (server.h): a user event (clCreateUserEvent) the waiting stream's
   queue waits for through a barrier (cubert_ocl_wait_cl_event, which always carries an event
   and, on PoCL, makes the commands behind it carry events until it resolved). Opening sets
   the user event CL_COMPLETE. An error given to gate_open is pushed to the waiting stream's
   error queue first and the event still completes normally: a failed user event would fail
   every command behind it on the device, which some drivers handle badly (PoCL 3.1 aborts in
   some of those chains, README.md), while the queue's error already makes the next
   flush/sync/read report it. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

struct cubert_gate {
  cl_event user;
  pthread_mutex_t mu;           /* below */
  cubert_stream_errors *errors; /* the waiting stream's queue, once gate_wait ran */
  cubert_status pending;        /* an error given before gate_wait */
  int waited, opened;
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
  pthread_mutex_init(&g->mu, NULL);
  *out = g;
  return NULL;
}

cubert_status cubert_ocl_gate_wait(cubert_server *base, cubert_server_stream *stream,
                                   cubert_gate *g) {
  (void)base;
  pthread_mutex_lock(&g->mu);
  if (g->waited) {
    pthread_mutex_unlock(&g->mu);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "gate_wait: the gate has a waiter");
  }
  g->waited = 1;
  g->errors = stream->errors;
  int opened = g->opened;
  cubert_status pending = g->pending;
  g->pending = NULL;
  pthread_mutex_unlock(&g->mu);
  if (opened) {
    cubert_stream_errors_push(stream->errors, pending);
    return NULL;
  }
  cubert_status s = cubert_ocl_wait_cl_event(stream, g->user, "a wait for a collective (gate)");
  if (s) {
    pthread_mutex_lock(&g->mu);
    g->waited = 0;
    g->errors = NULL;
    pthread_mutex_unlock(&g->mu);
    return s;
  }
  /* Submit the barrier now: the commands the caller queues behind it are submitted at its next
     flush anyway, and the gate may open before that. */
  clFlush(stream->queue);
  return NULL;
}

void cubert_ocl_gate_open(cubert_server *base, cubert_gate *g, cubert_status error) {
  (void)base;
  pthread_mutex_lock(&g->mu);
  if (g->opened) {
    pthread_mutex_unlock(&g->mu);
    cubert_status_free(error);
    return;
  }
  g->opened = 1;
  if (g->waited)
    cubert_stream_errors_push(g->errors, error); /* before the event completes */
  else
    g->pending = error;
  pthread_mutex_unlock(&g->mu);
  clSetUserEventStatus(g->user, CL_COMPLETE);
}

void cubert_ocl_gate_release(cubert_server *base, cubert_gate *g) {
  if (!g) return;
  cubert_ocl_gate_open(base, g, NULL); /* a waiter never hangs on a released gate */
  cubert_status_free(g->pending);
  clReleaseEvent(g->user); /* the barrier holds its own reference */
  pthread_mutex_destroy(&g->mu);
  free(g);
}

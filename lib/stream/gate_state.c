/* cubert — the bookkeeping every server's gate shares (server.h "gates"): who waits, whether it
   is open, and an error given before the wait. The servers add only their signal (a counter,
   a user event). */
#include "cubert/server/gates.h"
#include "device.h"

void cubert_gate_state_init(cubert_gate_state *g) {
  pthread_mutex_init(&g->mu, NULL);
  g->errors = NULL;
  g->pending = NULL;
  g->waited = g->opened = 0;
}

void cubert_gate_state_destroy(cubert_gate_state *g) {
  cubert_status_free(g->pending);
  g->pending = NULL;
  pthread_mutex_destroy(&g->mu);
}

int cubert_gate_state_wait(cubert_gate_state *g, cubert_stream_errors *errors) {
  pthread_mutex_lock(&g->mu);
  if (g->waited) {
    pthread_mutex_unlock(&g->mu);
    return -1;
  }
  g->waited = 1;
  g->errors = errors;
  int opened = g->opened;
  cubert_status pending = g->pending;
  g->pending = NULL;
  pthread_mutex_unlock(&g->mu);
  if (opened) cubert_stream_errors_push(errors, pending);
  return opened;
}

void cubert_gate_state_unwait(cubert_gate_state *g) {
  pthread_mutex_lock(&g->mu);
  g->waited = 0;
  g->errors = NULL;
  pthread_mutex_unlock(&g->mu);
}

int cubert_gate_state_open(cubert_gate_state *g, cubert_status error) {
  pthread_mutex_lock(&g->mu);
  if (g->opened) {
    pthread_mutex_unlock(&g->mu);
    cubert_status_free(error);
    return 0;
  }
  g->opened = 1;
  if (g->waited)
    cubert_stream_errors_push(g->errors, error); /* before the backend signals */
  else
    g->pending = error;
  int waited = g->waited;
  pthread_mutex_unlock(&g->mu);
  return waited ? 2 : 1;
}

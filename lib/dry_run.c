/* cubert — dry run: switching a client in and out of it, and the server's part of a dry-run
   launch (dry_run.h). The checks a dry-run launch shares with a real one are launch.c's; reads
   (client.c, future.c) test the mode where they differ; autotune (tune/tuner.c) measures, and
   the writes that move data through launches or reads (tensor.c's strided write, transfer.c)
   run, in a real-run scope. */
#include "dry_run.h"

#include "base/status.h"
#include "cubert/server/compiler.h"

cubert_status cubert_client_set_dry_run(cubert_client *client, int on) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  /* Nothing to flush or wait for either way: a dry-run launch leaves nothing queued, and work
     queued before entering keeps running on its stream. */
  atomic_store_explicit(&c->dry_run, on != 0, memory_order_relaxed);
  cubert_client_release(client);
  return NULL;
}

int cubert_client_dry_run(const cubert_client *client) {
  cubert_client_obj *c = NULL;
  cubert_status s = cubert_client_acquire(client, &c);
  /* The view's mode, whatever real-run scope the calling thread is in. */
  const int on = !s && atomic_load_explicit(&c->dry_run, memory_order_relaxed);
  if (s)
    cubert_status_free(s);
  else
    cubert_client_release((cubert_client *)client);
  return on;
}

/* Per thread, as the reference's RealRun: a measurement on one thread must not make another
   thread's dry-run launches run. */
static _Thread_local int real_depth;

void cubert_dry_run_real_begin(void) {
  ++real_depth;
}

void cubert_dry_run_real_end(void) {
  if (real_depth > 0) --real_depth;
}

int cubert_dry_run_real_depth(void) {
  return real_depth;
}

cubert_status cubert_dry_run_prepare(cubert_server *server, const cubert_launch *launch) {
  return server->compiler ? server->compiler->prepare(server, launch) : NULL;
}

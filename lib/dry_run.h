/* cubert — dry run (cubecl's dry_run, newer than the seed files): a client mode in which every
   launch is checked exactly as a real one and its kernel compiled and cached by the server, and
   nothing runs (cubert_client_set_dry_run in cubert/client.h says what each call does then).
   Thread-safe: the mode is an atomic of the client view; real-run scopes are per thread. */
#ifndef CUBERT_DRY_RUN_H
#define CUBERT_DRY_RUN_H

#include <stdatomic.h>

#include "client.h"
#include "cubert/server.h"

/* Real-run scopes of the calling thread (the reference's RealRun guard): inside one, a client
   in dry run launches and reads for real. They nest. Autotune measures inside one, and the
   calls that write buffers run their own launches and reads inside one (write_tensor's copy,
   to_client's reads), so that their writes land in dry run. */
void cubert_dry_run_real_begin(void);
void cubert_dry_run_real_end(void);
/* Whether the calling thread is inside a real-run scope. */
int cubert_dry_run_real_depth(void);

/* Whether calls on `client` (held by the caller) on this thread are dry. */
static inline int cubert_dry_run_on(const cubert_client_obj *client) {
  return atomic_load_explicit(&client->dry_run, memory_order_relaxed) &&
         !cubert_dry_run_real_depth();
}

/* The server's part of a dry-run launch that passed the core's checks: the compiler capability
   (cubert/server/compiler.h) where the server has one, else nothing. Device lock held. */
cubert_status cubert_dry_run_prepare(cubert_server *server, const cubert_launch *launch);

#endif

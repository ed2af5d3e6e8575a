/* cubert — the objects behind cubert_client tokens (client.c): a view of one device instance,
   on the calling thread's stream or pinned to one stream. Thread-safe: a call holds a
   reference on the client for its duration (call_scope.h). */
#ifndef CUBERT_CORE_CLIENT_H
#define CUBERT_CORE_CLIENT_H

#include <stddef.h>

#include "cubert/client.h"
#include "cubert/stream.h"
#include "device.h"

typedef struct cubert_client_obj {
  cubert_device *device; /* retained */
  int pinned;            /* 1: every call goes to `stream` */
  cubert_stream_id stream;
  /* 1: launches are checked and compiled, not run; reads return zeros (dry_run.h). Atomic: any
     thread may switch it while others use the client. */
  _Atomic int dry_run;
  int worker; /* 1: autotune's background worker's view, not counted in user_clients */
} cubert_client_obj;

/* The object behind a live client, with a reference the caller drops with
   cubert_client_release(client): INVALID_ARGUMENT for NULL, NOT_FOUND for a released client. */
cubert_status cubert_client_acquire(const cubert_client *client, cubert_client_obj **out);
/* A new unpinned, not dry-run view of `client`'s device for autotune's background worker
   (tune/background.h): it is not counted among the device's user clients, so releasing the
   last client the program made stops the worker although this view lives. */
cubert_status cubert_client_worker_view(cubert_client *client, cubert_client **out);
/* The device of a client the caller holds (tests and benchmarks reach the server this way). */
cubert_device *cubert_client_device(const cubert_client *client);
/* cubert_client_empty for a buffer the caller fills whole at once, by a path the server does
   not see (a host copy into its memory): the kernel sanitizer is not told that its bytes are
   unwritten. */
cubert_status cubert_client_empty_filled_by_caller(cubert_client *client, size_t size,
                                                   cubert_handle **out);

#endif

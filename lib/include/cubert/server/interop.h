/** @file
   cubert — the core's helpers for a backend's public interop header (cubert/opencl.h,
   cubert/cpu.h; lib/interop.c). */
#ifndef CUBERT_SERVER_INTEROP_H
#define CUBERT_SERVER_INTEROP_H

#include <stdint.h>

#include "cubert/backend.h"
#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
typedef struct cubert_handle cubert_handle; /**< Device memory (handle.h). */
/** Helpers for the backends' public interop headers (cubert/opencl.h, cubert/cpu.h): they reach
   a client's server and calling stream, and the memory behind a handle, without the core
   knowing any backend. A call brackets its work with begin/end; in between the caller holds
   the client, the device lock and the calling stream's slot. */
typedef struct cubert_interop {
  cubert_server *server;        /**< the client's server */
  cubert_server_stream *stream; /**< the calling stream's server stream */
  /* core-private */
  cubert_client *client_;
  void *client_obj_;
  uint32_t slot_;
} cubert_interop;
/** Takes `client`, checks that it runs on `backend` (the caller's own backend object: the core
   compares objects, never names), locks the device and takes the calling stream's slot. Errors name
   the function `fn`: INVALID_ARGUMENT for a NULL client or a client of another backend (naming the
   client's server and device), NOT_FOUND for a released client. On error nothing is held. */
cubert_status cubert_interop_begin(cubert_client *client, const cubert_backend *backend,
                                   const char *fn, cubert_interop *out);
/** Gives everything back; returns `s`. */
cubert_status cubert_interop_end(cubert_interop *io, cubert_status s);
/** The binding of `handle` (named `what` in errors: INVALID_ARGUMENT for NULL, NOT_FOUND for a
   released or foreign handle), after making the calling stream wait (on the device) for the
   last command of any other stream that used it, and recording the calling stream as its last
   user: cubert work on another stream that uses the handle later waits for everything queued
   on the calling stream until then. */
cubert_status cubert_interop_handle(cubert_interop *io, cubert_handle *handle, const char *what,
                                    cubert_binding *out);
/** Waits for the calling stream's work; SERVER_UNHEALTHY with its asynchronous errors. */
cubert_status cubert_interop_sync(cubert_interop *io);
/** A new handle over `slice`, which the backend made for memory of the user: page, offset and
   size set, pool_private NULL, external_release set, refcount 0 (the handle takes the first
   reference). The slice counts as used by the calling stream (a first use on another stream
   waits for the calling stream's work so far). On error the caller still owns it. */
cubert_status cubert_interop_wrap(cubert_interop *io, cubert_slice *slice, cubert_handle **out);

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_INTEROP_H */

/** @file
   cubert — optional server capability: the kernel sanitizer's view of buffer contents. The core
   calls it from cubert_client_empty (lib/client_memory.c). Locking: with the device lock held. */
#ifndef CUBERT_SERVER_SANITIZER_H
#define CUBERT_SERVER_SANITIZER_H

#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** What a server with a kernel sanitizer (validate mode) learns from the core about buffer
   contents, so that a sanitized launch can report reads of bytes nothing wrote. Writes,
   launches and copies the server runs itself it tracks itself; this table carries only what the
   core knows and the server cannot see. A server without a sanitizer leaves `server->sanitizer`
   NULL. */
typedef struct cubert_server_sanitizer {
  /** The bytes of `binding` hold nothing written yet (cubert_client_empty made them): a
     sanitized launch that reads one before a write, a launch or a copy fills it reports an
     uninitialised read. Called with the device lock held, before any command uses the binding
     (no queued command can use its memory: the pool hands out only memory no command holds). */
  void (*mark_undefined)(cubert_server *server, const cubert_binding *binding);
} cubert_server_sanitizer;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_SANITIZER_H */

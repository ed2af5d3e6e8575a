/** @file
   cubert — optional server capability: pinned host memory, which the device copies to and from
   at full speed (OpenCL: a mapped CL_MEM_ALLOC_HOST_PTR buffer). The core stages transfers
   through it (lib/transfer.c) and the communicators keep their host buffers in it
   (lib/comm/legs.c, engine.c); without the table they use aligned malloc'd memory.
   Locking: with the device lock held. */
#ifndef CUBERT_SERVER_PINNED_H
#define CUBERT_SERVER_PINNED_H

#include <stdint.h>

#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** Pinned host memory. Both entries are set. */
typedef struct cubert_server_pinned {
  /** `size` bytes of pinned host memory, aligned to 64 or more; OUT_OF_MEMORY with the size
     when the driver refuses. */
  cubert_status (*host_alloc)(cubert_server *server, uint64_t size, void **out);
  /** Frees what host_alloc gave. */
  void (*host_free)(cubert_server *server, void *ptr);
} cubert_server_pinned;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_PINNED_H */

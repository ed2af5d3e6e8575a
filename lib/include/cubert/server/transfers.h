/** @file
   cubert — optional server capability: transfers that do not block the host, and copies on
   the device. The core's readers and writers (lib/future.c, lib/transfer.c, the communicators'
   legs in lib/comm/legs.c) use the table where a server has one, and otherwise do without:

   | entry       | without the table                                                   |
   | ----------- | ------------------------------------------------------------------- |
   | read_async  | the core reads with the required `read` (the future is ready at once) |
   | write_async | the core writes with `write`, which returns once `src` may be reused |
   | copy        | the core stages the bytes through host memory (read, then write)    |

   Locking: with the device lock held, except on a communicator's private stream, where
   read_async, write_async and flush run without it (cubert/server/gates.h says why). */
#ifndef CUBERT_SERVER_TRANSFERS_H
#define CUBERT_SERVER_TRANSFERS_H

#include <stdint.h>

#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** Transfers and copies a server queues without blocking the host. Every entry is set. */
typedef struct cubert_server_transfers {
  /** Starts a read of `size` bytes of `src` (after earlier work on `stream`) into host `dst`;
     fills *out_event, which completes when `dst` holds the data. */
  cubert_status (*read_async)(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size,
                              cubert_event **out_event);
  /** Starts a write from host memory the caller keeps valid and unchanged until *out_event
     completes (pinned memory from the server's cubert_server_pinned table is DMA'd directly);
     submitted before it returns. */
  cubert_status (*write_async)(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size,
                               cubert_event **out_event);
  /** Copies src->size bytes from src to dst (same size, not overlapping) on the device, after
     earlier work on the stream, retaining both slices until it completed
     (cubert_client_to_client between two clients of one device). */
  cubert_status (*copy)(cubert_server *server, cubert_server_stream *stream,
                        const cubert_binding *src, const cubert_binding *dst);
} cubert_server_transfers;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_TRANSFERS_H */

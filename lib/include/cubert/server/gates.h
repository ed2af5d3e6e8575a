/** @file
   cubert — optional server capability: gates, which make a stream wait on the device for
   something a host thread finishes later (lib/stream/README.md "Gates"). The communicators'
   collectives (lib/comm/) use them; without the table cubert_comm_create refuses a server's
   clients (UNSUPPORTED_IO_OPERATION).

   Locking, for this table and for what a communicator does with a server (one place for the
   rule): gate_create and gate_wait run with the device lock held; gate_open, gate_release, and
   event_sync/event_release of any event run WITHOUT it. The thread that opens a gate cannot
   take the lock, since a user thread may hold it while it syncs the gated stream. For the same
   reason a communicator's member thread uses its own private streams without the lock:
   read_async, write (below CUBERT_OCL_STAGING_MIN_WRITE on OpenCL), write_async, flush,
   event_record (cubert/server/transfers.h), and the device combination
   (cubert/server/combine.h). A server keeps per-stream state apart from what the device lock
   guards, so that this is safe. */
#ifndef CUBERT_SERVER_GATES_H
#define CUBERT_SERVER_GATES_H

#include <pthread.h>

#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_gate cubert_gate; /**< backend-defined */

/* ---- the part of a gate every server shares (lib/stream/gate_state.c) ------------------- */

/** Who waits on a gate, whether it is open, an error given before the wait (the table below). A
 * server's gate embeds one and adds its signal. */
typedef struct cubert_gate_state {
  pthread_mutex_t mu;           /**< guards the fields below */
  cubert_stream_errors *errors; /**< the waiting stream's queue */
  cubert_status pending;        /**< an error given before the wait */
  int waited;                   /**< a stream waits (or waited) on the gate */
  int opened;                   /**< the gate is open */
} cubert_gate_state;
/** Initialises a closed gate nobody waits on. */
CUBERT_API void cubert_gate_state_init(cubert_gate_state *gate);
/** Frees a pending error. */
CUBERT_API void cubert_gate_state_destroy(cubert_gate_state *gate);
/** Registers the waiting stream's queue: -1 when the gate has a waiter already, 1 when it is
   open (its pending error, if any, was pushed to `errors`: no wait needed), 0 when the server
   must queue its wait. */
CUBERT_API int cubert_gate_state_wait(cubert_gate_state *gate, cubert_stream_errors *errors);
/** Undoes a wait the server failed to queue. */
CUBERT_API void cubert_gate_state_unwait(cubert_gate_state *gate);
/** Opens the gate (ownership of `error` moves in): pushes the error to the waiting stream's
   queue, or keeps it for the wait. 2: opened, a wait is queued (signal it now); 1: opened,
   nobody waits yet; 0: it was open already (the error is freed). */
CUBERT_API int cubert_gate_state_open(cubert_gate_state *gate, cubert_status error);

/* ---- the table ---------------------------------------------------------------------------- */

/** Gates. Every entry is set. A gate that was waited on must be opened, or the stream never
   drains. */
typedef struct cubert_server_gates {
  /** A closed gate. */
  cubert_status (*create)(cubert_server *server, cubert_gate **out);
  /** Queues, after earlier work on `stream`, a command that completes only once the gate is
     open (at most one wait per gate); commands queued behind it start after that. A gate
     opened before the wait lets it pass at once (its error is then pushed here). */
  cubert_status (*wait)(cubert_server *server, cubert_server_stream *stream, cubert_gate *gate);
  /** Opens the gate, on any thread, without the device lock. With an `error` (ownership moves
     in), the error is first pushed to the waiting stream's error queue, so the stream's next
     flush/sync/read reports it (SERVER_UNHEALTHY) and the backend may skip work queued behind
     it. Opening twice is a no-op (the second error is freed). */
  void (*open)(cubert_server *server, cubert_gate *gate, cubert_status error);
  /** Frees the gate; the waiting command, if any, stays valid until it completed. */
  void (*release)(cubert_server *server, cubert_gate *gate);
} cubert_server_gates;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_GATES_H */

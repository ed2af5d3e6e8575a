/* cubert — the communicator engine's transport interface (internal; lib/comm/README.md).

   The engine (engine.c) owns everything device-side: it validates a call, orders it on each
   member client's stream (gates, server.h), and on its worker threads moves every collective
   through pinned host memory in chunks: per local member, stage the chunk out of the device
   buffer into host memory, hand the chunk to the TRANSPORT, which combines the members' host
   chunks (reduces, gathers, broadcasts; with its peers in other processes where there are
   some), then stage the result back into the device buffers. Several chunks are in flight at
   once (each member's stage-out of chunk k+1 overlaps the combine and the stage-in of chunk
   k), and each local member has its own thread, so the members' legs overlap across devices.

   A transport therefore sees host memory only. Two exist:
     - in-process (inproc.c): every member is local; `combine` reduces the local members' host
       chunks directly (split across the member threads: member thread p reduces part p of the
       chunk, a reduce-scatter, and every member then stages the whole result in, the
       all-gather);
     - MPI (cubert/mpi.h, built with MPI): one local member per process; `combine` exchanges
       host chunks with the other ranks (a ring of MPI sends/receives, or MPI collectives) and
       reduces with cubert_comm_host_reduce.

   Threads: `combine` is called from the engine's member threads, never under a device lock.
   For one chunk it is called once per part (0..parts-1) concurrently, after every local
   member's input for that chunk was staged; the engine waits for all parts before staging the
   result in. Chunks are combined in order (chunk k of collective j before anything later), on
   every process in the same order, so a transport that talks to other processes may match
   messages by order (tags per chunk are available in cubert_comm_chunk). */
#ifndef CUBERT_COMM_TRANSPORT_H
#define CUBERT_COMM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/comm.h"
#include "cubert/layout.h"
#include "cubert/status.h"

typedef enum cubert_comm_kind {
  CUBERT_COMM_ALL_REDUCE = 0,
  CUBERT_COMM_BROADCAST = 1,
  CUBERT_COMM_REDUCE = 2,
  CUBERT_COMM_ALL_GATHER = 3,
  CUBERT_COMM_REDUCE_SCATTER = 4,
  CUBERT_COMM_SEND = 5, /* point-to-point (MPI transport): one local member */
  CUBERT_COMM_RECV = 6,
} cubert_comm_kind;

/* One chunk of a collective, as the engine hands it to the transport. Element counts. "Piece"
   = `count` elements that belong to one member; piece j lies at byte j * count * elem_size.
   in[i] is local member i's staged input, out[i] the host buffer the engine stages into local
   member i's device afterwards (each member has its own, pinned for its own device); the
   transport fills every out[i] the kind needs. An out[i] may alias in[i] (a host-addressable
   device buffer used in place): a transport reads each element of every input before writing
   that element of any output (part-wise is enough: parts cover disjoint elements).
   ALL_REDUCE, REDUCE: in[i] = local member i's `count` elements; out[i] = the reduction over
     all members (REDUCE: only out[root - rank], and only where the root is local; the other
     out[i] are NULL).
   BROADCAST: in[root - rank] = the root's elements when the root is local, other entries
     NULL; out[i] = the root's `count` elements for every local member but the root (NULL).
   ALL_GATHER: in[i] = local member i's piece; out[i] = size pieces, member m's at m.
   REDUCE_SCATTER: in[i] = size pieces of local member i (piece j = its contribution to member
     j's result); out[i] = 1 piece: the reduction for member rank + i.
   SEND: in[self - rank] = `count` elements to send to `peer` with `tag`. RECV: out[self - rank]
     receives them from `peer`. The other entries are NULL. */
typedef struct cubert_comm_chunk {
  cubert_comm_kind kind;
  cubert_dtype dtype;
  cubert_reduce_op op;
  size_t elem_size;      /* bytes per element */
  size_t root;           /* BROADCAST, REDUCE: a rank */
  size_t peer;           /* SEND, RECV: a rank */
  size_t self;           /* SEND, RECV: the local member's rank that sends / receives */
  void *message;         /* SEND, RECV: what the transport's p2p_post returned (or NULL) */
  int tag;               /* SEND, RECV: the user's tag */
  uint64_t sequence;     /* the collective's number on this communicator (0, 1, ...) */
  size_t index;          /* the chunk's number within the collective (0, 1, ...) */
  size_t chunks;         /* the collective's number of chunks */
  size_t offset;         /* the chunk's first element within each member's piece */
  size_t count;          /* elements per piece in this chunk (> 0) */
  size_t total;          /* elements per piece of the whole collective (the call's count) */
  const void *const *in; /* [local_count] */
  void *const *out;      /* [local_count] */
} cubert_comm_chunk;

typedef struct cubert_comm_transport cubert_comm_transport;

typedef struct cubert_comm_transport_vtable {
  const char *name; /* "inproc", "mpi": errors name it */
  /* Does part `part` of `parts` of the chunk's combination (see the top). An error fails the
     collective: the engine skips its remaining chunks and reports the error on every local
     member's stream (the gates open with it). A transport across processes must return, not
     hang, when a peer died (timeouts, MPI error handlers). */
  cubert_status (*combine)(cubert_comm_transport *transport, const cubert_comm_chunk *chunk,
                           size_t part, size_t parts);
  /* Frees the transport (after the engine's threads stopped). */
  void (*destroy)(cubert_comm_transport *transport);
  /* Optional, point-to-point: checks a send/recv's peer and tag beyond the engine's checks
     (MPI: tag <= MPI_TAG_UB); an error names `fn`. NULL: any tag >= 0. */
  cubert_status (*p2p_check)(cubert_comm_transport *transport, const char *fn, size_t peer,
                             int tag);
  /* Optional, point-to-point: called under the communicator's submit lock for each send/recv
     just before it is queued (calls are queued in this order). A transport that pairs messages
     in the process (in-process) posts a send here and matches a recv to a posted send, failing
     the call (nothing queued) when none matches; *out_message goes to every chunk of the job
     (cubert_comm_chunk.message) and to p2p_release. */
  cubert_status (*p2p_post)(cubert_comm_transport *transport, cubert_comm_kind kind, size_t self,
                            size_t peer, int tag, cubert_dtype dtype, size_t count, const char *fn,
                            void **out_message);
  /* Optional: the send/recv job that p2p_post gave `message` to is done, with `error` (NULL
     when it succeeded; borrowed). Called by the engine's worker before it starts the next job,
     so a recv's job sees how the send it matched ended. */
  void (*p2p_release)(cubert_comm_transport *transport, cubert_comm_kind kind, void *message,
                      cubert_status error);
} cubert_comm_transport_vtable;

/* Transports embed this as their first member. */
struct cubert_comm_transport {
  const cubert_comm_transport_vtable *vtable;
  size_t size;        /* members in total */
  size_t rank;        /* rank of the first local member */
  size_t local_count; /* local members (in-process: size; MPI: 1) */
  /* Bytes per member of one chunk when no local member stages (every buffer the job uses is
     host memory, used in place): a transport whose steps cost more than their bytes (messages
     between processes) asks for chunks bigger than the staging slots here; 0 or less than
     the staging chunk: the staging chunk. */
  size_t direct_chunk_bytes;
  /* 1: combine may be called with more parts than local members, concurrently (any part of
     any count covers its own elements): the engine then splits each member thread's part over
     that member's thread team (CUBERT_COMM_THREADS), since one thread reading every member's
     input and writing every member's output caps the collective near one core's memory
     bandwidth. 0: exactly one part per local member (a transport that exchanges messages per
     part, MPI). */
  int parts_split;
};

#endif /* CUBERT_COMM_TRANSPORT_H */

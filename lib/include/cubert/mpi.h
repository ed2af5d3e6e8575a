/** @file
   cubert — communicators across processes through MPI (optional component: built when CMake
   finds MPI, option CUBERT_MPI; installed only then; find_package(cubert COMPONENTS MPI)).
   Not part of the umbrella header cubert/cubert.h, since it needs <mpi.h>.

   A communicator made from an MPI communicator has one member per MPI process (rank r of the
   MPI communicator is member r; local_count is 1). Every call of cubert/comm.h works on it
   (all_reduce, broadcast, reduce, all_gather, reduce_scatter: arrays of ONE handle, this
   process's member), plus point-to-point send/recv below. Calls are stream-ordered exactly as
   in cubert/comm.h: they check their arguments, queue the work on the client's current stream
   and return; a later read or launch on that stream sees the result. The data moves through
   pinned host memory in pipelined chunks (device->host of one chunk overlaps the MPI exchange
   of the previous one and host->device of the one before), by the communicator engine's
   worker thread.

   Collective calls must be made by every rank in the same order with the same count, dtype,
   op and root, as MPI requires; send/recv pairs must agree on count and dtype. Every message
   carries a header with the call (kind, dtype, op, root, count, the call's number among the
   communicator's collectives) and its size, checked before the data is received: calls that
   disagree (another collective, dtype, op, root or count; a rank that skipped a call and made
   the next one; a recv shorter or longer than its send) fail on every rank involved (all
   ranks for a collective, both peers for send/recv) with an error naming both calls, and
   never write past a receive buffer. A rank that skips a call and makes no later one is
   found by the timeout below.

   MPI requirements.
   - MPI must be initialized with MPI_THREAD_MULTIPLE (MPI_Init_thread): the MPI calls of a
     communicator run on the engine's worker thread while the program's own threads may call
     MPI too. cubert_comm_create_mpi checks MPI_Query_thread and fails (UNAVAILABLE, naming
     the level MPI provides) otherwise.
   - cubert_comm_create_mpi is collective over mpi_comm (it duplicates it: cubert's messages
     never match the program's). cubert_comm_release frees the duplicates: release every
     communicator before MPI_Finalize.
   - The duplicate has MPI_ERRORS_RETURN, and every wait is bounded: a peer that does not send
     or receive its part within CUBERT_MPI_TIMEOUT_MS milliseconds (environment, read at
     creation; default 300000 = 5 minutes, 0 = wait forever) fails the call with an error
     naming this rank, the peer rank that did not answer, the call and the chunk. A failed MPI
     operation fails the same way with MPI's error string. The error comes back, as every
     asynchronous error, from the client's next flush/sync/read on that stream
     (SERVER_UNHEALTHY). After such an error the communicator is broken: its later calls fail
     the same way (at once, quoting the first error); release it. A rank that exits without
     MPI_Finalize usually makes mpirun end the whole job; a rank that stays alive but skips a
     call makes its peers time out.

   Errors of the calls themselves (nothing queued): as in cubert/comm.h, plus INVALID_ARGUMENT
   for a peer >= size or equal to this rank, a negative tag or one above MPI_TAG_UB, and a
   root >= size; the message names the argument and the valid range. */
#ifndef CUBERT_MPI_H
#define CUBERT_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "cubert/client.h"
#include "cubert/comm.h"
#include "cubert/export.h"
#include "cubert/handle.h"
#include "cubert/layout.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A communicator whose members are the ranks of `mpi_comm`, this process's member being
   `client` (any device; the communicator retains the client). Collective over mpi_comm.
   Errors: INVALID_ARGUMENT for NULL client/out or MPI_COMM_NULL; NOT_FOUND for a released
   client; UNAVAILABLE when MPI is not initialized, already finalized or lacks
   MPI_THREAD_MULTIPLE; UNAVAILABLE with MPI's error string when duplicating the MPI
   communicator fails. */
CUBERT_API cubert_status cubert_comm_create_mpi(MPI_Comm mpi_comm, cubert_client *client,
                                                cubert_comm **out);

/** Sends `count` elements of `dtype` from the start of `buf` (a handle of the member's device)
   to rank `peer` with `tag` (0 <= tag <= MPI_TAG_UB), stream-ordered: the bytes are read after
   the work queued before on the calling stream; the call returns at once. The matching
   cubert_comm_recv on `peer` must use the same count and dtype (a mismatch fails on both
   ranks, naming both calls; nothing is written past the receive). Works on MPI communicators only
   (INVALID_ARGUMENT for one of cubert_comm_create, whose members all live in one process: there
   cubert_comm_send_from / cubert_comm_recv_at of cubert/comm.h name the member). This is
   cubert_comm_send_from(comm, cubert_comm_rank(comm), ...), which works on MPI communicators
   too. */
CUBERT_API cubert_status cubert_comm_send(cubert_comm *comm, cubert_handle *buf, size_t count,
                                          cubert_dtype dtype, size_t peer, int tag);
/** Receives `count` elements from rank `peer` with `tag` into the start of `buf`,
   stream-ordered: work queued later on the calling stream sees the data. */
CUBERT_API cubert_status cubert_comm_recv(cubert_comm *comm, cubert_handle *buf, size_t count,
                                          cubert_dtype dtype, size_t peer, int tag);

CUBERT_EXTERN_C_END

#endif /* CUBERT_MPI_H */

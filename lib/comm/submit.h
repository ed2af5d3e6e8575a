/* cubert — the calls of a communicator (submit.c): each checks its arguments, orders its job on
   every member client's calling stream behind a gate and queues it for the engine; the
   collectives of cubert/comm.h and the point-to-point sends and receives of cubert/mpi.h. */
#ifndef CUBERT_COMM_SUBMIT_H
#define CUBERT_COMM_SUBMIT_H

#include <stddef.h>

#include "comm/transport.h"
#include "cubert/comm.h"
#include "cubert/handle.h"
#include "cubert/status.h"

/* Point-to-point through the engine (cubert/mpi.h's send/recv): stream-ordered like a
   collective on the single local member's current stream, chunked the same way; `what`
   names the public function in errors. */
cubert_status cubert_comm_queue_send(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what);
cubert_status cubert_comm_queue_recv(cubert_comm *comm, cubert_handle *buf, size_t count,
                                     cubert_dtype dtype, size_t peer, int tag, const char *what);

/* The public function of a kind ("cubert_comm_all_reduce"), for errors and traces. */
const char *cubert_comm_kind_name(cubert_comm_kind kind);

#endif /* CUBERT_COMM_SUBMIT_H */

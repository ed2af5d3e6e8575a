/** @file
   cubert — communicators: collectives over buffers of several devices.

   A communicator has `size` members in total, numbered 0..size-1 (their ranks). In one process
   (cubert_comm_create) every member is a client of this process, possibly of different devices
   or of one device twice; with MPI (cubert/mpi.h, optional) each process holds one member.
   `local_count` members live in this process, ranks cubert_comm_rank() .. rank+local_count-1.

   Calls. Every collective takes arrays of local_count handles, one per local member in member
   order (in one process: N; with MPI: 1), where handle i belongs to local member i's device
   (any client of that device instance). `count` and `count_per_member` are numbers of
   elements of `dtype`, not bytes. A collective checks its arguments, queues the work
   stream-ordered on each member client's CURRENT stream (the calling thread's stream, or the
   stream a cubert_client_with_stream view is pinned to) and returns without waiting:
     - the collective reads `src` after everything queued on that stream before the call (a
       write or a launch that produced src needs no sync before the call), and after work of
       other streams that used src or dst before (the core's cross-stream order);
     - work queued on that stream after the call (a read, a launch) sees the result in `dst`;
       another stream that uses dst later waits for the collective as for any command.

   Collectives queued on one communicator run in call order. src == dst (in place) is allowed
   wherever the sizes allow it (all_reduce, reduce); for all_gather/reduce_scatter src and dst
   must not overlap unless they are the same handle, and the same handle is allowed only for
   reduce (see each call). Count 0 is valid and queues nothing observable.

   Element types: CUBERT_DTYPE_F32, F64 (members whose device lacks CUBERT_FEATURE_FP64 may
   still take part: data passes through the host) and I32. Others are INVALID_ARGUMENT naming
   the dtype. Reductions: sum, max, min, mean. Integer sums wrap (two's complement); in one
   process, floating-point sums add the members' values in rank order (0 + 1 + ... + size-1)
   for every element, so the result does not depend on chunking or timing (a transport across
   processes may associate differently); max/min propagate NaN, as cubert_op_reduce does.

   Mean (CUBERT_REDUCE_MEAN, the reference's ReduceOperation::Mean, for averaging gradients):
   the sum over all `size` members, as for CUBERT_REDUCE_SUM, divided once by `size`; the
   result keeps the dtype (unlike cubert_op_reduce's mean, which gives f32 for i32). f32: the
   sum, then the correctly rounded quotient (the division is done in double, on the host and
   on OpenCL devices with fp64); f64: sum / size. Integer rule: i32 is the two's-complement
   (wrapping) i32 sum divided by size, truncating toward zero as C's `/` does (-7 / 2 = -3);
   it is the exact mean rounded toward zero whenever the sum fits in int32.

   Errors (returned by the call; nothing was queued then): INVALID_ARGUMENT for a NULL
   communicator, array or handle, a handle twice in one array (for src/dst of one member
   use the same handle for in place), a handle smaller than the bytes the collective touches
   (naming the argument, the member, the bytes needed and the bytes held), a bad dtype, op or
   root (naming it and the valid range); NOT_FOUND for a released handle or a handle of
   another device than its member's (naming the member and both devices). A communicator is
   a plain pointer: using one after cubert_comm_release is undefined. Errors raised while the queued
   work runs (a device copy failing, a transport failing, an MPI peer failing) come back from the
   member client's next flush/sync/read on that stream as SERVER_UNHEALTHY (the stream error queue,
   as any queued work), never as a crash or a hang; clients, handles and the communicator stay
   usable. A collective queued behind a failed command on a member's stream (a kernel whose
   failure that stream has not reported yet) moves no data: it fails on every member's stream,
   and the failed command's own error stays on its stream. (An OpenCL validate-mode violation is
   found only when its stream syncs: a collective queued before that sync does not see it.)

   Threads: calls on one communicator may come from several threads; each call is queued as a
   whole (collectives of one communicator never interleave). Handles stay owned by the caller:
   the communicator keeps what it needs alive until the work finished, so releasing a handle
   right after the call is fine. */
#ifndef CUBERT_COMM_H
#define CUBERT_COMM_H

#include <stddef.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/handle.h"
#include "cubert/layout.h"
#include "cubert/ops.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A communicator (opaque). */
typedef struct cubert_comm cubert_comm;

/* The reduce operation is cubert_reduce_op of cubert/ops.h: CUBERT_REDUCE_SUM, _MAX, _MIN and
   _MEAN (the others, the arg-reductions, are INVALID_ARGUMENT naming the op and the valid
   ones). */

/** A communicator over `count` >= 1 clients of this process: clients[i] is member (rank) i. The
   clients may be of any devices, the same device more than once included; the communicator
   retains them (the caller may release its own references). Each member's work runs on a
   communicator-private stream of its device, ordered against the caller's stream by the
   server's gates (server.h). Errors: INVALID_ARGUMENT for NULL clients/out or count 0, naming
   the index of a NULL client; NOT_FOUND for a released client (naming its index);
   OUT_OF_MEMORY / UNAVAILABLE when the worker threads or streams cannot be made. */
CUBERT_API cubert_status cubert_comm_create(cubert_client *const *clients, size_t count,
                                            cubert_comm **out);
/** Waits for every collective queued on the communicator to finish (their errors still go to
   the members' streams), then frees it. NULL is ignored. */
CUBERT_API void cubert_comm_release(cubert_comm *comm);
/** Members in total (0 for NULL). */
CUBERT_API size_t cubert_comm_size(const cubert_comm *comm);
/** Members in this process (0 for NULL). */
CUBERT_API size_t cubert_comm_local_count(const cubert_comm *comm);
/** Rank of the first member in this process (0 in one process and for NULL). */
CUBERT_API size_t cubert_comm_rank(const cubert_comm *comm);

/** dst[i] = op over every member m of src[m], element-wise, for `count` elements (count *
   dtype size bytes from the start of each handle). src[i] == dst[i] is in place. */
CUBERT_API cubert_status cubert_comm_all_reduce(cubert_comm *comm, cubert_handle *const *src,
                                                cubert_handle *const *dst, size_t count,
                                                cubert_dtype dtype, cubert_reduce_op op);
/** buf[i] = buf[root] for every member, `count` elements. root < size. */
CUBERT_API cubert_status cubert_comm_broadcast(cubert_comm *comm, cubert_handle *const *buf,
                                               size_t count, cubert_dtype dtype, size_t root);
/** dst of member `root` = op over every member of src, `count` elements. dst entries of other
   members are ignored (may be NULL) and their memory is not touched. src == dst is in place. */
CUBERT_API cubert_status cubert_comm_reduce(cubert_comm *comm, cubert_handle *const *src,
                                            cubert_handle *const *dst, size_t count,
                                            cubert_dtype dtype, cubert_reduce_op op, size_t root);
/** dst[i] = src[0] ++ src[1] ++ ... ++ src[size-1]: member m's `count_per_member` elements land
   at element m * count_per_member of every dst (dst holds size * count_per_member). src and
   dst must be different handles. */
CUBERT_API cubert_status cubert_comm_all_gather(cubert_comm *comm, cubert_handle *const *src,
                                                cubert_handle *const *dst, size_t count_per_member,
                                                cubert_dtype dtype);
/** src of every member holds size * count_per_member elements; dst of member m (count_per_member
   elements) = op over every member of src's elements [m * count_per_member, (m+1) *
   count_per_member). src and dst must be different handles. */
CUBERT_API cubert_status cubert_comm_reduce_scatter(cubert_comm *comm, cubert_handle *const *src,
                                                    cubert_handle *const *dst,
                                                    size_t count_per_member, cubert_dtype dtype,
                                                    cubert_reduce_op op);

/** Point-to-point on any communicator (the reference's ServerCommunication send/recv; over
   MPI, cubert/mpi.h's cubert_comm_send is this with rank = cubert_comm_rank()): local member
   `rank` (comm_rank <= rank < comm_rank + local_count, i.e. 0..size-1 in one process) sends
   `count` elements of `dtype` from the start of `buf` (a handle of that member's device) to
   member `peer` with `tag` (>= 0; over MPI <= MPI_TAG_UB). Stream-ordered like a collective,
   on that member's client's current stream only (the other members' streams are not held
   up): the bytes are read after the work queued before on it; the call returns at once.

   In one process the message goes through host memory: the send copies the bytes into a
   message buffer of count * dtype-size bytes (held until the matching recv has run), so `buf`
   may be overwritten by work queued after the send. The matching cubert_comm_recv_at must be
   called AFTER the send (a recv matches the oldest send queued before it from `peer` to its
   rank with its tag); sends nobody receives are freed with the communicator. Over MPI the
   order between the ranks' calls is free (cubert/mpi.h). Errors (nothing queued):
   INVALID_ARGUMENT for a NULL comm or buf, a rank that is not a member of this process, a
   peer >= size or equal to rank, a negative tag, a bad dtype or a buf smaller than count
   elements (naming the argument and the limit). */
CUBERT_API cubert_status cubert_comm_send_from(cubert_comm *comm, size_t rank, cubert_handle *buf,
                                               size_t count, cubert_dtype dtype, size_t peer,
                                               int tag);
/** Local member `rank` receives `count` elements of `dtype` from member `peer` with `tag` into
   the start of `buf` (a handle of that member's device), stream-ordered on that member's
   client's current stream: work queued later there sees the data. In one process the send
   must already be queued: INVALID_ARGUMENT when no send from `peer` to `rank` with `tag` is
   waiting, or when it has another count or dtype (naming both). If the send failed (its
   stream reports the error; a send queued behind a failed command of its stream fails and
   sends nothing), the recv fails too: its stream's next flush/sync/read returns EXECUTION
   inside SERVER_UNHEALTHY, naming the sender and quoting the send's error, and `buf` is not
   written. Other errors as cubert_comm_send_from. */
CUBERT_API cubert_status cubert_comm_recv_at(cubert_comm *comm, size_t rank, cubert_handle *buf,
                                             size_t count, cubert_dtype dtype, size_t peer,
                                             int tag);

CUBERT_EXTERN_C_END

#endif /* CUBERT_COMM_H */

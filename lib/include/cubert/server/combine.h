/** @file
   cubert — optional server capability: combining the ranks' buffers on the device, for the
   communicators' reducing collectives (lib/comm/device_combine.c; lib/comm/README.md "Device
   combination"). Without the table a communicator combines on the host. Locking: WITHOUT the
   device lock, on a communicator's private stream (cubert/server/gates.h). */
#ifndef CUBERT_SERVER_COMBINE_H
#define CUBERT_SERVER_COMBINE_H

#include <stddef.h>

#include "cubert/ops.h"
#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** Device combination. */
typedef struct cubert_server_combine {
  /** Queues on `stream`, for i in [0, count): dst[i] = v_0 op v_1 op ... op v_{n-1}, left to
     right over the ranks, where v_own_rank = own[i] and the other ranks' values are runs of
     `count` elements in `others` (rank r < own_rank at run r, r > own_rank at run r - 1). f32,
     i32, and f64 on devices with CUBERT_FEATURE_FP64; op sum, max, min or mean, with the host
     reduction's semantics (integer sums wrap, max/min propagate NaN, mean divides the sum by n
     once, integers truncating toward zero: cubert/comm.h); byte offsets are multiples of the
     element size. count 0 queues nothing but prepares (builds) what the server needs, so a
     communicator learns at creation whether it works. */
  cubert_status (*reduce)(cubert_server *server, cubert_server_stream *stream,
                          const cubert_binding *dst, const cubert_binding *own,
                          const cubert_binding *others, size_t n, size_t own_rank, size_t count,
                          cubert_dtype dtype, cubert_reduce_op op);
} cubert_server_combine;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_COMBINE_H */

/* cubert — the host reduction of the collectives (reduce.c): element-wise sums, products,
   maxima, minima and means of f32, f64 and i32 chunks in host memory, for the transports. */
#ifndef CUBERT_COMM_REDUCE_H
#define CUBERT_COMM_REDUCE_H

#include <stddef.h>

#include "cubert/comm.h"
#include "cubert/layout.h"

/* acc[i] = acc[i] op x[i] for `count` elements of `dtype` (f32,
   f64, i32; integer sums wrap; max/min propagate NaN). acc and x must not overlap.
   CUBERT_REDUCE_MEAN accumulates as a sum here: the division by the member count happens
   once, on the finished sum (cubert_comm_host_reduce_n's mean_of). */
void cubert_comm_host_reduce(void *acc, const void *x, size_t count, cubert_dtype dtype,
                             cubert_reduce_op op);
/* For every output o: out[o][i] = in[0][i] op in[1][i] op ... op in[n-1][i] (left to right),
   n >= 1, `count` elements; NULL outputs are skipped. An output may alias an input. For
   CUBERT_REDUCE_MEAN the inputs are summed and, when `mean_of` > 1, the sum is divided by
   mean_of (the communicator's size: pass it where this call finishes the reduction over every
   member, 0 for a partial sum a later step adds to); other ops ignore mean_of. */
void cubert_comm_host_reduce_n(void *const *out, size_t nout, const void *const *in, size_t n,
                               size_t count, cubert_dtype dtype, cubert_reduce_op op,
                               size_t mean_of);
/* Bytes of one element of a dtype a collective accepts (f32, f64, i32), 0 for the others. */
size_t cubert_comm_dtype_size(cubert_dtype dtype);

#endif /* CUBERT_COMM_REDUCE_H */

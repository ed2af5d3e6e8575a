/* cubert — the OpenCL server's device combination for communicators (comm_reduce.c): one
   reduction kernel per dtype, built at its first use and released with the server. Called with
   the device lock held. */
#ifndef CUBERT_OPENCL_COMM_REDUCE_H
#define CUBERT_OPENCL_COMM_REDUCE_H

#include <stddef.h>

#include "cubert/server/combine.h"
#include "opencl/server.h"

/* The vtable's comm_reduce; the kernels' release at server destroy. */
cubert_status cubert_ocl_comm_reduce(cubert_server *server, cubert_server_stream *stream,
                                     const cubert_binding *dst, const cubert_binding *own,
                                     const cubert_binding *others, size_t n, size_t own_rank,
                                     size_t count, cubert_dtype dtype, cubert_reduce_op op);
void cubert_ocl_comm_reduce_release(cubert_ocl_server *server);

#endif /* CUBERT_OPENCL_COMM_REDUCE_H */

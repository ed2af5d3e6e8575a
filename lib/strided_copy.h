/* cubert — the core's strided copy (strided_copy.c): one tensor view into another of the same
   shape on one device, through the copy kernels of kernels/copy_nd.cube.c. */
#ifndef CUBERT_STRIDED_COPY_H
#define CUBERT_STRIDED_COPY_H

#include "cubert/client.h"
#include "cubert/layout.h"

/* Queues the copy of `in` into `out` on the client's stream. The caller checked both views:
   one shape, one element size, each inside its live handle, `out` without zero strides over
   axes longer than 1. `op` names the caller in messages ("copy", "read_tensor").
   UNSUPPORTED_STRIDES for 8 axes that do not merge of elements wider than their machine word;
   TOO_MANY_RESOURCES for a launch of more than 2^32-1 cubes; NOT_FOUND for a released client. */
cubert_status cubert_strided_copy(cubert_client *client, const char *op, const cubert_tensor *in,
                                  const cubert_tensor *out);

#endif /* CUBERT_STRIDED_COPY_H */

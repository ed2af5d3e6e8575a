/* cubert — the parts of tensor.c that the asynchronous strided reads (tensor_read_async.c)
   share with the blocking ones. Not installed. */
#ifndef CUBERT_TENSOR_H
#define CUBERT_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"

/* Checks a copy descriptor against a handle of `handle_size` bytes and a host buffer of `size`
   bytes (named `size_name` in errors): rank, element size, shape and strides (no broadcast, no
   64-bit overflow, nothing past the handle); *out_elems = the elements the region holds. */
cubert_status cubert_copy_desc_check(const cubert_copy_desc *desc, uint64_t handle_size,
                                     size_t size, const char *size_name, uint64_t *out_elems);
/* Queues on the calling stream the gather of the region `desc` describes (`elems` elements,
   checked) into contiguous row-major `scratch`, a buffer of elems * elem_size bytes or more. */
cubert_status cubert_tensor_gather(cubert_client *client, const cubert_copy_desc *desc,
                                   uint64_t elems, cubert_handle *scratch);

#endif /* CUBERT_TENSOR_H */

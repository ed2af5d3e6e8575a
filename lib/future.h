/* cubert — asynchronous reads (future.c): the internal form that the public read futures and
   the strided reads of tensor_read_async.c share. Not installed. */
#ifndef CUBERT_FUTURE_H
#define CUBERT_FUTURE_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"

/* One read of a future: bytes [offset, offset + size) of `handle` into host `dst`. */
typedef struct cubert_future_read {
  cubert_handle *handle;
  uint64_t offset; /* bytes into the handle */
  void *dst;
  size_t size; /* bytes */
} cubert_future_read;

/* Queues reads[0..count) in order on the calling stream as one future (*out). Arguments are
   named in errors as the public calls name them: `many` 1 as handles[k]/dsts[k]/sizes[k], 0 as
   handle/dst/size/offset. keep[0..keep_count) are handles the future releases once every read
   completed (scratch buffers the reads copy out of): ownership moves in, on error too. */
cubert_status cubert_future_start(cubert_client *client, size_t count,
                                  const cubert_future_read *reads, int many, cubert_handle **keep,
                                  size_t keep_count, cubert_future **out);

#endif /* CUBERT_FUTURE_H */

/* cubert — asynchronous reads of strided regions (the reference's read_tensor_async and
   read_one_tensor_async). Each region is checked as the blocking read checks it (tensor.c);
   a contiguous one becomes a read of its byte range, any other is gathered on the device into
   a scratch buffer first (the gather queued on the calling stream, so the read after it sees
   its result). The reads go to one future (future.c), which keeps the scratch buffers and frees
   them once the reads completed. */
#include <stdlib.h>

#include "base/status.h"
#include "client.h"
#include "cubert/layout.h"
#include "future.h"
#include "handle.h"
#include "tensor.h"

/* Checks region k (errors prefixed "descs[k]: " when `many`) and fills its read; the caller
   holds the client `c`. */
static cubert_status plan_read(const cubert_client_obj *c, const cubert_copy_desc *desc, void *dst,
                               size_t dst_size, size_t k, int many, cubert_future_read *out,
                               uint64_t *out_elems) {
  cubert_handle_obj *h = NULL;
  cubert_status s = cubert_handle_check(c, desc->handle, "desc->handle", &h);
  if (!s && !dst && dst_size) s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  if (!s) s = cubert_copy_desc_check(desc, h->size, dst_size, "dst_size", out_elems);
  if (h) cubert_handle_release(desc->handle);
  if (s && many) return cubert_status_wrap(cubert_status_code(s), s, "descs[%zu]", k);
  if (s) return s;
  /* An empty region reads nothing, wherever its offset points (as the blocking read). */
  uint64_t offset = *out_elems ? desc->offset * desc->elem_size : 0;
  *out = (cubert_future_read){desc->handle, offset, dst, dst_size};
  return NULL;
}

static cubert_status read_regions(cubert_client *client, size_t count,
                                  const cubert_copy_desc *descs, void *const *dsts,
                                  const size_t *dst_sizes, int many, cubert_future **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (count && (!descs || !dsts || !dst_sizes))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "descs, dsts and dst_sizes must be non-NULL for count %zu", count);
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  size_t n = count ? count : 1;
  cubert_future_read *reads = calloc(n, sizeof(*reads));
  uint64_t *elems = calloc(n, sizeof(*elems));
  cubert_handle **keep = calloc(n, sizeof(*keep));
  cubert_status s = reads && elems && keep
                        ? NULL
                        : cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  for (size_t k = 0; k < count && !s; ++k)
    s = plan_read(c, &descs[k], dsts[k], dst_sizes[k], k, many, &reads[k], &elems[k]);
  /* Everything is checked: now the gathers, each before its read on the stream. */
  size_t kept = 0;
  for (size_t k = 0; k < count && !s; ++k) {
    const cubert_copy_desc *d = &descs[k];
    if (!elems[k] || cubert_layout_is_contiguous(d->rank, d->shape, d->strides)) continue;
    s = cubert_client_empty(client, dst_sizes[k], &keep[kept]);
    if (s) break;
    cubert_handle *scratch = keep[kept++];
    s = cubert_tensor_gather(client, d, elems[k], scratch);
    reads[k] = (cubert_future_read){scratch, 0, dsts[k], dst_sizes[k]};
  }
  cubert_client_release(client);
  if (s) {
    /* The queued gathers hold their scratch memory until they ran; no read was queued. */
    for (size_t i = 0; i < kept; ++i) cubert_handle_release(keep[i]);
    free(keep);
  } else {
    s = cubert_future_start(client, count, reads, 0, keep, kept, out);
  }
  free(reads);
  free(elems);
  return s;
}

cubert_status cubert_client_read_tensor_async(cubert_client *client, const cubert_copy_desc *desc,
                                              void *dst, size_t dst_size, cubert_future **out) {
  if (out) *out = NULL;
  if (!desc) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc is NULL");
  void *const dsts[1] = {dst};
  const size_t sizes[1] = {dst_size};
  return read_regions(client, 1, desc, dsts, sizes, 0, out);
}

cubert_status cubert_client_read_tensor_view_async(cubert_client *client,
                                                   const cubert_tensor *tensor, void *dst,
                                                   size_t dst_size, cubert_future **out) {
  cubert_copy_desc desc;
  CUBERT_RETURN_IF_ERROR(cubert_copy_desc_from_tensor(tensor, &desc));
  return cubert_client_read_tensor_async(client, &desc, dst, dst_size, out);
}

cubert_status cubert_client_read_tensors_async(cubert_client *client, size_t count,
                                               const cubert_copy_desc *descs, void *const *dsts,
                                               const size_t *dst_sizes, cubert_future **out) {
  return read_regions(client, count, descs, dsts, dst_sizes, 1, out);
}

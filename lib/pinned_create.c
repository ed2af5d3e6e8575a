/* cubert — buffers and tensors created through pinned host memory (cubert/pinned.h; the
   reference's create_from_slice_pinned and create_tensors_from_slices_pinned): the data is
   copied into a block of cubert_client_reserve_pinned laid out as the device memory is (rows at
   the tensor's pitch), and the device memory is written from the block in one transfer, which a
   server with pinned memory DMAs directly. The writes are synchronous, so each block is
   released as soon as its write returned. */
#include <string.h>

#include "cubert/pinned.h"
#include "device.h"

cubert_status cubert_client_create_buffer_pinned(cubert_client *client, const void *data,
                                                 size_t size, cubert_handle **out) {
  if (!data || !size || cubert_pinned_kind_of(data) != CUBERT_PINNED_NONE)
    return cubert_client_create_buffer(client, data, size, out);
  if (out) *out = NULL;
  void *block = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_reserve_pinned(client, size, &block));
  memcpy(block, data, size);
  cubert_status s = cubert_client_create_buffer(client, block, size, out);
  cubert_status_free(cubert_pinned_release(block)); /* cannot fail: this call reserved it */
  return s;
}

/* Writes contiguous row-major `data` into tensor `t` (its handle a fresh allocation of its
   span) through a pinned block holding the bytes as the device lays them out. */
static cubert_status upload_pinned(cubert_client *client, const cubert_tensor *t,
                                   const void *data) {
  uint64_t span = cubert_handle_size(t->handle);
  uint64_t elems = 1;
  for (uint32_t i = 0; i < t->rank; ++i) elems *= t->shape[i];
  if (elems == 0 || span == 0) return NULL;
  void *block = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_reserve_pinned(client, (size_t)span, &block));
  if (cubert_layout_is_contiguous(t->rank, t->shape, t->strides)) {
    memcpy(block, data, (size_t)(elems * t->elem_size));
  } else {
    /* Pitched (cubert_layout_plan pads only the rows of rank >= 2 tensors): each row at its
       pitch, the padding zeroed as cubert_client_create_tensors leaves it. */
    uint64_t row = t->shape[t->rank - 1] * t->elem_size;
    uint64_t pitch = t->strides[t->rank - 2] * t->elem_size;
    uint64_t rows = elems / t->shape[t->rank - 1];
    char *to = block;
    for (uint64_t r = 0; r < rows; ++r) {
      uint64_t end = r * pitch + row, next = r + 1 < rows ? end - row + pitch : span;
      memcpy(to + r * pitch, (const char *)data + r * row, (size_t)row);
      memset(to + end, 0, (size_t)(next - end));
    }
  }
  cubert_status s = cubert_client_write(client, t->handle, 0, block, (size_t)span);
  cubert_status_free(cubert_pinned_release(block)); /* cannot fail: reserved above */
  return s;
}

cubert_status cubert_client_create_tensors_pinned(cubert_client *client, const void *const *data,
                                                  const cubert_layout_desc *descs, size_t count,
                                                  cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_empty_tensors(client, descs, count, out));
  cubert_status s = NULL;
  for (size_t k = 0; data && k < count && !s; ++k)
    if (data[k]) s = upload_pinned(client, &out[k], data[k]);
  if (s)
    for (size_t k = 0; k < count; ++k) cubert_tensor_release(&out[k]);
  return s;
}

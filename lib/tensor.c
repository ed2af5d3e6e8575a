/* cubert — tensor variants of the client: allocation through layout plans (several tensors in
   one allocation, pitched rows where the device prefers them) and strided reads and writes
   through the library's copy kernels (launch_1d.h's tuned launch picks their cube dim;
   strided_copy.h). A strided write's copy runs in dry run too (dry_run.h's real-run scope). */
#include "tensor.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "client.h"
#include "cubert/kernels.h"
#include "device.h"
#include "dry_run.h"
#include "handle.h"
#include "launch_1d.h"
#include "strided_copy.h"

void cubert_tensor_release(cubert_tensor *tensor) {
  if (!tensor) return;
  cubert_handle_release(tensor->handle);
  memset(tensor, 0, sizeof(*tensor));
}

/* Uploads contiguous row-major `data` into a (possibly pitched) tensor. */
static cubert_status upload(cubert_client *client, cubert_handle *handle,
                            const cubert_layout_desc *desc, const cubert_layout *layout,
                            const void *data) {
  const uint64_t elem_size = cubert_layout_elem_size(desc);
  uint64_t elems = 1;
  for (uint32_t i = 0; i < desc->rank; ++i) elems *= desc->shape[i];
  uint64_t bytes = elems * elem_size;
  if (bytes == 0) return NULL;
  if (cubert_layout_is_contiguous(desc->rank, desc->shape, layout->strides))
    return cubert_client_write(client, handle, 0, data, bytes);
  /* Pitched: rank >= 2 with padded rows; write row by row. */
  uint64_t row = desc->shape[desc->rank - 1] * elem_size;
  uint64_t pitch = layout->strides[desc->rank - 2] * elem_size;
  uint64_t rows = elems / desc->shape[desc->rank - 1];
  /* Stage into one padded host buffer so the device sees a single transfer. */
  uint64_t span = layout->size;
  char *staged = calloc(1, span ? span : 1);
  if (!staged)
    return cubert_status_set_kind(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host staging allocation failed"),
        CUBERT_KIND_IO);
  for (uint64_t r = 0; r < rows; ++r) memcpy(staged + r * pitch, (const char *)data + r * row, row);
  cubert_status s = cubert_client_write(client, handle, 0, staged, span);
  free(staged);
  return s;
}

static cubert_status tensors_new(cubert_client *client, const void *const *data,
                                 const cubert_layout_desc *descs, size_t count,
                                 cubert_tensor *out) {
  if (!descs || !out || count == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "descs and out must be non-NULL and count (%zu) at least 1", count);
  memset(out, 0, count * sizeof(*out));
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  uint64_t pitch_align = c->device->pitch_align, alignment = c->device->storage.alignment;
  cubert_client_release(client); /* the calls below check the client again */
  cubert_layout *layouts = calloc(count, sizeof(*layouts));
  if (!layouts)
    return cubert_status_set_kind(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed"), CUBERT_KIND_IO);
  uint64_t total = 0;
  cubert_status s = cubert_layout_plan(descs, count, pitch_align, alignment, layouts, &total);
  cubert_handle *whole = NULL;
  if (!s) s = cubert_client_empty(client, total, &whole);
  for (size_t i = 0; i < count && !s; ++i) {
    s = cubert_handle_view(whole, layouts[i].offset, layouts[i].size, &out[i].handle);
    if (s) break;
    out[i].rank = descs[i].rank;
    out[i].elem_size = cubert_layout_elem_size(&descs[i]);
    out[i].dtype = descs[i].dtype;
    memcpy(out[i].shape, descs[i].shape, sizeof(out[i].shape));
    memcpy(out[i].strides, layouts[i].strides, sizeof(out[i].strides));
    if (data && data[i]) s = upload(client, out[i].handle, &descs[i], &layouts[i], data[i]);
  }
  cubert_handle_release(whole);
  free(layouts);
  if (s)
    for (size_t i = 0; i < count; ++i) cubert_tensor_release(&out[i]);
  return s;
}

cubert_status cubert_client_create_tensors(cubert_client *client, const void *const *data,
                                           const cubert_layout_desc *descs, size_t count,
                                           cubert_tensor *out) {
  return tensors_new(client, data, descs, count, out);
}

cubert_status cubert_client_create_tensor(cubert_client *client, const void *data,
                                          const cubert_layout_desc *desc, cubert_tensor *out) {
  const void *const list[1] = {data};
  return tensors_new(client, list, desc, 1, out);
}

cubert_status cubert_client_empty_tensor(cubert_client *client, const cubert_layout_desc *desc,
                                         cubert_tensor *out) {
  return tensors_new(client, NULL, desc, 1, out);
}

cubert_status cubert_client_empty_tensors(cubert_client *client, const cubert_layout_desc *descs,
                                          size_t count, cubert_tensor *out) {
  return tensors_new(client, NULL, descs, count, out);
}

/* Checks a copy descriptor against the handle of `handle_size` bytes: the element count
   (returned in *out_elems) and the furthest byte the strides reach, all overflow-checked.
   Zero strides on an axis longer than 1 would broadcast one element to several places of the
   output, which a copy cannot express (the reference: UnsupportedStrides). */
static cubert_status check_copy(const cubert_copy_desc *desc, uint64_t handle_size, size_t dst_size,
                                const char *size_name, uint64_t *out_elems) {
  if (desc->rank > CUBERT_MAX_RANK)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc->rank is %u, maximum %d",
                              desc->rank, CUBERT_MAX_RANK);
  if (desc->elem_size == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc->elem_size is 0");
  uint64_t elems = 1, last = 0;
  for (uint32_t i = 0; i < desc->rank; ++i) {
    uint64_t d = desc->shape[i], step = 0;
    if (__builtin_mul_overflow(elems, d, &elems))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "desc->shape overflows 64 bits at dimension %u (%llu elements)", i,
                                (unsigned long long)d);
    if (d > 1 && desc->strides[i] == 0)
      return cubert_status_make(CUBERT_CODE_UNSUPPORTED_STRIDES,
                                "desc->strides[%u] is 0 for a dimension of %llu elements: a copy "
                                "cannot broadcast",
                                i, (unsigned long long)d);
    if (d && (__builtin_mul_overflow(d - 1, desc->strides[i], &step) ||
              __builtin_add_overflow(last, step, &last)))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "desc->strides[%u] (%llu) times the extent of dimension %u (%llu) "
                                "overflows 64 bits",
                                i, (unsigned long long)desc->strides[i], i, (unsigned long long)d);
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(elems, desc->elem_size, &bytes))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "the tensor holds %llu elements of %llu bytes, more than 2^64 bytes",
                              (unsigned long long)elems, (unsigned long long)desc->elem_size);
  if (bytes != dst_size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s is %zu bytes; the tensor holds %llu elements of %llu "
                              "bytes (%llu bytes)",
                              size_name, dst_size, (unsigned long long)elems,
                              (unsigned long long)desc->elem_size, (unsigned long long)bytes);
  *out_elems = elems;
  if (elems == 0) return NULL;
  uint64_t reach;
  if (__builtin_add_overflow(last, desc->offset, &last) ||
      __builtin_add_overflow(last, 1, &reach) ||
      __builtin_mul_overflow(reach, desc->elem_size, &reach))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "desc->offset and the strides reach element %llu, whose byte "
                              "offset overflows 64 bits",
                              (unsigned long long)last);
  if (reach > handle_size)
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT,
        "desc->offset and the strides reach byte %llu, past the end of the handle (%llu bytes)",
        (unsigned long long)reach, (unsigned long long)handle_size);
  return NULL;
}

/* Copies between the region `desc` describes and the contiguous row-major `scratch` with the
   library's copy (any strides on both sides, offsets included): into the region when
   `to_region`, else out of it. */
static cubert_status copy_region(cubert_client *client, const cubert_copy_desc *desc,
                                 cubert_handle *scratch, int to_region) {
  cubert_tensor region = {.handle = desc->handle,
                          .rank = desc->rank,
                          .elem_size = desc->elem_size,
                          .offset = desc->offset};
  cubert_tensor flat = {.handle = scratch, .rank = desc->rank, .elem_size = desc->elem_size};
  uint64_t stride = 1;
  for (uint32_t i = desc->rank; i-- > 0;) {
    region.shape[i] = flat.shape[i] = desc->shape[i];
    region.strides[i] = desc->strides[i];
    flat.strides[i] = stride;
    stride *= desc->shape[i];
  }
  return to_region ? cubert_strided_copy(client, "write_tensor", &flat, &region)
                   : cubert_strided_copy(client, "read_tensor", &region, &flat);
}

cubert_status cubert_tensor_gather(cubert_client *client, const cubert_copy_desc *desc,
                                   uint64_t elems, cubert_handle *scratch) {
  /* The gather kernel has no offset word, and a view at the offset is not always bindable
     (OpenCL sub-buffers need aligned offsets): the library copy takes offsets as they are. */
  if (desc->offset) return copy_region(client, desc, scratch, 0);
  uint64_t info[3 + 2 * CUBERT_MAX_RANK];
  info[0] = desc->rank;
  info[1] = desc->elem_size;
  info[2] = elems;
  for (uint32_t i = 0; i < desc->rank; ++i) {
    info[3 + i] = desc->shape[i];
    info[3 + desc->rank + i] = desc->strides[i];
  }
  cubert_handle *buffers[2] = {desc->handle, scratch};
  cubert_kernel_args args = {buffers, 2, info, 3 + 2 * desc->rank};
  /* The cube dim comes from autotune (issue 11 #5), keyed by size, rank and element size. */
  return cubert_launch_1d_tuned(client, &cubert_kernel_copy_strided, elems, &args, desc->rank,
                                desc->elem_size);
}

cubert_status cubert_copy_desc_check(const cubert_copy_desc *desc, uint64_t handle_size,
                                     size_t size, const char *size_name, uint64_t *out_elems) {
  return check_copy(desc, handle_size, size, size_name, out_elems);
}

/* Scatters contiguous `src` into a strided region through a scratch buffer holding it. */
static cubert_status write_strided(cubert_client *client, const cubert_copy_desc *desc,
                                   const void *src, size_t src_size) {
  cubert_handle *scratch = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_create_buffer(client, src, src_size, &scratch));
  /* The copy kernel is part of the write, not a launch of the caller's: it runs in dry run too
     (writes land there as usual, cubert_client_set_dry_run), whether or not its cube dim's
     tuning is cached. */
  cubert_dry_run_real_begin();
  cubert_status s = copy_region(client, desc, scratch, 1);
  cubert_dry_run_real_end();
  /* The scratch buffer stays alive until the queued copy finished (bindings hold it). */
  cubert_handle_release(scratch);
  return s;
}

cubert_status(cubert_client_read_tensor)(cubert_client *client, const cubert_copy_desc *desc,
                                         void *dst, size_t dst_size) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_handle_obj *h = NULL;
  cubert_status s = desc ? cubert_handle_check(c, desc->handle, "desc->handle", &h)
                         : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc is NULL");
  uint64_t elems = 0;
  if (!s && !dst && dst_size) s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  if (!s) s = check_copy(desc, h->size, dst_size, "dst_size", &elems);
  if (!s && elems && cubert_layout_is_contiguous(desc->rank, desc->shape, desc->strides)) {
    s = cubert_client_read_range(client, desc->handle, desc->offset * desc->elem_size, dst,
                                 dst_size);
  } else if (!s && elems) {
    /* Gathered on the device into a contiguous scratch buffer, then read from there. */
    cubert_handle *scratch = NULL;
    s = cubert_client_empty(client, dst_size, &scratch);
    if (!s) s = cubert_tensor_gather(client, desc, elems, scratch);
    if (!s) s = cubert_client_read(client, scratch, dst, dst_size);
    cubert_handle_release(scratch);
  }
  if (h) cubert_handle_release(desc->handle);
  cubert_client_release(client);
  return s;
}

cubert_status(cubert_client_write_tensor)(cubert_client *client, const cubert_copy_desc *desc,
                                          const void *src, size_t src_size) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_handle_obj *h = NULL;
  cubert_status s = desc ? cubert_handle_check(c, desc->handle, "desc->handle", &h)
                         : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc is NULL");
  uint64_t elems = 0;
  if (!s && !src && src_size) s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "src is NULL");
  if (!s) s = check_copy(desc, h->size, src_size, "src_size", &elems);
  if (!s && elems && cubert_layout_is_contiguous(desc->rank, desc->shape, desc->strides))
    s = cubert_client_write(client, desc->handle, desc->offset * desc->elem_size, src, src_size);
  else if (!s && elems)
    s = write_strided(client, desc, src, src_size);
  if (h) cubert_handle_release(desc->handle);
  cubert_client_release(client);
  return s;
}

/* The tensor forms: the descriptor of the tensor's region, then the calls above. */
cubert_status cubert_client_read_tensor_view(cubert_client *client, const cubert_tensor *tensor,
                                             void *dst, size_t dst_size) {
  cubert_copy_desc desc;
  CUBERT_RETURN_IF_ERROR(cubert_copy_desc_from_tensor(tensor, &desc));
  return (cubert_client_read_tensor)(client, &desc, dst, dst_size);
}

cubert_status cubert_client_write_tensor_view(cubert_client *client, const cubert_tensor *tensor,
                                              const void *src, size_t src_size) {
  cubert_copy_desc desc;
  CUBERT_RETURN_IF_ERROR(cubert_copy_desc_from_tensor(tensor, &desc));
  return (cubert_client_write_tensor)(client, &desc, src, src_size);
}

cubert_status(cubert_copy_desc_from_tensor)(const cubert_tensor *tensor, cubert_copy_desc *out) {
  if (!tensor || !out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "tensor and out must be non-NULL");
  if (!tensor->handle)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "tensor->handle is NULL");
  if (tensor->rank > CUBERT_MAX_RANK)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "tensor->rank is %u, maximum %d",
                              tensor->rank, CUBERT_MAX_RANK);
  memset(out, 0, sizeof(*out));
  out->handle = tensor->handle;
  out->rank = tensor->rank;
  memcpy(out->shape, tensor->shape, tensor->rank * sizeof(uint64_t));
  memcpy(out->strides, tensor->strides, tensor->rank * sizeof(uint64_t));
  out->elem_size = tensor->elem_size;
  out->offset = tensor->offset;
  return NULL;
}

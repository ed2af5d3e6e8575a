/* cubert — tensor variants of the client: allocation through layout plans (several tensors in
   one allocation, pitched rows where the device prefers them) and strided reads through the
   library's copy kernel. */
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "cubert/kernels.h"

void cubert_tensor_release(cubert_tensor *tensor) {
  if (!tensor) return;
  cubert_handle_release(tensor->handle);
  memset(tensor, 0, sizeof(*tensor));
}

/* Uploads contiguous row-major `data` into a (possibly pitched) tensor. */
static cubert_status upload(cubert_client *client, cubert_handle *handle,
                            const cubert_layout_desc *desc, const cubert_layout *layout,
                            const void *data) {
  uint64_t elems = 1;
  for (uint32_t i = 0; i < desc->rank; ++i) elems *= desc->shape[i];
  uint64_t bytes = elems * desc->elem_size;
  if (bytes == 0) return NULL;
  if (cubert_layout_is_contiguous(desc->rank, desc->shape, layout->strides))
    return cubert_client_write(client, handle, 0, data, bytes);
  /* Pitched: rank >= 2 with padded rows; write row by row. */
  uint64_t row = desc->shape[desc->rank - 1] * desc->elem_size;
  uint64_t pitch = layout->strides[desc->rank - 2] * desc->elem_size;
  uint64_t rows = elems / desc->shape[desc->rank - 1];
  /* Stage into one padded host buffer so the device sees a single transfer. */
  uint64_t span = layout->size;
  char *staged = calloc(1, span ? span : 1);
  if (!staged)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host staging allocation failed");
  for (uint64_t r = 0; r < rows; ++r) memcpy(staged + r * pitch, (const char *)data + r * row, row);
  cubert_status s = cubert_client_write(client, handle, 0, staged, span);
  free(staged);
  return s;
}

static cubert_status tensors_new(cubert_client *client, const void *const *data,
                                 const cubert_layout_desc *descs, size_t count,
                                 cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!descs || !out || count == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "descs and out must be non-NULL and count (%zu) at least 1", count);
  memset(out, 0, count * sizeof(*out));
  cubert_device *device = client->device;
  cubert_layout *layouts = calloc(count, sizeof(*layouts));
  if (!layouts) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  uint64_t total = 0;
  cubert_status s = cubert_layout_plan(descs, count, device->pitch_align, device->storage.alignment,
                                       layouts, &total);
  cubert_handle *whole = NULL;
  if (!s) s = cubert_client_empty(client, total, &whole);
  for (size_t i = 0; i < count && !s; ++i) {
    s = cubert_handle_view(whole, layouts[i].offset, layouts[i].size, &out[i].handle);
    if (s) break;
    out[i].rank = descs[i].rank;
    out[i].elem_size = descs[i].elem_size;
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

cubert_status cubert_client_read_tensor(cubert_client *client, const cubert_copy_desc *desc,
                                        void *dst, size_t dst_size) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!desc) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc is NULL");
  CUBERT_RETURN_IF_ERROR(cubert_handle_check(client, desc->handle, "desc->handle"));
  if (desc->rank > CUBERT_MAX_RANK)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc->rank is %u, maximum %d",
                              desc->rank, CUBERT_MAX_RANK);
  if (desc->elem_size == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "desc->elem_size is 0");
  /* Element count and the furthest element the strides reach, overflow-checked. */
  uint64_t elems = 1, last = 0;
  for (uint32_t i = 0; i < desc->rank; ++i) {
    uint64_t d = desc->shape[i];
    if (d == 0) {
      elems = 0;
      break;
    }
    if (__builtin_mul_overflow(elems, d, &elems) ||
        desc->strides[i] > UINT64_MAX / (d - 1 ? d - 1 : 1))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "desc shape/strides overflow 64 bits at dimension %u", i);
    last += (d - 1) * desc->strides[i];
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(elems, desc->elem_size, &bytes) || bytes != dst_size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "dst_size is %zu bytes; the tensor holds %llu elements of %llu "
                              "bytes (%llu bytes)",
                              dst_size, (unsigned long long)elems,
                              (unsigned long long)desc->elem_size,
                              (unsigned long long)(elems * desc->elem_size));
  if (elems == 0) return NULL;
  uint64_t reach = (last + 1) * desc->elem_size;
  if (reach > desc->handle->size)
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT,
        "the strides reach byte %llu, past the end of the handle (%llu bytes)",
        (unsigned long long)reach, (unsigned long long)desc->handle->size);
  if (cubert_layout_is_contiguous(desc->rank, desc->shape, desc->strides))
    return cubert_client_read(client, desc->handle, dst, dst_size);

  /* Strided: gather on the device into a contiguous scratch buffer, then read that. */
  uint64_t info[3 + 2 * CUBERT_MAX_RANK];
  info[0] = desc->rank;
  info[1] = desc->elem_size;
  info[2] = elems;
  for (uint32_t i = 0; i < desc->rank; ++i) {
    info[3 + i] = desc->shape[i];
    info[3 + desc->rank + i] = desc->strides[i];
  }
  cubert_handle *scratch = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_empty(client, bytes, &scratch));
  cubert_handle *buffers[2] = {desc->handle, scratch};
  cubert_kernel_args args = {buffers, 2, info, 3 + 2 * desc->rank};
  const cubert_device_properties *p = cubert_client_properties(client);
  uint32_t max_units = p->hardware.max_units_per_cube;
  uint32_t dim_x = max_units < 256 ? max_units : 256;
  if (dim_x > p->hardware.max_cube_dim[0]) dim_x = p->hardware.max_cube_dim[0];
  if (dim_x == 0) dim_x = 1;
  uint64_t cubes = (elems + dim_x - 1) / dim_x;
  cubert_status s = NULL;
  if (cubes > UINT32_MAX)
    s = cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                           "a strided read of %llu elements needs %llu cubes, more than 2^32-1",
                           (unsigned long long)elems, (unsigned long long)cubes);
  cubert_cube_count_selection sel;
  if (!s) s = cubert_cube_count_select(client, (uint32_t)cubes, &sel);
  if (!s)
    s = cubert_client_launch(client, &cubert_kernel_copy_strided, sel.cube_count,
                             cubert_cube_dim_new_3d(dim_x, 1, 1), &args);
  if (!s) s = cubert_client_read(client, scratch, dst, dst_size);
  cubert_handle_release(scratch);
  return s;
}

/* Operand checks and broadcasting shared by the operations of cubert/ops.h. */
#include "ops/operand.h"

#include <string.h>

#include "cubert/geometry.h"
#include "handle.h"

cubert_status cubert_ops_check_client(const cubert_client *client, const char *op) {
  if (!client) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: client is NULL", op);
  if (!cubert_client_properties(client))
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s: client was released (or is not a client)",
                              op);
  return NULL;
}

/* The largest power of two that divides n (n > 0): the alignment of an element of n bytes. */
static uint64_t natural_alignment(uint64_t n) {
  return n & (~n + 1);
}

/* The tensor's rank, dtype (one of `allowed`, any when 0) and element size. INVALID_ARGUMENT. */
static cubert_status check_element_type(const char *op, const char *name, const cubert_tensor *t,
                                        uint32_t allowed) {
  if (t->rank > CUBERT_MAX_RANK)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s.rank is %u, maximum %d", op,
                              name, t->rank, CUBERT_MAX_RANK);
  if ((unsigned)t->dtype >= CUBERT_DTYPE_COUNT_)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s.dtype is %d, not a cubert_dtype", op, name, (int)t->dtype);
  if (allowed && !(allowed & CUBERT_OPS_DTYPE_BIT(t->dtype))) {
    char list[64] = "";
    for (int d = 1; d < CUBERT_DTYPE_COUNT_; ++d)
      if (allowed & CUBERT_OPS_DTYPE_BIT(d)) {
        if (list[0]) strcat(list, ", ");
        strcat(list, cubert_dtype_name((cubert_dtype)d));
      }
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s.dtype is %s; this operation takes %s%s", op, name,
                              cubert_dtype_name(t->dtype), list,
                              t->dtype == CUBERT_DTYPE_NONE ? " (set the tensor's dtype)" : "");
  }
  if (t->dtype != CUBERT_DTYPE_NONE && t->elem_size != cubert_dtype_size(t->dtype))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s.elem_size is %llu but its dtype %s has %llu-byte elements",
                              op, name, (unsigned long long)t->elem_size,
                              cubert_dtype_name(t->dtype),
                              (unsigned long long)cubert_dtype_size(t->dtype));
  if (t->elem_size == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s.elem_size is 0; an element has at least 1 byte", op, name);
  return NULL;
}

/* The tensor's element count into *out_elems (0 when an axis is empty); INVALID_ARGUMENT when it
   overflows 64 bits, or for an output that broadcasts (a stride 0 over several elements). */
static cubert_status count_elements(const char *op, const char *name, const cubert_tensor *t,
                                    bool is_output, uint64_t *out_elems) {
  uint64_t elems = 1;
  bool empty = false;
  for (uint32_t d = 0; d < t->rank; ++d) {
    const uint64_t len = t->shape[d];
    if (len == 0) empty = true;
    if (__builtin_mul_overflow(elems, len, &elems))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: %s.shape overflows 64 bits at axis %u", op, name, d);
    if (is_output && len > 1 && t->strides[d] == 0)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: %s.strides[%u] is 0 over %llu elements: an output cannot "
                                "broadcast (two elements would share one place)",
                                op, name, d, (unsigned long long)len);
  }
  *out_elems = empty ? 0 : elems;
  return NULL;
}

/* The end of a non-empty view, in elements from the handle's start, into *out_end: one past its
   last element. INVALID_ARGUMENT when it passes 2^64 elements or bytes, or the handle's `size`
   bytes. */
static cubert_status check_reach(const char *op, const char *name, const cubert_tensor *t,
                                 uint64_t size, uint64_t *out_end) {
  uint64_t last = t->offset, end = 0;
  for (uint32_t d = 0; d < t->rank; ++d) {
    uint64_t step = 0;
    if (__builtin_mul_overflow(t->shape[d] - 1, t->strides[d], &step) ||
        __builtin_add_overflow(last, step, &last))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: %s reaches past 2^64 elements at axis %u (shape %llu, "
                                "stride %llu)",
                                op, name, d, (unsigned long long)t->shape[d],
                                (unsigned long long)t->strides[d]);
  }
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &end) || __builtin_mul_overflow(end, t->elem_size, &bytes))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s reaches element %llu (offset %llu, shape and strides) of "
                              "%llu bytes: past 2^64 bytes",
                              op, name, (unsigned long long)last, (unsigned long long)t->offset,
                              (unsigned long long)t->elem_size);
  if (bytes > size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s reaches byte %llu (offset %llu elements, shape and strides "
                              "of its view) past the end of its handle (%llu bytes)",
                              op, name, (unsigned long long)bytes, (unsigned long long)t->offset,
                              (unsigned long long)size);
  *out_end = end;
  return NULL;
}

cubert_status cubert_ops_check_tensor(const char *op, const char *name, const cubert_tensor *t,
                                      uint32_t allowed, bool is_output, cubert_ops_extent *out) {
  if (!t) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s is NULL", op, name);
  if (!t->handle)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s.handle is NULL", op, name);
  /* The handle's memory: its slice and where it starts in the slice's page. */
  cubert_handle_obj *ho = cubert_handle_acquire(t->handle);
  if (!ho)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                              "%s: %s.handle was released (or is not a handle)", op, name);
  const void *memory = ho->slice;
  const uint64_t size = ho->size, first = cubert_handle_binding(ho).offset;
  cubert_handle_release(t->handle);
  CUBERT_RETURN_IF_ERROR(check_element_type(op, name, t, allowed));
  /* Every element lies a multiple of elem_size after the handle's start: the start decides. */
  const uint64_t align = natural_alignment(t->elem_size);
  if (first % align != 0)
    return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                              "%s: %s.handle starts at byte offset %llu of its allocation, not a "
                              "multiple of the %llu-byte alignment of its %llu-byte elements; "
                              "make the view at an aligned offset or copy the data",
                              op, name, (unsigned long long)first, (unsigned long long)align,
                              (unsigned long long)t->elem_size);
  uint64_t elems = 0, end = 0;
  CUBERT_RETURN_IF_ERROR(count_elements(op, name, t, is_output, &elems));
  if (elems > 0) CUBERT_RETURN_IF_ERROR(check_reach(op, name, t, size, &end));
  if (out) {
    out->elems = elems;
    out->end_elems = end;
    out->memory = memory;
    out->first_byte = first + t->offset * t->elem_size;
    out->end_byte = first + end * t->elem_size;
  }
  return NULL;
}

int cubert_ops_memory_relation(const cubert_tensor *a, const cubert_ops_extent *ea,
                               const cubert_tensor *b, const cubert_ops_extent *eb) {
  if (ea->memory != eb->memory || ea->elems == 0 || eb->elems == 0) return 0;
  if (ea->first_byte == eb->first_byte && a->rank == b->rank && a->elem_size == b->elem_size &&
      memcmp(a->shape, b->shape, a->rank * sizeof(a->shape[0])) == 0 &&
      memcmp(a->strides, b->strides, a->rank * sizeof(a->strides[0])) == 0)
    return 1;
  return ea->first_byte < eb->end_byte && eb->first_byte < ea->end_byte ? 2 : 0;
}

cubert_status cubert_ops_check_device_dtype(cubert_client *client, const char *op, const char *name,
                                            cubert_dtype dtype) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s: the client is released or not a client",
                              op);
  uint32_t need = dtype == CUBERT_DTYPE_F64   ? CUBERT_FEATURE_FP64
                  : dtype == CUBERT_DTYPE_F16 ? CUBERT_FEATURE_FP16
                                              : 0;
  if (need && !(p->features & need))
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "%s: %s is %s, which device \"%s\" does not support (%s)", op, name,
                              cubert_dtype_name(dtype), p->name,
                              need == CUBERT_FEATURE_FP64 ? "no cl_khr_fp64" : "no cl_khr_fp16");
  return NULL;
}

cubert_status cubert_ops_check_same_shape(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b) {
  if (a->rank != b->rank)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s has rank %u but %s has rank %u",
                              op, name_a, a->rank, name_b, b->rank);
  for (uint32_t d = 0; d < a->rank; ++d)
    if (a->shape[d] != b->shape[d])
      return cubert_status_make(
          CUBERT_CODE_INVALID_ARGUMENT, "%s: %s.shape[%u] is %llu but %s.shape[%u] is %llu", op,
          name_a, d, (unsigned long long)a->shape[d], name_b, d, (unsigned long long)b->shape[d]);
  return NULL;
}

cubert_status cubert_ops_check_same_dtype(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b) {
  if (a->dtype != b->dtype)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s: %s is %s but %s is %s", op, name_a,
                              cubert_dtype_name(a->dtype), name_b, cubert_dtype_name(b->dtype));
  return NULL;
}

cubert_status cubert_ops_broadcast_strides(const char *op, const char *name,
                                           const cubert_tensor *in, const cubert_tensor *out,
                                           uint64_t strides[CUBERT_MAX_RANK]) {
  if (in->rank > out->rank)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: %s has rank %u, more than the output's %u: it cannot "
                              "broadcast to the output",
                              op, name, in->rank, out->rank);
  const uint32_t lead = out->rank - in->rank;
  for (uint32_t d = 0; d < out->rank; ++d) {
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    const uint32_t i = d - lead;
    if (in->shape[i] == out->shape[d]) {
      strides[d] = out->shape[d] == 1 ? 0 : in->strides[i];
    } else if (in->shape[i] == 1) {
      strides[d] = 0;
    } else {
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "%s: %s.shape[%u] is %llu, which broadcasts neither to the "
                                "output's shape[%u] = %llu nor from 1",
                                op, name, i, (unsigned long long)in->shape[i], d,
                                (unsigned long long)out->shape[d]);
    }
  }
  for (uint32_t d = out->rank; d < CUBERT_MAX_RANK; ++d) strides[d] = 0;
  return NULL;
}

cubert_tune_output cubert_ops_tune_output(const cubert_tensor *t, cubert_handle *handle,
                                          double tol_f32, double tol_f64) {
  uint64_t reach = 1;
  for (uint32_t d = 0; d < t->rank; ++d) {
    if (t->shape[d] == 0) reach = 0;
    if (reach) reach += (t->shape[d] - 1) * t->strides[d];
  }
  return (cubert_tune_output){.handle = handle,
                              .offset = t->offset * t->elem_size,
                              .count = reach,
                              .dtype = t->dtype,
                              .tolerance = t->dtype == CUBERT_DTYPE_F64 ? tol_f64 : tol_f32};
}

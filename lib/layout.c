/* cubert — memory layouts: strides of one tensor and packing of several into one allocation.

   Pitch rule (CUBERT_LAYOUT_OPTIMIZED, rank >= 2): rows of the last dimension start at a
   multiple of
       row_align = max(16, min(pitch_align, next_pow2(row_bytes)))
   and the pitch is row_bytes rounded up to row_align. Why this rule: aligned row starts give
   the device whole, coalesced transactions per row (the reason GPUs prefer pitched images),
   while capping the alignment at next_pow2(row_bytes) keeps narrow rows from being padded to
   a full pitch_align (a 20-byte row with pitch_align 256 gets a 32-byte pitch, not 256). For
   rows of at least 16 bytes the pitch is therefore always less than twice the row.

   Cases that stay contiguous: rank <= 1, pitch_align 0 or 1 or a power of two below 16 (no
   transaction is narrower than 16 bytes, so there is nothing to gain), an empty tensor, and an
   element size that is not a power of two (the pitch must be a whole number of elements since
   strides count elements; an lcm-sized pitch would waste more than it saves).

   Every multiplication is checked: a layout whose byte span does not fit in 64 bits is
   BUFFER_TOO_BIG, never a wrapped size. */
#include "cubert/layout.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/status.h"
#include "cubert/server.h"

static bool is_pow2(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

/* Smallest power of two >= v (v <= 2^63). */
static uint64_t next_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

static bool mul_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

static bool add_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out);
}

static cubert_status too_big(const char *label, const char *what) {
  cubert_status status =
      cubert_status_make(CUBERT_CODE_BUFFER_TOO_BIG, "%s: %s exceeds 2^64-1 bytes", label, what);
  return cubert_status_set_size(status, UINT64_MAX);
}

/* Row alignment in bytes for a pitched layout, or 0 when the tensor stays contiguous. */
static uint64_t row_alignment(const cubert_layout_desc *desc, uint64_t pitch_align,
                              uint64_t row_bytes) {
  if (desc->strategy != CUBERT_LAYOUT_OPTIMIZED || desc->rank < 2) return 0;
  if (pitch_align < 16 || row_bytes == 0 || !is_pow2(cubert_layout_elem_size(desc))) return 0;
  /* pitch_align is a power of two (<= 2^63): clamping first keeps next_pow2 in range. */
  uint64_t align = row_bytes >= pitch_align ? pitch_align : next_pow2(row_bytes);
  if (align < 16) align = 16;
  return align;
}

/* The descriptor's fields and pitch_align, checked before any layout is computed; `label`
   names the descriptor in messages. INVALID_ARGUMENT. */
static cubert_status check_desc(const cubert_layout_desc *desc, uint64_t pitch_align,
                                const char *label) {
  if (desc->rank > CUBERT_MAX_RANK) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s.rank is %u, maximum is %d", label,
                              desc->rank, CUBERT_MAX_RANK);
  }
  if ((unsigned)desc->dtype >= CUBERT_DTYPE_COUNT_) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s.dtype is %d, not a cubert_dtype (0..%d)", label, (int)desc->dtype,
                              CUBERT_DTYPE_COUNT_ - 1);
  }
  if (desc->dtype != CUBERT_DTYPE_NONE && desc->elem_size != 0 &&
      desc->elem_size != cubert_dtype_size(desc->dtype)) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s.elem_size is %llu but its dtype %s has %llu-byte elements", label,
                              (unsigned long long)desc->elem_size, cubert_dtype_name(desc->dtype),
                              (unsigned long long)cubert_dtype_size(desc->dtype));
  }
  const uint64_t elem_size = cubert_layout_elem_size(desc);
  if (elem_size == 0) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "%s.elem_size is 0 and it has no dtype",
                              label);
  }
  if (desc->strategy != CUBERT_LAYOUT_CONTIGUOUS && desc->strategy != CUBERT_LAYOUT_OPTIMIZED) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s.strategy is %d; expected CUBERT_LAYOUT_CONTIGUOUS (0) or "
                              "_OPTIMIZED (1)",
                              label, (int)desc->strategy);
  }
  if (pitch_align > 1 && !is_pow2(pitch_align)) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "pitch_align is %llu, expected 0, 1 or a power of two",
                              (unsigned long long)pitch_align);
  }
  return NULL;
}

/* Strides in elements, innermost first, into out->strides; `align` (0: none) pads each row of
   `row_bytes` to a pitch, which the dimension above the rows steps by. BUFFER_TOO_BIG when a
   stride does not fit 64 bits. */
static cubert_status compute_strides(const cubert_layout_desc *desc, uint64_t elem_size,
                                     uint64_t row_bytes, uint64_t align, bool empty,
                                     const char *label, cubert_layout *out) {
  const uint32_t rank = desc->rank;
  char what[96];
  uint64_t stride = 1;
  for (uint32_t k = rank; k-- > 0;) {
    out->strides[k] = stride;
    uint64_t next;
    if (align && k == rank - 1) {
      uint64_t pitch_bytes = (row_bytes + align - 1) / align * align;
      if (pitch_bytes < row_bytes) {
        snprintf(what, sizeof(what), "the pitch of a %llu-byte row", (unsigned long long)row_bytes);
        return too_big(label, what);
      }
      next = pitch_bytes / elem_size;
    } else if (mul_overflows(stride, desc->shape[k], &next)) {
      if (empty)
        next = 0; /* strides above an empty dim are never used to address anything */
      else {
        snprintf(what, sizeof(what), "the stride of dimension %u", k > 0 ? k - 1 : 0);
        return too_big(label, what);
      }
    }
    stride = next;
  }
  return NULL;
}

/* Byte span of a non-empty tensor into out->size: the offset of the last element plus one
   element, i.e. the padding after the last row is not counted. BUFFER_TOO_BIG past 2^64-1. */
static cubert_status compute_span(const cubert_layout_desc *desc, uint64_t elem_size,
                                  const char *label, cubert_layout *out) {
  char what[96];
  uint64_t last = 0;
  for (uint32_t k = 0; k < desc->rank; ++k) {
    uint64_t term;
    if (mul_overflows(desc->shape[k] - 1, out->strides[k], &term) ||
        add_overflows(last, term, &last)) {
      snprintf(what, sizeof(what), "the element span of shape dimension %u", k);
      return too_big(label, what);
    }
  }
  uint64_t span;
  if (add_overflows(last, 1, &span) || mul_overflows(span, elem_size, &out->size)) {
    snprintf(what, sizeof(what), "%llu elements of %llu bytes", (unsigned long long)last,
             (unsigned long long)elem_size);
    return too_big(label, what);
  }
  return NULL;
}

/* Validates and lays out one tensor; `label` names it in messages ("desc", "descs[2]"). */
static cubert_status compute_one(const cubert_layout_desc *desc, uint64_t pitch_align,
                                 const char *label, cubert_layout *out) {
  CUBERT_RETURN_IF_ERROR(check_desc(desc, pitch_align, label));
  const uint64_t elem_size = cubert_layout_elem_size(desc);
  memset(out, 0, sizeof(*out));
  out->rank = desc->rank;
  const uint32_t rank = desc->rank;

  bool empty = false;
  for (uint32_t i = 0; i < rank; ++i) empty = empty || desc->shape[i] == 0;

  uint64_t row_bytes = elem_size;
  if (rank > 0 && mul_overflows(desc->shape[rank - 1], elem_size, &row_bytes)) {
    char what[96];
    snprintf(what, sizeof(what), "a row of %llu elements of %llu bytes",
             (unsigned long long)desc->shape[rank - 1], (unsigned long long)elem_size);
    return too_big(label, what);
  }
  uint64_t align = empty ? 0 : row_alignment(desc, pitch_align, row_bytes);
  CUBERT_RETURN_IF_ERROR(compute_strides(desc, elem_size, row_bytes, align, empty, label, out));
  if (empty) {
    out->size = 0;
    return NULL;
  }
  return compute_span(desc, elem_size, label, out);
}

cubert_status cubert_layout_compute(const cubert_layout_desc *desc, uint64_t pitch_align,
                                    cubert_layout *out) {
  if (!desc || !out) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "layout_compute: %s is NULL",
                              !desc ? "desc" : "out");
  }
  return compute_one(desc, pitch_align, "desc", out);
}

cubert_status cubert_layout_plan(const cubert_layout_desc *descs, size_t count,
                                 uint64_t pitch_align, uint64_t alignment,
                                 cubert_layout *out_layouts, uint64_t *out_total_bytes) {
  if ((count > 0 && (!descs || !out_layouts)) || !out_total_bytes) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "layout_plan: descs, out_layouts (count %zu) and out_total_bytes "
                              "must not be NULL",
                              count);
  }
  if (!is_pow2(alignment)) {
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "layout_plan: alignment is %llu, expected a power of two",
                              (unsigned long long)alignment);
  }
  *out_total_bytes = 0;
  uint64_t end = 0;
  for (size_t i = 0; i < count; ++i) {
    char label[32];
    snprintf(label, sizeof(label), "descs[%zu]", i);
    CUBERT_RETURN_IF_ERROR(compute_one(&descs[i], pitch_align, label, &out_layouts[i]));
    uint64_t offset;
    if (add_overflows(end, alignment - 1, &offset)) {
      cubert_status status = cubert_status_make(
          CUBERT_CODE_BUFFER_TOO_BIG, "layout_plan: the offset of %s exceeds 2^64-1 bytes", label);
      return cubert_status_set_size(status, UINT64_MAX);
    }
    offset &= ~(alignment - 1);
    out_layouts[i].offset = offset;
    if (add_overflows(offset, out_layouts[i].size, &end)) {
      cubert_status status = cubert_status_make(
          CUBERT_CODE_BUFFER_TOO_BIG,
          "layout_plan: %s (%llu bytes at offset %llu) ends past 2^64-1 bytes", label,
          (unsigned long long)out_layouts[i].size, (unsigned long long)offset);
      return cubert_status_set_size(status, UINT64_MAX);
    }
  }
  *out_total_bytes = end;
  return NULL;
}

/* Dimensions of extent 1 may carry any stride (they are never stepped over), and a tensor with
   no elements has no padding; both count as contiguous, as in other tensor libraries. */
int cubert_layout_is_contiguous(uint32_t rank, const uint64_t *shape, const uint64_t *strides) {
  if (rank == 0) return 1;
  if (!shape || !strides || rank > CUBERT_MAX_RANK) return 0;
  for (uint32_t i = 0; i < rank; ++i) {
    if (shape[i] == 0) return 1;
  }
  uint64_t expected = 1;
  for (uint32_t k = rank; k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected) return 0;
    if (mul_overflows(expected, shape[k], &expected)) return k == 0;
  }
  return 1;
}

/* ---- element types ------------------------------------------------------------------------- */

uint64_t cubert_dtype_size(cubert_dtype dtype) {
  switch (dtype) {
    case CUBERT_DTYPE_F32:
    case CUBERT_DTYPE_I32:
    case CUBERT_DTYPE_U32:
      return 4;
    case CUBERT_DTYPE_F64:
      return 8;
    case CUBERT_DTYPE_F16:
      return 2;
    default:
      return 0;
  }
}

const char *cubert_dtype_name(cubert_dtype dtype) {
  switch (dtype) {
    case CUBERT_DTYPE_NONE:
      return "none";
    case CUBERT_DTYPE_F32:
      return "f32";
    case CUBERT_DTYPE_F64:
      return "f64";
    case CUBERT_DTYPE_I32:
      return "i32";
    case CUBERT_DTYPE_U32:
      return "u32";
    case CUBERT_DTYPE_F16:
      return "f16";
    default:
      return "invalid";
  }
}

uint64_t cubert_layout_elem_size(const cubert_layout_desc *desc) {
  if (!desc) return 0;
  return desc->elem_size ? desc->elem_size : cubert_dtype_size(desc->dtype);
}

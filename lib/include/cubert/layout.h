/** @file
   cubert — memory layout descriptors: strides of a tensor and packing of several tensors into
   one allocation. Pure functions; sizes are checked for overflow. */
#ifndef CUBERT_LAYOUT_H
#define CUBERT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** The most dimensions a tensor (layout, copy descriptor, operand) may have. */
#define CUBERT_MAX_RANK 8

/** Element types of typed tensors (the kernel library's operations, cubert/ops.h, need one).
   NONE (the zero value) is untyped bytes: only elem_size says how big an element is. */
typedef enum cubert_dtype {
  CUBERT_DTYPE_NONE = 0, /**< untyped bytes (elem_size gives the size) */
  CUBERT_DTYPE_F32 = 1,  /**< IEEE-754 binary32 */
  CUBERT_DTYPE_F64 = 2,  /**< binary64: devices with CUBERT_FEATURE_FP64 */
  CUBERT_DTYPE_I32 = 3,  /**< two's complement */
  CUBERT_DTYPE_U32 = 4,  /**< unsigned 32-bit integer */
  CUBERT_DTYPE_F16 = 5,  /**< binary16, storage only (cast to and from it); CUBERT_FEATURE_FP16 */
  CUBERT_DTYPE_COUNT_
} cubert_dtype;
/** Bytes per element (0 for NONE and values out of the enum). Pure; thread-safe. */
CUBERT_API uint64_t cubert_dtype_size(cubert_dtype dtype);
/** "f32", "f64", "i32", "u32", "f16", "none", or "invalid" out of the enum. Static strings. */
CUBERT_API const char *cubert_dtype_name(cubert_dtype dtype);

/** How a tensor is laid out in its allocation. */
typedef enum cubert_layout_strategy {
  CUBERT_LAYOUT_CONTIGUOUS = 0, /**< row-major, no padding */
  CUBERT_LAYOUT_OPTIMIZED = 1,  /**< pitched rows where the device prefers it */
} cubert_layout_strategy;

/** A tensor to allocate. shape is in elements, elem_size in bytes. A desc may give a dtype
   instead of (or with) elem_size: elem_size 0 means the dtype's size; both set must agree. */
typedef struct cubert_layout_desc {
  cubert_layout_strategy strategy; /**< contiguous or pitched */
  uint32_t rank;                   /**< 0..CUBERT_MAX_RANK; rank 0 is a scalar */
  uint64_t shape[CUBERT_MAX_RANK]; /**< elements */
  uint64_t elem_size;              /**< bytes; 0: the dtype's size */
  cubert_dtype dtype; /**< NONE (zero): untyped; the tensors created from the desc carry it */
} cubert_layout_desc;
/** The element size `desc` stands for: elem_size, or its dtype's size when elem_size is 0 (0 for
   NULL or when neither is set). */
CUBERT_API uint64_t cubert_layout_elem_size(const cubert_layout_desc *desc);

/** Where one tensor lives inside an allocation. Strides are in elements. */
typedef struct cubert_layout {
  uint64_t offset; /**< bytes from the start of the allocation */
  uint64_t size;   /**< bytes spanned by the tensor, padding of the last row excluded */
  uint32_t rank;   /**< as the desc's */
  uint64_t strides[CUBERT_MAX_RANK]; /**< elements */
} cubert_layout;

/** Computes the strides and byte span of one tensor. `pitch_align` is the row alignment in
   bytes used by CUBERT_LAYOUT_OPTIMIZED (a power of two, >= 16; 0 or 1 means contiguous).
   Optimized layouts of rank >= 2 are pitched: each row (last dimension) starts at a multiple
   of row_align = max(16, min(pitch_align, next_pow2(row_bytes))), i.e. the pitch is the row
   size in bytes rounded up to row_align, so padding never reaches the row size for rows of
   16 bytes or more. Rank <= 1, empty tensors, element sizes that are not a power of two and
   pitch_align below 16 stay contiguous. Errors: INVALID_ARGUMENT (rank, no elem size nor
   dtype, an elem size that disagrees with the dtype, a strategy or dtype out of the enum,
   alignment not a power of two), BUFFER_TOO_BIG on overflow. */
CUBERT_API cubert_status cubert_layout_compute(const cubert_layout_desc *desc, uint64_t pitch_align,
                                               cubert_layout *out);
/** Packs `count` tensors into one allocation, each starting at a multiple of `alignment`.
   Fills out_layouts[count] and *out_total_bytes. */
CUBERT_API cubert_status cubert_layout_plan(const cubert_layout_desc *descs, size_t count,
                                            uint64_t pitch_align, uint64_t alignment,
                                            cubert_layout *out_layouts, uint64_t *out_total_bytes);
/** True when the strides describe a row-major tensor with no padding. */
CUBERT_API int cubert_layout_is_contiguous(uint32_t rank, const uint64_t *shape,
                                           const uint64_t *strides);

CUBERT_EXTERN_C_END

#endif /* CUBERT_LAYOUT_H */

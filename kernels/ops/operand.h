/* cubert — the operand checks every operation of cubert/ops.h starts with (operand.c): checks of
   the client, of each tensor operand and of pairs of operands, with messages that name the
   operation, the operand and the axis, and NumPy broadcasting. */
#ifndef CUBERT_OPS_OPERAND_H
#define CUBERT_OPS_OPERAND_H

#include <stdbool.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/status.h"
#include "cubert/tune.h"

/* Bit of a dtype in an "allowed types" mask. */
#define CUBERT_OPS_DTYPE_BIT(d) (1u << (unsigned)(d))
#define CUBERT_OPS_FLOATS \
  (CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F32) | CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F64))

/* What cubert_ops_check_tensor learned about a valid operand. */
typedef struct cubert_ops_extent {
  uint64_t elems;     /* product of the shape */
  uint64_t end_elems; /* one past the furthest element reached, offset included (0 if empty) */
  const void *memory; /* the allocation (slice) behind the handle: views of one share it */
  uint64_t first_byte, end_byte; /* the bytes the view spans within that allocation's page */
} cubert_ops_extent;

/* The result region of output `t` for the tuner's checks (cubert_tune_set.output,
   CUBERT_AUTOTUNE_CHECKS): its elements from the first to the furthest it reaches, in `handle`
   (t's own, or a scratch buffer laid out as t's), with tolerance tol_f32 or tol_f64 by dtype
   (ignored for the exact dtypes). */
cubert_tune_output cubert_ops_tune_output(const cubert_tensor *t, cubert_handle *handle,
                                          double tol_f32, double tol_f64);

/* INVALID_ARGUMENT "<op>: client is NULL", NOT_FOUND for a released client. */
cubert_status cubert_ops_check_client(const cubert_client *client, const char *op);

/* Checks one operand of `op` (its name in messages, e.g. "matmul") called `name` ("a", "out"):
   non-NULL with a live handle (NOT_FOUND when released) that starts at a multiple of the
   element's alignment (UNSUPPORTED_IO_OPERATION with the offset and the alignment otherwise),
   rank <= CUBERT_MAX_RANK, a dtype in `allowed` (a mask of
   CUBERT_OPS_DTYPE_BIT; 0 accepts any dtype, NONE included), elem_size equal to the dtype's
   size, shape * strides + offset inside the handle without overflow, and for an output
   (`is_output`) no zero stride over a dimension longer than 1. */
cubert_status cubert_ops_check_tensor(const char *op, const char *name, const cubert_tensor *t,
                                      uint32_t allowed, bool is_output, cubert_ops_extent *out);

/* How the memory of two checked operands relates, by their bytes, whatever handles reach them:
   0 disjoint, 1 the very same view (same first byte, shape, strides and element size), 2 they
   overlap otherwise. */
int cubert_ops_memory_relation(const cubert_tensor *a, const cubert_ops_extent *ea,
                               const cubert_tensor *b, const cubert_ops_extent *eb);

/* UNAVAILABLE when the client's device cannot hold `dtype` (F64 without CUBERT_FEATURE_FP64, F16
   without CUBERT_FEATURE_FP16); NOT_FOUND for a released client. */
cubert_status cubert_ops_check_device_dtype(cubert_client *client, const char *op, const char *name,
                                            cubert_dtype dtype);

/* INVALID_ARGUMENT unless a and b have one rank and shape, naming the first axis that differs. */
cubert_status cubert_ops_check_same_shape(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b);

/* INVALID_ARGUMENT unless a and b have one dtype. */
cubert_status cubert_ops_check_same_dtype(const char *op, const char *name_a,
                                          const cubert_tensor *a, const char *name_b,
                                          const cubert_tensor *b);

/* NumPy broadcasting of `in` (called `name`) to `out`'s shape: in.rank <= out.rank, and aligned
   at the last axis every in dimension equals out's or is 1. Writes out.rank strides for `in`
   into strides (0 on broadcast and missing axes). INVALID_ARGUMENT naming the axis otherwise. */
cubert_status cubert_ops_broadcast_strides(const char *op, const char *name,
                                           const cubert_tensor *in, const cubert_tensor *out,
                                           uint64_t strides[CUBERT_MAX_RANK]);

#endif /* CUBERT_OPS_OPERAND_H */

/** @file
   cubert — operations on tensors: the kernel library's host API.

   One function per operation. Each takes tensor views (cubert_tensor: handle, shape, strides,
   offset and element type), checks them, picks a kernel and its launch geometry (through
   autotune, cubert/tune.h, where the choice matters) and queues the work on the calling stream
   of `client`. The call returns once the work is queued; a later read, sync or launch on the
   stream sees the result (stream order, as for cubert_client_launch). docs/OPS.md lists every
   operation with its types and limits.

   Views. An operation never takes or drops a reference: a view may borrow its handle (build one
   with cubert_tensor_permute below, or fill a struct by hand). Element (i0, .., ir-1) of a view
   lives at element `offset + sum(i_d * strides[d])` of its handle. Any strides are accepted
   (row-major, column-major, pitched, transposed, sliced); a stride of 0 broadcasts a dimension
   and is allowed for inputs only. Outputs must not overlap an input unless the operation says
   so (elementwise operations may write in place: out == a with equal strides).

   Element types (cubert_dtype, cubert/layout.h): every operand needs one; an untyped tensor
   (CUBERT_DTYPE_NONE) is INVALID_ARGUMENT naming the operand. F64 needs a device with
   CUBERT_FEATURE_FP64 and F16 one with CUBERT_FEATURE_FP16 (else UNAVAILABLE naming the device).

   Errors (all before anything is queued; no operand is touched): INVALID_ARGUMENT naming the
   operand, the axis and the mismatch ("matmul: a.shape[1] is 7 but b.shape[0] is 8"), a view
   reaching past its handle, an output stride of 0 over a dimension longer than 1, a rank above
   CUBERT_MAX_RANK, an element type the operation does not take; NOT_FOUND for a released
   handle; UNAVAILABLE as above; and the launch's own errors (cubert_client_launch). An empty
   tensor (a dimension of 0) is a no-op that still checks its arguments.

   Thread-safety: as cubert_client_launch (any thread; each thread has its own stream). */
#ifndef CUBERT_OPS_H
#define CUBERT_OPS_H

#include <stdint.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/layout.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/* ---- views ---------------------------------------------------------------------------------- */

/** *out = `in` with its axes permuted: out.shape[i] = in.shape[axes[i]] and likewise strides. No
   data moves and no reference is taken (out borrows in's handle). `axes` holds in.rank distinct
   values below in.rank. INVALID_ARGUMENT otherwise (naming the axis). */
CUBERT_API cubert_status(cubert_tensor_permute)(const cubert_tensor *in, const uint32_t *axes,
                                                cubert_tensor *out);

/* ---- layout changes ------------------------------------------------------------------------- */

/** out = in, element by element, for any strides on both sides (materialises a permuted,
   transposed, sliced or broadcast view). Same shape and dtype (any dtype, NONE included when
   elem_sizes match). The bits move unchanged, as 1-, 2-, 4- or 8-byte words, so F64 and F16
   need no device feature here. The kernel's cube dim is chosen by autotune. */
CUBERT_API cubert_status(cubert_op_copy)(cubert_client *client, const cubert_tensor *in,
                                         const cubert_tensor *out);
/** out = in with its axes permuted (out.shape[i] == in.shape[axes[i]]): cubert_tensor_permute
   then cubert_op_copy; a 2-D transpose goes through shared-memory tiles so both sides are read
   and written in rows. */
CUBERT_API cubert_status(cubert_op_permute)(cubert_client *client, const cubert_tensor *in,
                                            const uint32_t *axes, const cubert_tensor *out);

/** out = (out.dtype) in for in, out in {F32, F64, I32, U32, F16}. Same shape. Float to integer
   rounds toward zero and saturates (NaN gives 0), as OpenCL's convert_<type>_sat_rtz; integer
   to float rounds to nearest even; f32 and f64 to f16 round once to nearest even (overflow
   gives infinity, tiny values f16 subnormals or zero); I32 <-> U32 keeps the bits (modulo
   2^32). Every device gives the same bits. F16 is converted with integer arithmetic, so it
   needs no CUBERT_FEATURE_FP16 here (PoCL does not report it); F64 needs CUBERT_FEATURE_FP64.
   in == out's dtype is a copy. */
CUBERT_API cubert_status(cubert_op_cast)(cubert_client *client, const cubert_tensor *in,
                                         const cubert_tensor *out);

/* ---- elementwise ---------------------------------------------------------------------------- */

/** Elementwise functions of one operand (cubert_op_unary), with the dtypes each takes. */
typedef enum cubert_unary_op {
  CUBERT_UNARY_EXP = 0,  /**< F32, F64 */
  CUBERT_UNARY_LOG = 1,  /**< F32, F64 */
  CUBERT_UNARY_SQRT = 2, /**< F32, F64 */
  CUBERT_UNARY_ABS = 3,  /**< F32, F64, I32 (abs(INT32_MIN) wraps to INT32_MIN) */
  CUBERT_UNARY_NEG = 4,  /**< F32, F64, I32 (wraps) */
  CUBERT_UNARY_RELU = 5, /**< F32, F64, I32: max(x, 0) */
  CUBERT_UNARY_TANH = 6, /**< F32, F64 */
  CUBERT_UNARY_COUNT_
} cubert_unary_op;

/** out = op(in), in and out of one dtype; in broadcasts to out's shape (NumPy rules, below).
   Float results are within OpenCL 1.2's bounds (exp, log, sqrt 3 ulp; tanh 5 ulp; abs, neg,
   relu exact); relu is x < 0 ? 0 : x, so NaN and -0.0 pass through. */
CUBERT_API cubert_status(cubert_op_unary)(cubert_client *client, cubert_unary_op op,
                                          const cubert_tensor *in, const cubert_tensor *out);

/** Elementwise functions of two operands (cubert_op_binary), with the dtypes each takes. */
typedef enum cubert_binary_op {
  CUBERT_BINARY_ADD = 0, /**< F32, F64, I32, U32 (integers wrap) */
  CUBERT_BINARY_SUB = 1, /**< F32, F64, I32, U32 (integers wrap) */
  CUBERT_BINARY_MUL = 2, /**< F32, F64, I32, U32 (integers wrap) */
  CUBERT_BINARY_DIV = 3, /**< F32, F64, I32, U32 (integers: toward zero; x / 0 gives 0, and
                            INT32_MIN / -1 gives INT32_MIN, where C would be undefined) */
  CUBERT_BINARY_MIN = 4, /**< F32, F64, I32, U32 */
  CUBERT_BINARY_MAX = 5, /**< F32, F64, I32, U32 */
  CUBERT_BINARY_POW = 6, /**< F32, F64 */
  CUBERT_BINARY_COUNT_
} cubert_binary_op;

/** out = a op b, all three of one dtype, with NumPy broadcasting: shapes are aligned at their
   last axis; each of a's and b's dimensions equals out's or is 1 (or is missing, a lower rank);
   out's shape must be the broadcast shape. INVALID_ARGUMENT names the operand and the axis of a
   mismatch. out may be a or b (same strides) for an in-place update. Floats: add, sub, mul,
   min, max exact, div within 3 ulp (OpenCL 1.2 allows 2.5 in f32), pow within 16 ulp; min and
   max are fmin/fmax (a NaN operand gives the other). */
CUBERT_API cubert_status(cubert_op_binary)(cubert_client *client, cubert_binary_op op,
                                           const cubert_tensor *a, const cubert_tensor *b,
                                           const cubert_tensor *out);

/* ---- reductions ----------------------------------------------------------------------------- */

/** Reductions (cubert_op_reduce; SUM, MAX and MIN also for cubert/comm.h), with their
    dtypes. */
typedef enum cubert_reduce_op {
  CUBERT_REDUCE_SUM = 0,    /**< F32 -> F32, I32 -> I32 (wraps) */
  CUBERT_REDUCE_MAX = 1,    /**< F32 -> F32, I32 -> I32; NaN propagates */
  CUBERT_REDUCE_MIN = 2,    /**< F32 -> F32, I32 -> I32; NaN propagates */
  CUBERT_REDUCE_MEAN = 3,   /**< F32 -> F32, I32 -> F32 (the sum in 64 bits, then divided) */
  CUBERT_REDUCE_ARGMAX = 4, /**< F32, I32 -> I32: index along the axis; ties and NaN: lowest */
  CUBERT_REDUCE_ARGMIN = 5, /**< index of the first maximum / minimum on every device */
  CUBERT_REDUCE_COUNT_
} cubert_reduce_op;

/** Reduce along every axis at once (a full reduction): pass as `axis`. */
#define CUBERT_AXIS_ALL UINT32_MAX

/** out = op over `axis` of in. out's shape is in's with the axis removed (keep_dim 0) or set to 1
   (keep_dim 1); with CUBERT_AXIS_ALL, out has rank 0 (or in's rank with every dimension 1).
   Reducing an empty axis: SUM gives 0, MEAN NaN, MAX/MIN/ARGMAX/ARGMIN INVALID_ARGUMENT.
   Sums add in a tree, so f32 rounding differs from a sequential sum. */
CUBERT_API cubert_status(cubert_op_reduce)(cubert_client *client, cubert_reduce_op op,
                                           const cubert_tensor *in, uint32_t axis, int keep_dim,
                                           const cubert_tensor *out);

/** out = softmax of in along its last axis: exp(x - max) / sum(exp(x - max)) per row (the max
   subtracted first, so large inputs do not overflow). F32 or F64; in and out of one shape and
   dtype; out may be in. A row of -inf gives NaN, as the formula does. */
CUBERT_API cubert_status(cubert_op_softmax)(cubert_client *client, const cubert_tensor *in,
                                            const cubert_tensor *out);

/* ---- matrix multiply ------------------------------------------------------------------------ */

/** c = alpha * a · b + beta * c, for rank-2 operands (a M x K, b K x N, c M x N) or a rank-3 c
   (batch x M x N) with a and b each rank 3 (batch x M x K, batch x K x N) or rank 2; an a or b
   whose batch is 1, has stride 0, or which has rank 2 is shared by every batch. F32, or F64
   where the device has CUBERT_FEATURE_FP64 (alpha and beta are rounded to the dtype); all three
   of one dtype. Row-major, column-major, transposed and pitched operands are views: op(A) = A^T
   is a with its two last strides swapped (cubert_tensor_permute), and any strides and offsets
   work. beta == 0 never reads c (NaN in c does not propagate). c must not overlap a or b (not
   detected). Any M, N, K >= 0 (M, N and the batch below 2^32); K == 0 gives beta * c; M, N or
   batch 0 is a no-op. beta != 0 takes a temporary of batch x M x N elements on the device (the
   product, then c = t + beta * c in a second pass).
   The kernel and its tile shape are chosen by autotune (cubert/tune.h, set "matmul_f32" /
   "matmul_f64") per device and key: M, N, K and batch anchored to powers of two, the layout
   class of a and b (inner stride 1, outer stride 1, other) and the dtype.
   Accuracy: every element is within (K + 2) * u * (|alpha| * sum_k |a_ik * b_kj| + |beta * c_ij|)
   of the exact alpha * sum_k a_ik * b_kj + beta * c_ij, with u = 2^-22 for f32 and 2^-50 for
   f64 (the sum is accumulated in the dtype, sequentially along K per element, fused or not
   depending on the device; tests/unit/internals/ops_matmul.c checks this bound). */
CUBERT_API cubert_status(cubert_op_matmul)(cubert_client *client, double alpha,
                                           const cubert_tensor *a, const cubert_tensor *b,
                                           double beta, const cubert_tensor *c);

/* Type checks on the tensor arguments in C (CUBERT_TENSOR_ARG_, cubert/client.h): passing a
   cubert_copy_desc or another pointer where a tensor goes is a compile error. The macros take
   `...` (CUBERT_TYPED_CALL_), so every argument a function call takes compiles, compound
   literals included: cubert_op_permute(client, &a, (uint32_t[2]){1, 0}, &out). The functions
   stay callable as (cubert_op_copy)(...). (Not in the API reference: the functions are.) */
/// @cond CUBERT_TYPE_CHECK_MACROS
#ifndef __cplusplus
#define cubert_tensor_permute(...) \
  CUBERT_TYPED_CALL_(3, CUBERT_TENSOR_PERMUTE_, (cubert_tensor_permute), __VA_ARGS__)
#define CUBERT_TENSOR_PERMUTE_(in, axes, out) \
  (cubert_tensor_permute)(CUBERT_TENSOR_ARG_(in), (axes), (out))
#define cubert_op_copy(...) CUBERT_TYPED_CALL_(3, CUBERT_OP_COPY_, (cubert_op_copy), __VA_ARGS__)
#define CUBERT_OP_COPY_(client, in, out) \
  (cubert_op_copy)((client), CUBERT_TENSOR_ARG_(in), CUBERT_TENSOR_ARG_(out))
#define cubert_op_permute(...) \
  CUBERT_TYPED_CALL_(4, CUBERT_OP_PERMUTE_, (cubert_op_permute), __VA_ARGS__)
#define CUBERT_OP_PERMUTE_(client, in, axes, out) \
  (cubert_op_permute)((client), CUBERT_TENSOR_ARG_(in), (axes), CUBERT_TENSOR_ARG_(out))
#define cubert_op_cast(...) CUBERT_TYPED_CALL_(3, CUBERT_OP_CAST_, (cubert_op_cast), __VA_ARGS__)
#define CUBERT_OP_CAST_(client, in, out) \
  (cubert_op_cast)((client), CUBERT_TENSOR_ARG_(in), CUBERT_TENSOR_ARG_(out))
#define cubert_op_unary(...) CUBERT_TYPED_CALL_(4, CUBERT_OP_UNARY_, (cubert_op_unary), __VA_ARGS__)
#define CUBERT_OP_UNARY_(client, op, in, out) \
  (cubert_op_unary)((client), (op), CUBERT_TENSOR_ARG_(in), CUBERT_TENSOR_ARG_(out))
#define cubert_op_binary(...) \
  CUBERT_TYPED_CALL_(5, CUBERT_OP_BINARY_, (cubert_op_binary), __VA_ARGS__)
#define CUBERT_OP_BINARY_(client, op, a, b, out)                                   \
  (cubert_op_binary)((client), (op), CUBERT_TENSOR_ARG_(a), CUBERT_TENSOR_ARG_(b), \
                     CUBERT_TENSOR_ARG_(out))
#define cubert_op_reduce(...) \
  CUBERT_TYPED_CALL_(6, CUBERT_OP_REDUCE_, (cubert_op_reduce), __VA_ARGS__)
#define CUBERT_OP_REDUCE_(client, op, in, axis, keep_dim, out)                   \
  (cubert_op_reduce)((client), (op), CUBERT_TENSOR_ARG_(in), (axis), (keep_dim), \
                     CUBERT_TENSOR_ARG_(out))
#define cubert_op_softmax(...) \
  CUBERT_TYPED_CALL_(3, CUBERT_OP_SOFTMAX_, (cubert_op_softmax), __VA_ARGS__)
#define CUBERT_OP_SOFTMAX_(client, in, out) \
  (cubert_op_softmax)((client), CUBERT_TENSOR_ARG_(in), CUBERT_TENSOR_ARG_(out))
#define cubert_op_matmul(...) \
  CUBERT_TYPED_CALL_(6, CUBERT_OP_MATMUL_, (cubert_op_matmul), __VA_ARGS__)
#define CUBERT_OP_MATMUL_(client, alpha, a, b, beta, c)                                       \
  (cubert_op_matmul)((client), (alpha), CUBERT_TENSOR_ARG_(a), CUBERT_TENSOR_ARG_(b), (beta), \
                     CUBERT_TENSOR_ARG_(c))
#endif
/// @endcond

CUBERT_EXTERN_C_END

#endif /* CUBERT_OPS_H */

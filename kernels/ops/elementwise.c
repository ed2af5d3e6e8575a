/* cubert_op_unary and cubert_op_binary, and the elementwise launch plan that cast.c shares
   (elementwise.h).

   Every call broadcasts its inputs to the output's shape, collapses the axes that are
   contiguous in every operand (cubert_strided_collapse_axes) and then picks one of three kernels:
   when every operand is one dense run from the start of its handle (no broadcast, no gaps, no
   offset) the operation's own "_c" kernel,
   a plain loop the CPU vectorises; when at most two axes are left (a scalar, row or column
   broadcast, pitched or sliced rows) and rows are long enough, the operation's "_r" kernel,
   one cube per chunk of a row, whose units need no division and whose loops vectorise for
   strides 0 and 1; otherwise the type's "_nd" kernel, which computes each element's offsets
   from the collapsed shape and per-operand strides. The f64 kernels are
   separate definitions that only fp64 devices build, so f64 is checked against the device
   first. */
#include "ops/elementwise.h"

#include <stdio.h>
#include <string.h>

#include "cubert/geometry.h"
#include "cubert/ops.h"
#include "ops/operand.h"
#include "ops/ops_kernels.h"
#include "strided.h"

cubert_status cubert_ops_plan_make(const char *op, const cubert_tensor *out,
                                   const cubert_tensor *const *ins, const char *const *names,
                                   uint32_t count, cubert_strided_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->count = count + 1;
  plan->rank = out->rank;
  plan->n = 1;
  for (uint32_t d = 0; d < out->rank; ++d) {
    plan->shape[d] = out->shape[d];
    plan->n *= out->shape[d]; /* checked for overflow by cubert_ops_check_tensor */
    plan->strides[0][d] = out->strides[d];
  }
  plan->offsets[0] = out->offset;
  for (uint32_t i = 0; i < count; ++i) {
    CUBERT_RETURN_IF_ERROR(
        cubert_ops_broadcast_strides(op, names[i], ins[i], out, plan->strides[i + 1]));
    plan->offsets[i + 1] = ins[i]->offset;
  }
  if (plan->n == 0) return NULL;
  cubert_strided_collapse_axes(&plan->rank, plan->shape, plan->strides, plan->count);
  return NULL;
}

/* ---- kernel tables ----------------------------------------------------------------------------
 */

enum { T_F32, T_F64, T_I32, T_U32, T_COUNT };

static int type_index(cubert_dtype d) {
  switch (d) {
    case CUBERT_DTYPE_F32:
      return T_F32;
    case CUBERT_DTYPE_F64:
      return T_F64;
    case CUBERT_DTYPE_I32:
      return T_I32;
    case CUBERT_DTYPE_U32:
      return T_U32;
    default:
      return -1;
  }
}

#define FLOAT_BINARY_(s)                                                      \
  {                                                                           \
    &cubert_kernel_binary_add_##s##_c, &cubert_kernel_binary_sub_##s##_c,     \
        &cubert_kernel_binary_mul_##s##_c, &cubert_kernel_binary_div_##s##_c, \
        &cubert_kernel_binary_min_##s##_c, &cubert_kernel_binary_max_##s##_c, \
        &cubert_kernel_binary_pow_##s##_c                                     \
  }
#define INT_BINARY_(s)                                                             \
  {                                                                                \
    &cubert_kernel_binary_add_##s##_c, &cubert_kernel_binary_sub_##s##_c,          \
        &cubert_kernel_binary_mul_##s##_c, &cubert_kernel_binary_div_##s##_c,      \
        &cubert_kernel_binary_min_##s##_c, &cubert_kernel_binary_max_##s##_c, NULL \
  }
static const cubert_kernel_def *const binary_c[T_COUNT][CUBERT_BINARY_COUNT_] = {
    FLOAT_BINARY_(f32), FLOAT_BINARY_(f64), INT_BINARY_(i32), INT_BINARY_(u32)};
#define FLOAT_BINARY_R_(s)                                                    \
  {                                                                           \
    &cubert_kernel_binary_add_##s##_r, &cubert_kernel_binary_sub_##s##_r,     \
        &cubert_kernel_binary_mul_##s##_r, &cubert_kernel_binary_div_##s##_r, \
        &cubert_kernel_binary_min_##s##_r, &cubert_kernel_binary_max_##s##_r, \
        &cubert_kernel_binary_pow_##s##_r                                     \
  }
#define INT_BINARY_R_(s)                                                           \
  {                                                                                \
    &cubert_kernel_binary_add_##s##_r, &cubert_kernel_binary_sub_##s##_r,          \
        &cubert_kernel_binary_mul_##s##_r, &cubert_kernel_binary_div_##s##_r,      \
        &cubert_kernel_binary_min_##s##_r, &cubert_kernel_binary_max_##s##_r, NULL \
  }
static const cubert_kernel_def *const binary_r[T_COUNT][CUBERT_BINARY_COUNT_] = {
    FLOAT_BINARY_R_(f32), FLOAT_BINARY_R_(f64), INT_BINARY_R_(i32), INT_BINARY_R_(u32)};
static const cubert_kernel_def *const binary_nd[T_COUNT] = {
    &cubert_kernel_binary_f32_nd, &cubert_kernel_binary_f64_nd, &cubert_kernel_binary_i32_nd,
    &cubert_kernel_binary_u32_nd};

#define FLOAT_UNARY_(s)                                                      \
  {                                                                          \
    &cubert_kernel_unary_exp_##s##_c, &cubert_kernel_unary_log_##s##_c,      \
        &cubert_kernel_unary_sqrt_##s##_c, &cubert_kernel_unary_abs_##s##_c, \
        &cubert_kernel_unary_neg_##s##_c, &cubert_kernel_unary_relu_##s##_c, \
        &cubert_kernel_unary_tanh_##s##_c                                    \
  }
static const cubert_kernel_def *const unary_c[T_COUNT][CUBERT_UNARY_COUNT_] = {
    FLOAT_UNARY_(f32),
    FLOAT_UNARY_(f64),
    {NULL, NULL, NULL, &cubert_kernel_unary_abs_i32_c, &cubert_kernel_unary_neg_i32_c,
     &cubert_kernel_unary_relu_i32_c, NULL},
    {NULL}};
#define FLOAT_UNARY_R_(s)                                                    \
  {                                                                          \
    &cubert_kernel_unary_exp_##s##_r, &cubert_kernel_unary_log_##s##_r,      \
        &cubert_kernel_unary_sqrt_##s##_r, &cubert_kernel_unary_abs_##s##_r, \
        &cubert_kernel_unary_neg_##s##_r, &cubert_kernel_unary_relu_##s##_r, \
        &cubert_kernel_unary_tanh_##s##_r                                    \
  }
static const cubert_kernel_def *const unary_r[T_COUNT][CUBERT_UNARY_COUNT_] = {
    FLOAT_UNARY_R_(f32),
    FLOAT_UNARY_R_(f64),
    {NULL, NULL, NULL, &cubert_kernel_unary_abs_i32_r, &cubert_kernel_unary_neg_i32_r,
     &cubert_kernel_unary_relu_i32_r, NULL},
    {NULL}};
static const cubert_kernel_def *const unary_nd[T_COUNT] = {
    &cubert_kernel_unary_f32_nd, &cubert_kernel_unary_f64_nd, &cubert_kernel_unary_i32_nd, NULL};

static const char *const binary_names[CUBERT_BINARY_COUNT_] = {"add", "sub", "mul", "div",
                                                               "min", "max", "pow"};
static const char *const unary_names[CUBERT_UNARY_COUNT_] = {"exp", "log",  "sqrt", "abs",
                                                             "neg", "relu", "tanh"};

/* The dtypes an operation takes, as a cubert_ops_check_tensor mask. */
static uint32_t allowed_mask(const cubert_kernel_def *const table[][CUBERT_BINARY_COUNT_],
                             uint32_t op) {
  static const cubert_dtype types[T_COUNT] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_F64, CUBERT_DTYPE_I32,
                                              CUBERT_DTYPE_U32};
  uint32_t mask = 0;
  for (int t = 0; t < T_COUNT; ++t)
    if (table[t][op]) mask |= CUBERT_OPS_DTYPE_BIT(types[t]);
  return mask;
}

cubert_status(cubert_op_binary)(cubert_client *client, cubert_binary_op op, const cubert_tensor *a,
                                const cubert_tensor *b, const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, "binary"));
  if ((unsigned)op >= CUBERT_BINARY_COUNT_)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "binary: op is %d, not a cubert_binary_op (0..%d)", (int)op,
                              (int)CUBERT_BINARY_COUNT_ - 1);
  char name[16];
  snprintf(name, sizeof name, "binary %s", binary_names[op]);
  const uint32_t allowed = allowed_mask(binary_c, op);
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(name, "a", a, allowed, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(name, "b", b, allowed, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(name, "out", out, allowed, true, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(name, "a", a, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(name, "b", b, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, name, "out", out->dtype));
  const cubert_tensor *ins[2] = {a, b};
  const char *names[2] = {"a", "b"};
  cubert_strided_plan plan;
  CUBERT_RETURN_IF_ERROR(cubert_ops_plan_make(name, out, ins, names, 2, &plan));
  const int t = type_index(out->dtype);
  const cubert_strided_kernels kernels = {binary_c[t][op], binary_r[t][op], binary_nd[t]};
  cubert_handle *handles[3] = {out->handle, a->handle, b->handle};
  return cubert_strided_plan_launch(client, &plan, &kernels, (uint32_t)op, handles);
}

cubert_status(cubert_op_unary)(cubert_client *client, cubert_unary_op op, const cubert_tensor *in,
                               const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, "unary"));
  if ((unsigned)op >= CUBERT_UNARY_COUNT_)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "unary: op is %d, not a cubert_unary_op (0..%d)", (int)op,
                              (int)CUBERT_UNARY_COUNT_ - 1);
  char name[16];
  snprintf(name, sizeof name, "unary %s", unary_names[op]);
  const uint32_t allowed = allowed_mask(unary_c, op);
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(name, "in", in, allowed, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(name, "out", out, allowed, true, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(name, "in", in, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, name, "out", out->dtype));
  const cubert_tensor *ins[1] = {in};
  const char *names[1] = {"in"};
  cubert_strided_plan plan;
  CUBERT_RETURN_IF_ERROR(cubert_ops_plan_make(name, out, ins, names, 1, &plan));
  const int t = type_index(out->dtype);
  const cubert_strided_kernels kernels = {unary_c[t][op], unary_r[t][op], unary_nd[t]};
  cubert_handle *handles[2] = {out->handle, in->handle};
  return cubert_strided_plan_launch(client, &plan, &kernels, (uint32_t)op, handles);
}

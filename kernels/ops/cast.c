/* cubert_op_cast: one kernel pair (dense, strided) per (from, to) dtype pair; a cast to the
   same dtype is a copy. The conversion rules live in the kernels (kernels/cast.cube.c): they
   are written out in integer and float arithmetic so that the CPU server and every OpenCL
   device give the same bits.

   F16 is storage only and converted with integer arithmetic, so unlike the other operations a
   cast to or from F16 does not need CUBERT_FEATURE_FP16: it runs on every device (PoCL, for
   one, does not report cl_khr_fp16). F64 still needs an fp64 device (its kernels use
   double). */
#include "cubert/ops.h"
#include "ops/elementwise.h"
#include "ops/operand.h"
#include "ops/ops_kernels.h"
#include "strided.h"

#define C_(from, to) &cubert_kernel_cast_##from##_##to##_c
#define N_(from, to) &cubert_kernel_cast_##from##_##to##_nd
/* Indexed by cubert_dtype: NONE, F32, F64, I32, U32, F16. */
static const cubert_kernel_def *const cast_c[6][6] = {
    {NULL},
    {NULL, NULL, C_(f32, f64), C_(f32, i32), C_(f32, u32), C_(f32, f16)},
    {NULL, C_(f64, f32), NULL, C_(f64, i32), C_(f64, u32), C_(f64, f16)},
    {NULL, C_(i32, f32), C_(i32, f64), NULL, C_(i32, u32), C_(i32, f16)},
    {NULL, C_(u32, f32), C_(u32, f64), C_(u32, i32), NULL, C_(u32, f16)},
    {NULL, C_(f16, f32), C_(f16, f64), C_(f16, i32), C_(f16, u32), NULL},
};
static const cubert_kernel_def *const cast_nd[6][6] = {
    {NULL},
    {NULL, NULL, N_(f32, f64), N_(f32, i32), N_(f32, u32), N_(f32, f16)},
    {NULL, N_(f64, f32), NULL, N_(f64, i32), N_(f64, u32), N_(f64, f16)},
    {NULL, N_(i32, f32), N_(i32, f64), NULL, N_(i32, u32), N_(i32, f16)},
    {NULL, N_(u32, f32), N_(u32, f64), N_(u32, i32), NULL, N_(u32, f16)},
    {NULL, N_(f16, f32), N_(f16, f64), N_(f16, i32), N_(f16, u32), NULL},
};
#undef C_
#undef N_

cubert_status(cubert_op_cast)(cubert_client *client, const cubert_tensor *in,
                              const cubert_tensor *out) {
  const uint32_t allowed =
      CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F32) | CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F64) |
      CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_I32) | CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_U32) |
      CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F16);
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, "cast"));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor("cast", "in", in, allowed, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor("cast", "out", out, allowed, true, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_shape("cast", "in", in, "out", out));
  /* F16 needs no device feature here (see the top of the file); F64 does. */
  if (in->dtype == CUBERT_DTYPE_F64)
    CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, "cast", "in", in->dtype));
  if (out->dtype == CUBERT_DTYPE_F64)
    CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, "cast", "out", out->dtype));
  if (!cubert_client_properties(client))
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "cast: the client is released");
  if (in->dtype == out->dtype) return cubert_op_copy(client, in, out);
  const cubert_tensor *ins[1] = {in};
  const char *names[1] = {"in"};
  cubert_strided_plan plan;
  CUBERT_RETURN_IF_ERROR(cubert_ops_plan_make("cast", out, ins, names, 1, &plan));
  const cubert_strided_kernels kernels = {cast_c[in->dtype][out->dtype], NULL,
                                          cast_nd[in->dtype][out->dtype]};
  cubert_handle *handles[2] = {out->handle, in->handle};
  return cubert_strided_plan_launch(client, &plan, &kernels, 0, handles);
}

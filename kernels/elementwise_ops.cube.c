/* Elementwise operations of cubert/ops.h (cubert_op_unary, cubert_op_binary) on f32, i32 and
   u32: a contiguous kernel per operation and type (one vectorised loop on the CPU) and one
   strided/broadcasting kernel per type with the operation in an info word (elementwise_ops.h
   gives both layouts; kernels/ops/elementwise.c launches them). The f64 kernels live in
   elementwise_f64.cube.c, which only fp64 devices build.

   Integers compute on uint32_t where C would overflow: signed overflow is undefined in C and
   OpenCL C, unsigned arithmetic wraps, and the bits are the two's-complement result either way.
   Division is spelled out for the cases C leaves undefined: x / 0 gives 0, INT32_MIN / -1
   gives INT32_MIN (the wrapped negation). */
#include "elementwise_ops.h"

#include "cubert/cube.h"

EW_FLOAT_KERNELS_(float, f32)

CUBE_FN int32_t ew_bin_i32(uint32_t op, int32_t a, int32_t b) {
  const uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  switch (op) {
    case 0:
      return (int32_t)(ua + ub);
    case 1:
      return (int32_t)(ua - ub);
    case 2:
      return (int32_t)(ua * ub);
    case 3:
      return b == 0 ? 0 : b == -1 ? (int32_t)(0u - ua) : a / b;
    case 4:
      return min(a, b);
    default:
      return max(a, b);
  }
}
CUBE_FN int32_t ew_un_i32(uint32_t op, int32_t x) {
  switch (op) {
    case 3:
      return (int32_t)abs(x); /* abs(INT32_MIN) is 2^31 as uint32_t: INT32_MIN again */
    case 4:
      return (int32_t)(0u - (uint32_t)x);
    default:
      return x < 0 ? 0 : x;
  }
}
CUBE_FN uint32_t ew_bin_u32(uint32_t op, uint32_t a, uint32_t b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return b == 0 ? 0u : a / b;
    case 4:
      return min(a, b);
    default:
      return max(a, b);
  }
}

#define EW_INT_BINARY_(T, sfx) \
  EW_BINARY_C_(T, sfx, add, 0) \
  EW_BINARY_C_(T, sfx, sub, 1) \
  EW_BINARY_C_(T, sfx, mul, 2) \
  EW_BINARY_C_(T, sfx, div, 3) \
  EW_BINARY_C_(T, sfx, min, 4) \
  EW_BINARY_C_(T, sfx, max, 5) \
  EW_BINARY_R_(T, sfx, add, 0) \
  EW_BINARY_R_(T, sfx, sub, 1) \
  EW_BINARY_R_(T, sfx, mul, 2) \
  EW_BINARY_R_(T, sfx, div, 3) \
  EW_BINARY_R_(T, sfx, min, 4) \
  EW_BINARY_R_(T, sfx, max, 5) \
  EW_BINARY_ND_(T, sfx)

EW_INT_BINARY_(int32_t, i32)
EW_INT_BINARY_(uint32_t, u32)
EW_UNARY_C_(int32_t, i32, abs, 3)
EW_UNARY_C_(int32_t, i32, neg, 4)
EW_UNARY_C_(int32_t, i32, relu, 5)
EW_UNARY_R_(int32_t, i32, abs, 3)
EW_UNARY_R_(int32_t, i32, neg, 4)
EW_UNARY_R_(int32_t, i32, relu, 5)
EW_UNARY_ND_(int32_t, i32)

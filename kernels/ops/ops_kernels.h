/* The kernels behind cubert_op_unary, cubert_op_binary and cubert_op_cast
   (kernels/elementwise_ops.cube.c, elementwise_f64.cube.c, cast.cube.c; their buffers and info
   words are described in kernels/elementwise_ops.h; cubert_op_copy's copy_nd.cube.c kernels are
   launched by the core, lib/strided_copy.c). Internal to the library: the operations are the API,
   so these are not in cubert/kernels.h's table. Kernels named *_f64* need fp64 (their file is
   marked CUBE_NEEDS_FP64). */
#ifndef CUBERT_OPS_KERNELS_H
#define CUBERT_OPS_KERNELS_H

#include "cubert/kernel.h"

#define CUBERT_OPS_K_(name) extern const cubert_kernel_def cubert_kernel_##name;
/* The "_c" and "_r" kernels of one operation on one type. */
#define CUBERT_OPS_CR_(kind, op, sfx) \
  CUBERT_OPS_K_(kind##_##op##_##sfx##_c) CUBERT_OPS_K_(kind##_##op##_##sfx##_r)
#define CUBERT_OPS_INT_K_(sfx)     \
  CUBERT_OPS_CR_(binary, add, sfx) \
  CUBERT_OPS_CR_(binary, sub, sfx) \
  CUBERT_OPS_CR_(binary, mul, sfx) \
  CUBERT_OPS_CR_(binary, div, sfx) \
  CUBERT_OPS_CR_(binary, min, sfx) CUBERT_OPS_CR_(binary, max, sfx) CUBERT_OPS_K_(binary_##sfx##_nd)
#define CUBERT_OPS_FLOAT_K_(sfx)   \
  CUBERT_OPS_INT_K_(sfx)           \
  CUBERT_OPS_CR_(binary, pow, sfx) \
  CUBERT_OPS_CR_(unary, exp, sfx)  \
  CUBERT_OPS_CR_(unary, log, sfx)  \
  CUBERT_OPS_CR_(unary, sqrt, sfx) \
  CUBERT_OPS_CR_(unary, abs, sfx)  \
  CUBERT_OPS_CR_(unary, neg, sfx)  \
  CUBERT_OPS_CR_(unary, relu, sfx) CUBERT_OPS_CR_(unary, tanh, sfx) CUBERT_OPS_K_(unary_##sfx##_nd)
#define CUBERT_OPS_CAST_K_(from, to) \
  CUBERT_OPS_K_(cast_##from##_##to##_c) CUBERT_OPS_K_(cast_##from##_##to##_nd)

CUBERT_OPS_FLOAT_K_(f32)
CUBERT_OPS_FLOAT_K_(f64)
CUBERT_OPS_INT_K_(i32)
CUBERT_OPS_INT_K_(u32)
CUBERT_OPS_CR_(unary, abs, i32)
CUBERT_OPS_CR_(unary, neg, i32)
CUBERT_OPS_CR_(unary, relu, i32)
CUBERT_OPS_K_(unary_i32_nd)
CUBERT_OPS_CAST_K_(f32, i32)
CUBERT_OPS_CAST_K_(f32, u32)
CUBERT_OPS_CAST_K_(f32, f16)
CUBERT_OPS_CAST_K_(i32, f32)
CUBERT_OPS_CAST_K_(i32, u32)
CUBERT_OPS_CAST_K_(i32, f16)
CUBERT_OPS_CAST_K_(u32, f32)
CUBERT_OPS_CAST_K_(u32, i32)
CUBERT_OPS_CAST_K_(u32, f16)
CUBERT_OPS_CAST_K_(f16, f32)
CUBERT_OPS_CAST_K_(f16, i32)
CUBERT_OPS_CAST_K_(f16, u32)
CUBERT_OPS_CAST_K_(f64, f32)
CUBERT_OPS_CAST_K_(f64, i32)
CUBERT_OPS_CAST_K_(f64, u32)
CUBERT_OPS_CAST_K_(f64, f16)
CUBERT_OPS_CAST_K_(f32, f64)
CUBERT_OPS_CAST_K_(i32, f64)
CUBERT_OPS_CAST_K_(u32, f64)
CUBERT_OPS_CAST_K_(f16, f64)

#undef CUBERT_OPS_K_
#undef CUBERT_OPS_CR_
#undef CUBERT_OPS_FLOAT_K_
#undef CUBERT_OPS_INT_K_
#undef CUBERT_OPS_CAST_K_

#endif /* CUBERT_OPS_KERNELS_H */

/* The f64 half of the elementwise and cast kernels (elementwise_ops.cube.c, cast.cube.c):
   binary and unary operations on f64, and casts from and to f64. Every kernel here uses
   double, so the file is marked CUBE_NEEDS_FP64 (cubert/cube.h): only fp64 devices
   build it, and the host operations refuse f64 elsewhere before launching. */
#define CUBE_NEEDS_FP64 1
#include "cubert/cube.h"
#include "elementwise_ops.h"

EW_FLOAT_KERNELS_(double, f64)

/* f64 -> f16 rounds once, to nearest even, from the 52-bit mantissa (going through f32 would
   round twice). Same structure as ew_f16_from_f32_ (elementwise_ops.h). */
CUBE_FN uint16_t ew_f16_from_f64_(double f) {
  union {
    double d;
    uint64_t u;
  } v;
  v.d = f;
  const uint64_t x = v.u, frac = x & (uint64_t)0xfffffffffffff;
  const uint32_t sign = (uint32_t)(x >> 48) & 0x8000u, e = (uint32_t)(x >> 52) & 0x7ffu;
  if (e == 0x7ff) return (uint16_t)(sign | 0x7c00u | (frac ? 0x200u | (uint32_t)(frac >> 42) : 0u));
  if (e >= 1039) return (uint16_t)(sign | 0x7c00u); /* >= 2^16 */
  if (e >= 1009)                                    /* normal: 2^-14 .. 2^16 */
    return (uint16_t)(sign | ew_rne_(((e - 1008) << 10) | (uint32_t)(frac >> 42),
                                     frac & (uint64_t)0x3ffffffffff, 42));
  if (e < 998) return (uint16_t)sign; /* below 2^-25 */
  const uint64_t m = frac | (uint64_t)0x10000000000000;
  const uint32_t s = 1051 - e; /* value / 2^-24 = m / 2^s, s in 43..53 */
  return (uint16_t)(sign | ew_rne_((uint32_t)(m >> s), m & (((uint64_t)1 << s) - 1), s));
}

#define EW_ID_(x) (x)
#define EW_F64_TO_F32_(x) ((float)(x))
#define EW_TO_F64_(x) ((double)(x))
#define EW_F64_TO_I32_(x) EW_SAT_I32_(double, x)
#define EW_F64_TO_U32_(x) EW_SAT_U32_(double, x)
#define EW_F16_TO_F64_(x) ((double)ew_f16_to_f32_(x))

EW_CAST_(double, float, f64, f32, EW_F64_TO_F32_)
EW_CAST_(double, int32_t, f64, i32, EW_F64_TO_I32_)
EW_CAST_(double, uint32_t, f64, u32, EW_F64_TO_U32_)
EW_CAST_(double, uint16_t, f64, f16, ew_f16_from_f64_)
EW_CAST_(float, double, f32, f64, EW_TO_F64_)
EW_CAST_(int32_t, double, i32, f64, EW_TO_F64_)
EW_CAST_(uint32_t, double, u32, f64, EW_TO_F64_)
EW_CAST_(uint16_t, double, f16, f64, EW_F16_TO_F64_)

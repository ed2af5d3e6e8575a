/* cubert_op_cast's kernels between f32, i32, u32 and f16 (storage: binary16 bits in a
   uint16_t), a contiguous and a strided kernel per pair (elementwise_ops.h gives the layouts;
   the f64 pairs are in elementwise_f64.cube.c).

   Rules, the same on every device because they are written out rather than left to a cast:
   float -> integer truncates toward zero and saturates, NaN gives 0 (OpenCL's
   convert_<int>_sat_rtz); integer -> float rounds to nearest even (C's and OpenCL's default
   conversion); i32 <-> u32 keeps the bits (modulo 2^32, as C and OpenCL's plain convert);
   f32 -> f16 rounds to nearest even in integer arithmetic, so no fp16 extension is needed.
   Integer -> f16 goes through f32, which is exact below 2^24 and above that already past the
   f16 range. */
#include "cubert/cube.h"
#include "elementwise_ops.h"

#define EW_TO_F32_(x) ((float)(x))
#define EW_F32_TO_I32_(x) EW_SAT_I32_(float, x)
#define EW_F32_TO_U32_(x) EW_SAT_U32_(float, x)
#define EW_I32_TO_U32_(x) ((uint32_t)(x))
#define EW_U32_TO_I32_(x) ((int32_t)(x))
#define EW_TO_F16_(x) ew_f16_from_f32_((float)(x))
#define EW_F16_TO_I32_(x) EW_SAT_I32_(float, ew_f16_to_f32_(x))
#define EW_F16_TO_U32_(x) EW_SAT_U32_(float, ew_f16_to_f32_(x))

EW_CAST_(float, int32_t, f32, i32, EW_F32_TO_I32_)
EW_CAST_(float, uint32_t, f32, u32, EW_F32_TO_U32_)
EW_CAST_(float, uint16_t, f32, f16, ew_f16_from_f32_)
EW_CAST_(int32_t, float, i32, f32, EW_TO_F32_)
EW_CAST_(int32_t, uint32_t, i32, u32, EW_I32_TO_U32_)
EW_CAST_(int32_t, uint16_t, i32, f16, EW_TO_F16_)
EW_CAST_(uint32_t, float, u32, f32, EW_TO_F32_)
EW_CAST_(uint32_t, int32_t, u32, i32, EW_U32_TO_I32_)
EW_CAST_(uint32_t, uint16_t, u32, f16, EW_TO_F16_)
EW_CAST_(uint16_t, float, f16, f32, ew_f16_to_f32_)
EW_CAST_(uint16_t, int32_t, f16, i32, EW_F16_TO_I32_)
EW_CAST_(uint16_t, uint32_t, f16, u32, EW_F16_TO_U32_)

/* softmax_f32: the row softmax of cubert_op_softmax for f32 (the body: softmax_body.h). */
#include "cubert/cube.h"

#ifndef CUBERT_CUBE_OPENCL
/* expf for the CPU side, vectorisable (no calls, tables, branches or float-to-int
   conversions; GCC does not if-convert float selects here, so the one select is on integer
   bits): Cephes' expf. x = n ln2 + r with n the nearest integer (the 1.5 * 2^23 rounding trick,
   whose bits also hold n) and ln2 split in two so r is exact; e^r by a degree-6 polynomial
   (about 1 ulp on [-ln2/2, ln2/2]); 2^n by building its bits. x below -87.3 (to -inf) gives 0,
   NaN gives NaN; softmax's arguments are <= 0, and x above 88 would not be right. */
CUBE_FN float softmax_expf_(float x) {
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t tb, xb, eb;
  memcpy(&tb, &t, 4);
  memcpy(&xb, &x, 4);
  const uint32_t sb = (tb - 0x4B400000u + 127u) << 23;
  float scale, e;
  memcpy(&scale, &sb, 4);
  e = p * scale;
  memcpy(&eb, &e, 4);
  eb &= (xb > 0xC2AE999Au && xb <= 0xFF800000u) ? 0u : 0xFFFFFFFFu; /* -inf <= x < -87.3 */
  memcpy(&e, &eb, 4);
  return e;
}
#define SM_EXP(x) softmax_expf_(x)
#endif

#define SM_T float
#define SM_NAME softmax_f32
#define SM_SHARED softmax_f32_shared
#define SM_ONLINE_NAME softmax_online_f32
#define SM_ONLINE_SHARED softmax_online_f32_shared
#define SM_ROWS_NAME softmax_rows_f32
#define SM_ROWS_SHARED softmax_rows_f32_shared
#define SM_UNITS_NAME softmax_units_f32
#include "softmax_body.h"

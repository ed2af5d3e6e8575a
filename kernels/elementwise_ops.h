/* Kernel-language helpers and kernel generators shared by the elementwise operation files
   (elementwise_ops.cube.c, elementwise_f64.cube.c, cast.cube.c, copy_nd.cube.c); it includes
   cubert/cube.h. The host side is kernels/ops/ (elementwise.c, cast.c, copy.c); the kernels'
   contract is in kernels/ops/ops_kernels.h.

   Two launch shapes, one unit per output element, units at or past n do nothing:
   - contiguous ("_c" kernels): every operand is a dense run starting at element 0 of its
     handle (views with an offset take the rows kernel). Info: [0] n. LOAD_UNIT/STORE_UNIT,
     so the CPU runs one vectorised loop without checks and OpenCL its own-safe variant (an
     offset added to every index made PoCL's version 6-10x slower).
   - strided ("_nd" kernels): rank <= 8 after collapsing, with per-operand strides (0 for a
     broadcast axis) and offsets. Info (EW_ND_WORDS): [0] n, [1] rank, [2] op, [3] out offset,
     [4] a offset, [5] b offset, [6..14) shape, [14..22) out strides, [22..30) a strides,
     [30..38) b strides. Accesses are checked (LOAD/STORE): the index arithmetic costs more
     than the compares.
   - rows ("_r" kernels, phased): rank <= 2 after collapsing, R rows of L elements; cube c
     handles chunk c % K of row c / K (K = info[2] chunks per row), one unit per element, so no
     unit divides. Info (EW_R_WORDS): [0] R, [1] L, [2] K, [3] op, [4..7) offsets (out, a, b),
     [7..10) strides along a row, [10..13) strides between rows. A full chunk whose out stride
     is 1, whose input strides are 0 or 1 and whose elements all lie inside the buffers (checked
     once per cube) runs unchecked, as one vectorised loop per operand pattern on the CPU;
     other chunks use checked accesses. This is the path of broadcasts (scalar, row, column)
     and of pitched or sliced rows. */
#ifndef CUBERT_ELEMENTWISE_OPS_H
#define CUBERT_ELEMENTWISE_OPS_H

#include "cubert/cube.h"

#define EW_ND_WORDS 38

/* Declares and computes the element offsets po, pa, pb of this unit in a strided launch (info
   layout above). Index arithmetic in 32 bits when n fits (a 64-bit division costs several
   times a 32-bit one on CPUs and GPUs alike); the outermost coordinate needs no division. */
#define EW_ND_OFFSETS_(po, pa, pb)                               \
  uint64_t po = INFO_U64(3), pa = INFO_U64(4), pb = INFO_U64(5); \
  {                                                              \
    const uint32_t rank_ = INFO_U32(1) < 8 ? INFO_U32(1) : 8;    \
    if (INFO_U64(0) <= 0xffffffffu) {                            \
      uint32_t rest_ = (uint32_t)UNIT_ID;                        \
      for (uint32_t d_ = rank_; d_-- > 0;) {                     \
        const uint32_t len_ = INFO_U32(6 + d_);                  \
        uint32_t c_ = rest_;                                     \
        if (d_ > 0 && len_ > 0) {                                \
          c_ = rest_ % len_;                                     \
          rest_ /= len_;                                         \
        }                                                        \
        po += (uint64_t)c_ * INFO_U64(14 + d_);                  \
        pa += (uint64_t)c_ * INFO_U64(22 + d_);                  \
        pb += (uint64_t)c_ * INFO_U64(30 + d_);                  \
      }                                                          \
    } else {                                                     \
      uint64_t rest_ = UNIT_ID;                                  \
      for (uint32_t d_ = rank_; d_-- > 0;) {                     \
        const uint64_t len_ = INFO_U64(6 + d_);                  \
        uint64_t c_ = rest_;                                     \
        if (d_ > 0 && len_ > 0) {                                \
          c_ = rest_ % len_;                                     \
          rest_ /= len_;                                         \
        }                                                        \
        po += c_ * INFO_U64(14 + d_);                            \
        pa += c_ * INFO_U64(22 + d_);                            \
        pb += c_ * INFO_U64(30 + d_);                            \
      }                                                          \
    }                                                            \
  }

#define EW_R_WORDS 13

/* True when base + k * stride < len for every k < count (count >= 1), without overflow. */
CUBE_FN bool ew_span_ok_(uint64_t base, uint64_t count, uint64_t stride, uint64_t len) {
  if (base >= len) return false;
  return stride == 0 || count - 1 <= (len - 1 - base) / stride;
}
/* For strides 0 and 1 (the only ones the fast phase takes): true when base + k * stride < len
   for every k < count. No division: a rows kernel evaluates it in every unit on OpenCL. */
CUBE_FN bool ew_span01_(uint64_t base, uint64_t count, uint64_t stride, uint64_t len) {
  return base < len && (stride == 0 || len - base >= count);
}

/* Opens a rows kernel's body: the cube's chunk (po, pa, pb: first elements; so, sa, sb: strides
   along the row; cnt: its elements) and `fast` (see the layout above). Cubes past the last
   chunk return. */
#define EW_R_PROLOGUE_(o, a, b)                                                           \
  const uint64_t k_ = INFO_U64(2), len_ = INFO_U64(1);                                    \
  if (k_ == 0 || CUBE_POS / k_ >= INFO_U64(0)) return;                                    \
  const uint64_t row_ = CUBE_POS / k_, j0_ = (CUBE_POS % k_) * CUBE_DIM;                  \
  if (j0_ >= len_) return;                                                                \
  const uint64_t cnt = len_ - j0_ < CUBE_DIM ? len_ - j0_ : CUBE_DIM;                     \
  const uint64_t so = INFO_U64(7), sa = INFO_U64(8), sb = INFO_U64(9);                    \
  const uint64_t po = INFO_U64(4) + row_ * INFO_U64(10) + j0_ * so,                       \
                 pa = INFO_U64(5) + row_ * INFO_U64(11) + j0_ * sa,                       \
                 pb = INFO_U64(6) + row_ * INFO_U64(12) + j0_ * sb;                       \
  const bool fast = cnt == CUBE_DIM && so == 1 && sa <= 1 && sb <= 1 &&                   \
                    ew_span01_(po, cnt, so, LEN(o)) && ew_span01_(pa, cnt, sa, LEN(a)) && \
                    ew_span01_(pb, cnt, sb, LEN(b));

/* ---- operations (op codes are cubert_unary_op / cubert_binary_op) ---------------------------- */

/* Floating point: OpenCL's built-ins on both sides. min/max are fmin/fmax (a NaN operand gives
   the other one); relu keeps NaN and -0.0 (x < 0 ? 0 : x). */
#define EW_FLOAT_OPS_(T, sfx)                     \
  CUBE_FN T ew_bin_##sfx(uint32_t op, T a, T b) { \
    switch (op) {                                 \
      case 0:                                     \
        return a + b;                             \
      case 1:                                     \
        return a - b;                             \
      case 2:                                     \
        return a * b;                             \
      case 3:                                     \
        return a / b;                             \
      case 4:                                     \
        return fmin(a, b);                        \
      case 5:                                     \
        return fmax(a, b);                        \
      default:                                    \
        return pow(a, b);                         \
    }                                             \
  }                                               \
  CUBE_FN T ew_un_##sfx(uint32_t op, T x) {       \
    switch (op) {                                 \
      case 0:                                     \
        return exp(x);                            \
      case 1:                                     \
        return log(x);                            \
      case 2:                                     \
        return sqrt(x);                           \
      case 3:                                     \
        return fabs(x);                           \
      case 4:                                     \
        return -x;                                \
      case 5:                                     \
        return x < (T)0 ? (T)0 : x;               \
      default:                                    \
        return tanh(x);                           \
    }                                             \
  }

/* Generates the kernels of one binary operation on one type: binary_<op>_<sfx>_c. */
#define EW_BINARY_C_(T, sfx, opname, code)                                                      \
  UNIT_KERNEL(binary_##opname##_##sfx##_c, INFO_U64(0), (T, out), (const T, a), (const T, b)) { \
    STORE_UNIT(out, ew_bin_##sfx(code, LOAD_UNIT(a), LOAD_UNIT(b)));                            \
  }
/* binary_<sfx>_nd: every binary operation on one type, the op from info word 2. */
#define EW_BINARY_ND_(T, sfx)                                                         \
  UNIT_KERNEL(binary_##sfx##_nd, INFO_U64(0), (T, out), (const T, a), (const T, b)) { \
    EW_ND_OFFSETS_(po, pa, pb)                                                        \
    STORE(out, po, ew_bin_##sfx(INFO_U32(2), LOAD(a, pa), LOAD(b, pb)));              \
  }
#define EW_UNARY_C_(T, sfx, opname, code)                                        \
  UNIT_KERNEL(unary_##opname##_##sfx##_c, INFO_U64(0), (T, out), (const T, a)) { \
    STORE_UNIT(out, ew_un_##sfx(code, LOAD_UNIT(a)));                            \
  }
#define EW_UNARY_ND_(T, sfx)                                           \
  UNIT_KERNEL(unary_##sfx##_nd, INFO_U64(0), (T, out), (const T, a)) { \
    EW_ND_OFFSETS_(po, pa, pb)                                         \
    (void)pb;                                                          \
    STORE(out, po, ew_un_##sfx(INFO_U32(2), LOAD(a, pa)));             \
  }

/* binary_<op>_<sfx>_r: the rows kernel of one operation (the op is a constant, so each
   operand pattern of the fast phase is a plain vectorisable loop). */
#define EW_BINARY_R_(T, sfx, opname, code)                                                      \
  PHASED_KERNEL(binary_##opname##_##sfx##_r, NO_SHARED, (T, out), (const T, a), (const T, b)) { \
    EW_R_PROLOGUE_(out, a, b)                                                                   \
    if (fast) {                                                                                 \
      PHASE {                                                                                   \
        out[po + UNIT_POS] =                                                                    \
            ew_bin_##sfx(code, sa ? a[pa + UNIT_POS] : a[pa], sb ? b[pb + UNIT_POS] : b[pb]);   \
      }                                                                                         \
    } else {                                                                                    \
      PHASE {                                                                                   \
        if (UNIT_POS < cnt)                                                                     \
          STORE(out, po + UNIT_POS * so,                                                        \
                ew_bin_##sfx(code, LOAD(a, pa + UNIT_POS * sa), LOAD(b, pb + UNIT_POS * sb)));  \
      }                                                                                         \
    }                                                                                           \
  }
/* unary_<op>_<sfx>_r (b is a: its stride info word is unused and 0). */
#define EW_UNARY_R_(T, sfx, opname, code)                                                 \
  PHASED_KERNEL(unary_##opname##_##sfx##_r, NO_SHARED, (T, out), (const T, a)) {          \
    EW_R_PROLOGUE_(out, a, a)                                                             \
    (void)pb;                                                                             \
    if (fast) {                                                                           \
      PHASE {                                                                             \
        out[po + UNIT_POS] = ew_un_##sfx(code, sa ? a[pa + UNIT_POS] : a[pa]);            \
      }                                                                                   \
    } else {                                                                              \
      PHASE {                                                                             \
        if (UNIT_POS < cnt)                                                               \
          STORE(out, po + UNIT_POS * so, ew_un_##sfx(code, LOAD(a, pa + UNIT_POS * sa))); \
      }                                                                                   \
    }                                                                                     \
  }

/* All seven binary and unary float operations of one type. */
#define EW_FLOAT_KERNELS_(T, sfx) \
  EW_FLOAT_OPS_(T, sfx)           \
  EW_BINARY_C_(T, sfx, add, 0)    \
  EW_BINARY_C_(T, sfx, sub, 1)    \
  EW_BINARY_C_(T, sfx, mul, 2)    \
  EW_BINARY_C_(T, sfx, div, 3)    \
  EW_BINARY_C_(T, sfx, min, 4)    \
  EW_BINARY_C_(T, sfx, max, 5)    \
  EW_BINARY_C_(T, sfx, pow, 6)    \
  EW_BINARY_R_(T, sfx, add, 0)    \
  EW_BINARY_R_(T, sfx, sub, 1)    \
  EW_BINARY_R_(T, sfx, mul, 2)    \
  EW_BINARY_R_(T, sfx, div, 3)    \
  EW_BINARY_R_(T, sfx, min, 4)    \
  EW_BINARY_R_(T, sfx, max, 5)    \
  EW_BINARY_R_(T, sfx, pow, 6)    \
  EW_BINARY_ND_(T, sfx)           \
  EW_UNARY_C_(T, sfx, exp, 0)     \
  EW_UNARY_C_(T, sfx, log, 1)     \
  EW_UNARY_C_(T, sfx, sqrt, 2)    \
  EW_UNARY_C_(T, sfx, abs, 3)     \
  EW_UNARY_C_(T, sfx, neg, 4)     \
  EW_UNARY_C_(T, sfx, relu, 5)    \
  EW_UNARY_C_(T, sfx, tanh, 6)    \
  EW_UNARY_R_(T, sfx, exp, 0)     \
  EW_UNARY_R_(T, sfx, log, 1)     \
  EW_UNARY_R_(T, sfx, sqrt, 2)    \
  EW_UNARY_R_(T, sfx, abs, 3)     \
  EW_UNARY_R_(T, sfx, neg, 4)     \
  EW_UNARY_R_(T, sfx, relu, 5)    \
  EW_UNARY_R_(T, sfx, tanh, 6)    \
  EW_UNARY_ND_(T, sfx)

/* ---- casts ------------------------------------------------------------------------------------
   cast_<from>_<to>_c and cast_<from>_<to>_nd, with CONV(x) the conversion of one element. */
#define EW_CAST_(S, D, sname, dname, CONV)                                        \
  UNIT_KERNEL(cast_##sname##_##dname##_c, INFO_U64(0), (D, out), (const S, a)) {  \
    STORE_UNIT(out, CONV(LOAD_UNIT(a)));                                          \
  }                                                                               \
  UNIT_KERNEL(cast_##sname##_##dname##_nd, INFO_U64(0), (D, out), (const S, a)) { \
    EW_ND_OFFSETS_(po, pa, pb)                                                    \
    (void)pb;                                                                     \
    STORE(out, po, CONV(LOAD(a, pa)));                                            \
  }

/* Float to integer as OpenCL's convert_<int>_sat_rtz, spelled out so that both sides agree:
   NaN gives 0, values at or past the type's range saturate, the rest truncate toward zero. */
#define EW_SAT_I32_(T, x)                 \
  ((x) != (x)                 ? 0         \
   : (x) >= (T)2147483648.0f  ? INT32_MAX \
   : (x) <= (T)-2147483648.0f ? INT32_MIN \
                              : (int32_t)(x))
#define EW_SAT_U32_(T, x) \
  ((x) != (x) || (x) <= (T)0 ? 0u : (x) >= (T)4294967296.0f ? UINT32_MAX : (uint32_t)(x))

/* f16 (binary16 bits in a uint16_t) from and to f32 with integer arithmetic only, so storage
   casts work on every device, fp16 extension or not. f32 -> f16 rounds to nearest even: a
   carry out of the mantissa moves into the exponent and, past 65504, yields the infinity
   encoding; results below 2^-14 become subnormals, below 2^-25 (and exactly 2^-25, a tie to
   even) zero. NaN stays NaN (quiet, top payload bits kept). */
CUBE_FN uint32_t ew_f32_bits_(float x) {
  union {
    float f;
    uint32_t u;
  } v;
  v.f = x;
  return v.u;
}
CUBE_FN float ew_bits_f32_(uint32_t x) {
  union {
    float f;
    uint32_t u;
  } v;
  v.u = x;
  return v.f;
}
/* Rounds q + rem / 2^s to nearest even (s >= 1, rem < 2^s). */
CUBE_FN uint32_t ew_rne_(uint32_t q, uint64_t rem, uint32_t s) {
  const uint64_t mid = (uint64_t)1 << (s - 1);
  return q + ((rem > mid || (rem == mid && (q & 1u))) ? 1u : 0u);
}
CUBE_FN uint16_t ew_f16_from_f32_(float f) {
  const uint32_t x = ew_f32_bits_(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  const uint32_t e = ax >> 23, frac = ax & 0x7fffffu;
  if (e == 255) return (uint16_t)(sign | 0x7c00u | (frac ? 0x200u | (frac >> 13) : 0u));
  if (e >= 143) return (uint16_t)(sign | 0x7c00u); /* >= 2^16 */
  if (e >= 113)                                    /* normal: 2^-14 .. 2^16 */
    return (uint16_t)(sign | ew_rne_(((e - 112) << 10) | (frac >> 13), frac & 0x1fffu, 13));
  if (e < 102) return (uint16_t)sign;               /* below 2^-25 */
  const uint32_t m = frac | 0x800000u, s = 126 - e; /* value / 2^-24 = m / 2^s, s in 14..24 */
  return (uint16_t)(sign | ew_rne_(m >> s, m & ((1u << s) - 1u), s));
}
CUBE_FN float ew_f16_to_f32_(uint16_t h) {
  const uint32_t sign = ((uint32_t)h & 0x8000u) << 16, e = ((uint32_t)h >> 10) & 0x1fu,
                 m = (uint32_t)h & 0x3ffu;
  if (e == 31) return ew_bits_f32_(sign | 0x7f800000u | (m << 13));
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in f32 */
    const float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return ew_bits_f32_(sign | ((e + 112) << 23) | (m << 13));
}

#endif /* CUBERT_ELEMENTWISE_OPS_H */

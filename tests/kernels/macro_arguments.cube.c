/* Kernels of the kernel-language macro-argument conformance tests
   (tests/cts/cts_macro_arguments.c): every function-like macro of cubert/cube.h a kernel calls,
   with arguments that are compound literals whose commas the preprocessor splits (`(uint32_t[2]){0,
   1}[k]`, `(f32x4){a, b, c, d}`) and, on OpenCL, vector literals `(float4)(a, b, c, d)`. The same
   text builds on both sides: OpenCL C takes brace compound literals too. Each kernel writes values
   the test computes on the host; a macro that splits such an argument fails the build of this file.
 */
#include "cubert/cube.h"

/* Index k of a literal array: a compound literal with commas, whole to a function call. */
#define PICK2(a, b, k) ((uint32_t[2]){(a), (b)}[(k)])
/* A vector literal with commas: braces on the C side, OpenCL C's parenthesised form there. */
#ifdef CUBERT_CUBE_OPENCL
#define VEC4(a, b, c, d) ((f32x4)(a, b, c, d))
#else
#define VEC4(a, b, c, d) ((f32x4){a, b, c, d})
#endif

/* Unit u < 16 of one cube of 16 (info word 0 = 16, word 1 = 3.5f's bits): out[u * 8 + j] for
   j = 0 .. 7 and vec[u * 8 .. + 8) (two f32x4 stores). UNIT_KERNEL's `active` is the one
   argument whose literal must be in parentheses: the buffer pairs follow it (cube.h). */
UNIT_KERNEL(macro_args_unit, ((uint64_t[2]){INFO_U64((uint32_t[1]){0}[0]), 0}[0]),
            (const float, in), (float, out), (float, vec), (int32_t, counts), (uint32_t, flags)) {
  const uint32_t u = (uint32_t)UNIT_ID;
  /* LOAD, INFO_* and the conversions, each with a literal argument. */
  const float x = LOAD(in, (uint32_t[2]){u, 0}[0]);
  const float f = INFO_F32((uint32_t[2]){1, 0}[0]);
  STORE(out, (uint64_t[2]){u * 8 + 0, 0}[0], (float[2]){x + f, 0.0f}[0]);
  STORE(out, u * 8 + 1, (float[3]){0.0f, x * 2.0f, 0.0f}[1]);
  STORE(out, (uint32_t[1]){u * 8 + 2}[0], min((float[2]){x, -x}[0], (float[2]){1.0f, 2.0f}[1]));
  STORE(out, u * 8 + 3, max((float[2]){x, -x}[1], (float[2]){-1.0f, 0.5f}[0]));
  /* clamp and VFMA take a literal with commas in parentheses (cube_cpu.h says why). */
  STORE(out, u * 8 + 4, clamp(((float[2]){x, 0}[0]), ((float[2]){-1.0f, 0}[0]), (float)1));
  STORE(out, u * 8 + 5, (float)abs((int32_t[2]){(int32_t)x - 3, 0}[0]));
  STORE(out, u * 8 + 6,
        (float)INFO_AT_MOST((uint32_t[2]){0, 1}[0], (uint64_t[2]){16, 17}[u & 1]) +
            (float)INFO_I32((uint32_t[2]){0, 0}[1]) + rsqrt((float[2]){4.0f, 1.0f}[0]));
  STORE(out, u * 8 + 7, (float)INFO_U32((uint32_t[2]){0, 9}[0]) + (float)LEN(out) / 128.0f);
  /* The math names (<tgmath.h>'s macros on the C side, redefined in cube_cpu.h) add 0; fma
     takes a literal with commas in parentheses where the C side is built with clang. */
  STORE(out, u * 8 + 7,
        LOAD(out, u * 8 + 7) + sqrt((float[2]){1.0f, 0.0f}[1]) +
            fmin((float[2]){0.0f, 1.0f}[0], 1.0f) + fabs((float[2]){-0.0f, 1.0f}[0]) +
            pow((float[2]){0.0f, 1.0f}[0], (float[2]){2.0f, 0.0f}[0]) +
            fma(((float[2]){0.0f, 1.0f}[0]), 2.0f, 0.0f));
  /* Vectors: VSPLAT, VFMA and VSTORE with literals, brace and (OpenCL) vector ones. */
  const f32x4 a = VFMA(((f32x4){x, 1.0f, 2.0f, 3.0f}), VSPLAT_F32X4((float[2]){2.0f, 0}[0]),
                       VEC4(0.5f, 0.25f, 0.125f, f));
  VSTORE_F32X4(a, &vec[u * 8]);
  VSTORE_F32X4(VFMA(a, VSPLAT_F32X4(1.0f), VEC4(1.0f, 2.0f, 3.0f, 4.0f)) + (f32x4){0, 0, 0, 0},
               &vec[(uint32_t[2]){u * 8 + 4, 0}[0]]);
  /* Buffer atomics: every unit adds 1 to counts[0], subtracts 2 from counts[1], keeps min and max
     of u in counts[2], [3], exchanges counts[4]; unit 5 swaps counts[5] from 0 to 55; flags[0]
     gets the max of u + 1 through the unsigned CAS-free path. */
  ATOMIC_ADD(counts, (uint32_t[2]){0, 1}[0], (int32_t[2]){1, 2}[0]);
  ATOMIC_SUB(counts, (uint32_t[2]){0, 1}[1], (int32_t[2]){1, 2}[1]);
  ATOMIC_MIN(counts, (uint32_t[1]){2}[0], (int32_t[2]){(int32_t)u, 0}[0]);
  ATOMIC_MAX(counts, 3, (int32_t[2]){(int32_t)u, 0}[0]);
  ATOMIC_XCHG(counts, (uint32_t[1]){4}[0], (int32_t[1]){7}[0]);
  if (u == 5) ATOMIC_CAS(counts, (uint32_t[1]){5}[0], (int32_t[2]){0, 1}[0], (int32_t[1]){55}[0]);
  ATOMIC_MAX(flags, PICK2(0, 1, 0), PICK2(u + 1, 0, 0));
}

/* The float atomic and STORE_UNIT: out[UNIT_ID] = in[UNIT_ID] * 2 for every unit, sum[0] += each
   in[UNIT_ID]. */
UNIT_KERNEL(macro_args_store_unit, LEN(in), (const float, in), (float, out), (float, sum)) {
  STORE_UNIT(out, (float[2]){LOAD_UNIT(in) * 2.0f, 0.0f}[0]);
  ATOMIC_ADD_F32(sum, (uint32_t[2]){0, 1}[0], (float[2]){LOAD_UNIT(in), 0.0f}[0]);
}

/* A cube of CUBE_DIM <= 64 units: the cube-level helpers and shared atomics with literal
   arguments, in both cube forms. out[UNIT_ID * 4 + j]: reduce sum, reduce max, inclusive scan,
   exclusive scan of in[UNIT_ID] (integers), and per cube at out[CUBE_DIM * CUBE_COUNT * 4 +
   CUBE_POS * 4 + j]: the shared count (units), the max of UNIT_POS, the float sum, 1 if unit 0's
   CAS won. */
typedef struct macro_args_shared {
  int32_t scratch[64];
  uint32_t count;
  int32_t top;
  float sum;
  uint32_t won;
  float lanes[4];
} macro_args_shared;

CUBE_KERNEL(macro_args_fiber, (macro_args_shared, sh), (const int32_t, in), (int32_t, out)) {
  const uint64_t base = (uint64_t)CUBE_DIM * CUBE_COUNT * 4 + CUBE_POS * 4;
  if (UNIT_POS == 0) {
    sh->count = 0;
    sh->top = -1;
    sh->sum = 0.0f;
    sh->won = 0;
    sh->lanes[0] = 0.0f;
  }
  SYNC_CUBE();
  const int32_t v = LOAD(in, UNIT_ID);
  int32_t r;
  CUBE_REDUCE_SUM((int32_t[2]){v, 0}[0], sh->scratch, r);
  STORE(out, UNIT_ID * 4 + 0, (int32_t[1]){r}[0]);
  CUBE_REDUCE_MAX((int32_t[2]){0, v}[1], sh->scratch, r);
  STORE(out, UNIT_ID * 4 + 1, r);
  CUBE_SCAN_INCLUSIVE_SUM((int32_t[2]){v, 0}[0], sh->scratch, r);
  STORE(out, UNIT_ID * 4 + 2, r);
  CUBE_SCAN_EXCLUSIVE_SUM((int32_t[2]){v, 0}[0], sh->scratch, r);
  STORE(out, UNIT_ID * 4 + 3, r);
  SHARED_ATOMIC_ADD(&sh->count, (uint32_t[2]){1, 0}[0]);
  SHARED_ATOMIC_SUB(&sh->count, (uint32_t[2]){0, 1}[0]);
  SHARED_ATOMIC_MAX(&sh->top, (int32_t[2]){(int32_t)UNIT_POS, 0}[0]);
  SHARED_ATOMIC_MIN(&sh->top, (int32_t[2]){INT32_MAX, 0}[0]);
  SHARED_ATOMIC_XCHG(&sh->won, (uint32_t[1]){0}[0]);
  SHARED_ATOMIC_ADD_F32(&sh->sum, (float[2]){1.0f, 0.0f}[0]);
  SHARED_ATOMIC_MAX_F32(&sh->lanes[(uint32_t[2]){0, 1}[0]], (float[1]){0.0f}[0]);
  SHARED_ATOMIC_MIN_F32(&sh->lanes[(uint32_t[2]){0, 1}[0]], (float[1]){0.0f}[0]);
  SYNC_CUBE();
  if (UNIT_POS == 0) SHARED_ATOMIC_CAS(&sh->won, (uint32_t[2]){0, 1}[0], (uint32_t[2]){0, 1}[1]);
  SYNC_CUBE();
  if (UNIT_POS == 0) {
    STORE(out, base + 0, (int32_t)sh->count);
    STORE(out, base + 1, sh->top);
    STORE(out, base + 2, (int32_t)sh->sum);
    STORE(out, base + 3, (int32_t)sh->won);
  }
}

PHASED_KERNEL(macro_args_phased, (macro_args_shared, sh), (const int32_t, in), (int32_t, out)) {
  EXCLUSIVE(int32_t, v);
  EXCLUSIVE(int32_t, r);
  EXCLUSIVE_ARRAY(int32_t, two, sizeof((int32_t[2]){0, 0}) / sizeof(int32_t));
  PHASE {
    MY(v) = LOAD(in, UNIT_ID);
    MY_AT(two, (uint32_t[2]){0, 1}[0]) = MY(v);
    MY_AT(two, (uint32_t[2]){0, 1}[1]) = 0;
  }
  CUBE_REDUCE_SUM((int32_t[2]){MY_AT(two, 0), 0}[0], sh->scratch, MY(r));
  PHASE {
    STORE(out, UNIT_ID * 4 + 0, (int32_t[1]){MY(r)}[0]);
  }
  CUBE_REDUCE_MAX((int32_t[2]){0, MY(v)}[1], sh->scratch, MY(r));
  PHASE {
    STORE(out, UNIT_ID * 4 + 1, MY(r));
  }
  CUBE_SCAN_INCLUSIVE_SUM((int32_t[2]){MY(v), 0}[0], sh->scratch, MY(r));
  PHASE {
    STORE(out, UNIT_ID * 4 + 2, MY(r));
  }
  CUBE_SCAN_EXCLUSIVE_SUM((int32_t[2]){MY(v), 0}[0], sh->scratch, MY(v));
  PHASE {
    STORE(out, UNIT_ID * 4 + 3, MY(v));
  }
}

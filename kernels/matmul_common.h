/* Kernels shared by kernels/matmul.cube.c (f32) and kernels/matmul_f64.cube.c (f64): the simple
   kernel, the beta pass and the tiled kernels (kernels/matmul_tiled.h) for one element type.
   Define MM_TY (float or double), MM_SUFFIX (f32 or f64) and MM_INFO_ALPHA before including.

   MM_FMA(a, b, s) is a * b + s, fused where that is fast: always on OpenCL (every GPU, and
   PoCL on a CPU with FMA), and on the CPU server where the C side is built for a CPU with FMA
   (__FMA__, e.g. the x86-64-v3 / v4 builds of this file, CMake's CPU_VARIANTS). Without
   hardware FMA the C library's fma() is a slow call, so the plain expression is used there.
   Both forms are within the documented error bound (cubert/ops.h). */
#ifndef MM_FMA
#if defined(CUBERT_CUBE_OPENCL) || defined(__FMA__)
#define MM_FMA(a, b, s) fma((a), (b), (s))
#else
#define MM_FMA(a, b, s) ((a) * (b) + (s))
#endif
#endif

#define MM_CAT2X_(a, b) a##_##b
#define MM_CATX_(a, b) MM_CAT2X_(a, b)
/* The kernel macros paste their name argument: pass it through one more macro so that a
   computed name (MM_CATX_) is expanded first. */
#define MM_UNIT_KERNEL(name, ...) UNIT_KERNEL(name, __VA_ARGS__)
#define MM_PHASED_KERNEL(name, ...) PHASED_KERNEL(name, __VA_ARGS__)

/* One unit per element of C, a sequential sum over K with checked loads: any strides, any
   sizes; the candidate for tiny products (no shared memory, no barriers, no idle units). */
MM_UNIT_KERNEL(MM_CATX_(matmul_simple, MM_SUFFIX), INFO_U64(0) * INFO_U64(1) * INFO_U64(3),
               (const MM_TY, a), (const MM_TY, b), (MM_TY, c)) {
  const uint64_t m = INFO_U64(0), n = INFO_U64(1), k = INFO_U64(2);
  const uint64_t u = UNIT_ID, col = u % n, row = (u / n) % m, bt = INFO_U64(16) + u / (n * m);
  const uint64_t a0 = INFO_U64(4) + bt * INFO_U64(5) + row * INFO_U64(6), a_sk = INFO_U64(7);
  const uint64_t b0 = INFO_U64(8) + bt * INFO_U64(9) + col * INFO_U64(11), b_sk = INFO_U64(10);
  MM_TY s = (MM_TY)0;
  for (uint64_t kk = 0; kk < k; ++kk)
    s = MM_FMA(LOAD(a, a0 + kk * a_sk), LOAD(b, b0 + kk * b_sk), s);
  STORE(c, INFO_U64(12) + bt * INFO_U64(13) + row * INFO_U64(14) + col * INFO_U64(15),
        MM_INFO_ALPHA(17) * s);
}

/* The beta pass: c = t + beta * c, or beta * c without t (info word 19 == 0; t is then any
   buffer and is not read). t is dense (batch, M, N) over this launch's batches; beta == 0 never
   reads c, so NaN there does not propagate. */
MM_UNIT_KERNEL(MM_CATX_(matmul_beta, MM_SUFFIX), INFO_U64(0) * INFO_U64(1) * INFO_U64(3),
               (const MM_TY, t), (MM_TY, c)) {
  const uint64_t m = INFO_U64(0), n = INFO_U64(1);
  const uint64_t u = UNIT_ID, col = u % n, row = (u / n) % m, bt = INFO_U64(16) + u / (n * m);
  const uint64_t at = INFO_U64(12) + bt * INFO_U64(13) + row * INFO_U64(14) + col * INFO_U64(15);
  const MM_TY beta = MM_INFO_ALPHA(18);
  MM_TY v = INFO_U64(19) ? LOAD(t, u) : (MM_TY)0;
  if (beta != (MM_TY)0) v += beta * LOAD(c, at);
  STORE(c, at, v);
}

#define MM_T MM_TY
#define MM_NAME MM_CATX_(matmul_tile32x32, MM_SUFFIX)
#define MM_RM 2
#define MM_RN 2
#include "matmul_tiled.h"

#define MM_NAME MM_CATX_(matmul_tile64x64, MM_SUFFIX)
#define MM_RM 4
#define MM_RN 4
#include "matmul_tiled.h"

#define MM_NAME MM_CATX_(matmul_tile128x64, MM_SUFFIX)
#define MM_RM 8
#define MM_RN 4
#include "matmul_tiled.h"
#define MM_NAME MM_CATX_(matmul_tile128x256c, MM_SUFFIX)
#define MM_RM 8
#define MM_RN 16
#define MM_CONSEC 1
#include "matmul_tiled.h"
#undef MM_T

/* matmul, f32: the kernels of cubert_op_matmul (kernels/ops/matmul.c), C = alpha * A B per
   batch, with the beta pass separate. The f64 ones are kernels/matmul_f64.cube.c (a file of its
   own: its OpenCL program needs cl_khr_fp64).

   Every kernel takes buffers (a, b, c) -- (t, c) for the beta pass -- and the same info words
   (64-bit, element units):
      0 M    1 N    2 K    3 batches in this launch
      4 a offset    5 a batch stride    6 a row stride (M)      7 a column stride (K)
      8 b offset    9 b batch stride   10 b row stride (K)     11 b column stride (N)
     12 c offset   13 c batch stride   14 c row stride (M)     15 c column stride (N)
     16 first batch of this launch
     17 alpha, 18 beta (f32 bits in the low 32 bits, or f64 bits), 19 beta pass: t is present
   A batch stride of 0 shares one matrix among the batches.

   Kernels (each writes c = alpha * A B, never reads c):
     matmul_simple_<t>        UNIT_KERNEL, one unit per element of C (any 1-D launch of
                              >= batches * M * N units)
     matmul_tile32x32_<t>     PHASED_KERNEL, cube dim (16, 16, 1), cube count
     matmul_tile64x64_<t>     (ceil(N / BN), ceil(M / BM), batches): the tiled, register-
     matmul_tile128x64_<t>    blocked kernel of kernels/matmul_tiled.h with 2x2, 4x4, 8x4
     matmul_tile128x256c_<t>  and 8x16 outputs per unit (BM x BN = 32x32, 64x64, 128x64,
                              128x256); the last with 16 consecutive columns per unit (for
                              compilers that vectorise inside a unit: PoCL), the others with
                              columns 16 apart (for vectorisation across units: the CPU
                              server, GPUs)
     matmul_vec8x32_f32       UNIT_KERNEL (f32 only), one unit per 8 x 32 block of C, units
                              ordered down the row blocks of one column block, then across
                              column blocks, then batches (any 1-D launch of >= batches *
                              ceil(M / 8) * ceil(N / 32) units): for CPUs behind OpenCL (below)
     matmul_beta_<t>          c = t + beta * c (t dense batch x M x N), or beta * c */
/* Build options of this file's OpenCL program (cube.h): on NVIDIA at most 128 registers per
   unit, so that two 256-unit cubes of the large-tile kernels fit on a multiprocessor (left to
   itself the compiler gives them 151-175 registers, one cube per multiprocessor: 31.2 / 32.0
   TFLOP/s at 4096 / 8192 on the H100, against 34.0 / 34.6 capped, despite a few spilled
   registers; capped without their K loop unrolled (UNROLL) they fall to 26.9 / 26.8). The
   other kernels of the file use fewer than 128. */
#define CUBE_OPENCL_OPTIONS "-cl-nv-maxrregcount=128"
#include "cubert/cube.h"

#define MM_TY float
#define MM_SUFFIX f32
#define MM_INFO_ALPHA(k) INFO_F32(k)
#include "matmul_common.h"

/* matmul_vec8x32_f32: a register block in vector types, for compilers that vectorise inside a
   unit but not across units around an inner loop (PoCL's LLVM on a CPU: the tiled kernels
   above run near scalar speed there). No shared memory and no barrier: PoCL then runs each
   unit's whole K loop at once (with a barrier it would interchange the K loop with the loop
   over units and keep the accumulators in memory), and the unit's 16 accumulators (8 rows x
   two f32x16 of columns) stay in vector registers, each K step one FMA per accumulator
   against two vector loads of B and eight broadcast A elements. A and B are read straight
   from the buffers: the caches hold the reuse. Consecutive units take consecutive row blocks
   of one column block, so the units that a CPU thread runs one after another share the
   K x 32 panel of B.

   Units whose block lies inside C, with B's and C's columns contiguous (stride 1) and every
   access in range (checked once here), take the unguarded path; the others (edges of C,
   other strides) gather B through a private row and read A and write C through LOAD/STORE
   with zeros outside the matrix, the same arithmetic per element. */
#define MV_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define MV_DECL(i) f32x16 s##i##0 = VSPLAT_F32X16(0.0f), s##i##1 = VSPLAT_F32X16(0.0f);
#define MV_STEP(i, av)                   \
  {                                      \
    const f32x16 v_ = VSPLAT_F32X16(av); \
    s##i##0 = VFMA(v_, b_lo, s##i##0);   \
    s##i##1 = VFMA(v_, b_hi, s##i##1);   \
  }
#define MV_FAST(i) MV_STEP(i, a[a0 + (i)*a_sm + kk * a_sk])
#define MV_SLOW(i) MV_STEP(i, row0 + (i) < m ? LOAD(a, a0 + (i)*a_sm + kk * a_sk) : 0.0f)
#define MV_STORE_FAST(i)                             \
  VSTORE_F32X16(s##i##0 * alpha, c + c0 + (i)*c_sm); \
  VSTORE_F32X16(s##i##1 * alpha, c + c0 + (i)*c_sm + 16);
#define MV_STORE_SLOW(i)                    \
  VSTORE_F32X16(s##i##0 * alpha, out);      \
  VSTORE_F32X16(s##i##1 * alpha, out + 16); \
  for (uint32_t j = 0; j < 32; ++j)         \
    if (row0 + (i) < m && col0 + j < n) STORE(c, c0 + (i)*c_sm + j * c_sn, out[j]);
UNIT_KERNEL(matmul_vec8x32_f32, INFO_U64(3) * ((INFO_U64(0) + 7) / 8) * ((INFO_U64(1) + 31) / 32),
            (const float, a), (const float, b), (float, c)) {
  const uint64_t m = INFO_U64(0), n = INFO_U64(1), k = INFO_U64(2);
  const uint64_t rbs = (m + 7) / 8, cbs = (n + 31) / 32, u = UNIT_ID;
  const uint64_t row0 = u % rbs * 8, col0 = u / rbs % cbs * 32;
  const uint64_t batch = INFO_U64(16) + u / (rbs * cbs);
  const uint64_t a_sm = INFO_U64(6), a_sk = INFO_U64(7);
  const uint64_t b_sk = INFO_U64(10), b_sn = INFO_U64(11);
  const uint64_t c_sm = INFO_U64(14), c_sn = INFO_U64(15);
  /* The first element of the unit's block in each operand. */
  const uint64_t a0 = INFO_U64(4) + batch * INFO_U64(5) + row0 * a_sm;
  const uint64_t b0 = INFO_U64(8) + batch * INFO_U64(9) + col0 * b_sn;
  const uint64_t c0 = INFO_U64(12) + batch * INFO_U64(13) + row0 * c_sm + col0 * c_sn;
  const float alpha = INFO_F32(17);
  const bool inside = row0 + 8 <= m && col0 + 32 <= n;
  const bool fast = inside && k > 0 && b_sn == 1 && a0 + 7 * a_sm + (k - 1) * a_sk < LEN(a) &&
                    b0 + (k - 1) * b_sk + 31 < LEN(b);
  MV_ROWS(MV_DECL)
  if (fast) {
    for (uint64_t kk = 0; kk < k; ++kk) {
      const f32x16 b_lo = VLOAD_F32X16(b + b0 + kk * b_sk);
      const f32x16 b_hi = VLOAD_F32X16(b + b0 + kk * b_sk + 16);
      MV_ROWS(MV_FAST)
    }
  } else {
    for (uint64_t kk = 0; kk < k; ++kk) {
      float brow[32];
      for (uint32_t j = 0; j < 32; ++j)
        brow[j] = col0 + j < n ? LOAD(b, b0 + kk * b_sk + j * b_sn) : 0.0f;
      const f32x16 b_lo = VLOAD_F32X16(brow), b_hi = VLOAD_F32X16(brow + 16);
      MV_ROWS(MV_SLOW)
    }
  }
  if (inside && c_sn == 1 && c0 + 7 * c_sm + 31 < LEN(c)) {
    MV_ROWS(MV_STORE_FAST)
  } else {
    float out[32];
    MV_ROWS(MV_STORE_SLOW)
  }
}
#undef MV_STORE_SLOW
#undef MV_STORE_FAST
#undef MV_SLOW
#undef MV_FAST
#undef MV_STEP
#undef MV_DECL
#undef MV_ROWS

/* matmul_big128k8_f32, matmul_big128k16_f32: PHASED_KERNEL (f32 only), cube dim (16, 16, 1),
   cube count (ceil(N / 128), ceil(M / 128), batches): 128 x 128 blocks of C, 8 x 8 outputs per
   unit, double-buffered shared tiles of K depth 8 or 16 (kernels/matmul_big.h), for GPUs. */
#define MB_NAME matmul_big128k8_f32
#define MB_TK 8
#include "matmul_big.h"
#define MB_NAME matmul_big128k16_f32
#define MB_TK 16
#include "matmul_big.h"
#define MB_NAME matmul_big128k16mn_f32
#define MB_TK 16
#define MB_MN 1
#include "matmul_big.h"

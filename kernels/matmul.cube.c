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
     matmul_beta_<t>          c = t + beta * c (t dense batch x M x N), or beta * c */
#include "cubert/cube.h"

#define MM_TY float
#define MM_SUFFIX f32
#define MM_INFO_ALPHA(k) INFO_F32(k)
#include "matmul_common.h"

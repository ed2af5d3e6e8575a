/* matmul, f64: the kernels of kernels/matmul.cube.c (which documents buffers, info words and
   launches) for double. A file of its own, marked CUBE_NEEDS_FP64 (cubert/cube.h): the OpenCL
   server builds it only on devices with cl_khr_fp64 (cubert_op_matmul checks CUBERT_FEATURE_FP64
   first and answers UNAVAILABLE elsewhere). */
#define CUBE_NEEDS_FP64 1
#include "cubert/cube.h"

#define MM_TY double
#define MM_SUFFIX f64
#define MM_INFO_ALPHA(k) INFO_F64(k)
#include "matmul_common.h"

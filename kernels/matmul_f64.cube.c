/* matmul, f64: the kernels of kernels/matmul.cube.c (which documents buffers, info words and
   launches) for double. A file of its own, flagged CUBERT_KERNEL_NEEDS_FP64: the OpenCL server
   builds it only on devices with cl_khr_fp64 (cubert_op_matmul checks CUBERT_FEATURE_FP64
   first and answers UNAVAILABLE elsewhere). */
#define CUBERT_KERNEL_FILE_FLAGS CUBERT_KERNEL_NEEDS_FP64
#include "cubert/cube.h"

#define MM_TY double
#define MM_SUFFIX f64
#define MM_INFO_ALPHA(k) INFO_F64(k)
#include "matmul_common.h"

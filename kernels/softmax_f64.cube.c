/* softmax_f64: the row softmax of cubert_op_softmax for f64 (the body: softmax_body.h). A file
   of its own marked CUBE_NEEDS_FP64 (cubert/cube.h): its OpenCL program is built only on
   devices with cl_khr_fp64, and the op checks CUBERT_FEATURE_FP64 before launching it. */
#define CUBE_NEEDS_FP64 1
#include "cubert/cube.h"

#define SM_T double
#define SM_NAME softmax_f64
#define SM_SHARED softmax_f64_shared
#define SM_ONLINE_NAME softmax_online_f64
#define SM_ONLINE_SHARED softmax_online_f64_shared
#define SM_UNITS_NAME softmax_units_f64
#include "softmax_body.h"

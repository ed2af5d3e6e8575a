/* softmax_f32: the row softmax of cubert_op_softmax for f32 (the body: softmax_body.h). */
#include "cubert/cube.h"

#define SM_T float
#define SM_NAME softmax_f32
#define SM_SHARED softmax_f32_shared
#include "softmax_body.h"

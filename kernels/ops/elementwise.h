/* cubert — the launch plan of the elementwise kernels (elementwise.c): the output and its inputs
   broadcast to the output's shape, with the axes that are contiguous in every operand
   collapsed. cubert_op_unary, cubert_op_binary and cubert_op_cast (cast.c) launch through it. */
#ifndef CUBERT_OPS_ELEMENTWISE_H
#define CUBERT_OPS_ELEMENTWISE_H

#include <stdint.h>

#include "cubert/client.h"
#include "cubert/status.h"
#include "strided.h"

/* Builds the plan of out (operand 0) and the inputs ins[0..count-1), each broadcast to out's
   shape (cubert_ops_broadcast_strides, `names` naming them in messages), then collapsed. */
cubert_status cubert_ops_plan_make(const char *op, const cubert_tensor *out,
                                   const cubert_tensor *const *ins, const char *const *names,
                                   uint32_t count, cubert_strided_plan *plan);

#endif /* CUBERT_OPS_ELEMENTWISE_H */

/* cubert — what tests and benchmarks reach of cubert_op_softmax (softmax.c) beyond
   cubert/ops.h: its autotune set ("ops.softmax": 32 to 256 units per row, three passes or the
   online two) and its forced candidate. */
#ifndef CUBERT_OPS_SOFTMAX_H
#define CUBERT_OPS_SOFTMAX_H

#include "cubert/tune.h"

const cubert_tune_set *cubert_ops_softmax_tune_set(void);
/* As cubert_ops_reduce_force_candidate (reduce.h), for the calling thread's next softmaxes. */
void cubert_ops_softmax_force_candidate(int index);

#endif /* CUBERT_OPS_SOFTMAX_H */

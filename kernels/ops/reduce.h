/* cubert — what tests and benchmarks reach of cubert_op_reduce (reduce.c) beyond cubert/ops.h:
   its autotune set ("ops.reduce_axis", one candidate per geometry) and its forced candidate. */
#ifndef CUBERT_OPS_REDUCE_H
#define CUBERT_OPS_REDUCE_H

#include "cubert/tune.h"

const cubert_tune_set *cubert_ops_reduce_tune_set(void);
/* The calling thread's next reductions run candidate `index` of the set instead of the tuner's
   choice (forced_candidate.h says what an unfit one returns); -1 restores tuning. */
void cubert_ops_reduce_force_candidate(int index);

#endif /* CUBERT_OPS_REDUCE_H */

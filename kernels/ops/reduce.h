/* cubert — the autotune set of cubert_op_reduce (reduce.c) and a way to bypass it, for tests
   that must run every geometry and benchmarks that time fixed choices. */
#ifndef CUBERT_OPS_REDUCE_H
#define CUBERT_OPS_REDUCE_H

#include "cubert/tune.h"

/* The set cubert_op_reduce tunes ("ops.reduce_axis"). */
const cubert_tune_set *cubert_ops_reduce_tune_set(void);
/* With a candidate index >= 0 set, the calling thread's next reductions run that candidate (when
   it is valid for the problem; else UNAVAILABLE) instead of asking the tuner; -1 restores
   tuning. */
void cubert_ops_reduce_force_candidate(int index);

#endif /* CUBERT_OPS_REDUCE_H */

/* cubert — the autotune set of cubert_op_softmax (softmax.c) and a way to bypass it, for tests
   that must run every geometry and benchmarks that time fixed choices. */
#ifndef CUBERT_OPS_SOFTMAX_H
#define CUBERT_OPS_SOFTMAX_H

#include "cubert/tune.h"

/* The set cubert_op_softmax tunes ("ops.softmax"). */
const cubert_tune_set *cubert_ops_softmax_tune_set(void);
/* With a candidate index >= 0 set, the calling thread's next softmaxes run that candidate (when
   it is valid for the problem; else UNAVAILABLE) instead of asking the tuner; -1 restores
   tuning. */
void cubert_ops_softmax_force_candidate(int index);

#endif /* CUBERT_OPS_SOFTMAX_H */

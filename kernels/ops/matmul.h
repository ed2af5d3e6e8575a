/* cubert — what tests and benchmarks reach of cubert_op_matmul (matmul.c) beyond cubert/ops.h:
   its f32 autotune set and its forced candidate. */
#ifndef CUBERT_OPS_MATMUL_H
#define CUBERT_OPS_MATMUL_H

#include "cubert/tune.h"

/* The set "matmul_f32" ("matmul_f64" has the same candidates). */
const cubert_tune_set *cubert_ops_matmul_tune_set(void);

/* The calling thread's next products run candidate `index` of the sets "matmul_f32" and
   "matmul_f64" (one list: matmul.c's mm_candidates, in order) instead of the tuner's choice:
   UNAVAILABLE when it does not fit the problem or exceeds the device's shared memory or its
   kernel's unit limit; -1 restores tuning. */
void cubert_ops_matmul_force_candidate(int index);

#endif /* CUBERT_OPS_MATMUL_H */

/* cubert — what tests and benchmarks reach of cubert_op_matmul (matmul.c) beyond cubert/ops.h:
   its forced candidate. */
#ifndef CUBERT_OPS_MATMUL_H
#define CUBERT_OPS_MATMUL_H

/* The calling thread's next products run candidate `index` of the sets "matmul_f32" and
   "matmul_f64" (one list: 0 tile64x64, 1 tile128x64, 2 tile128x256c, 3 tile32x32, 4 simple,
   5 vec8x32, 6 big128k8, 7 big128k16) instead of the tuner's choice: UNAVAILABLE when it does
   not fit the problem or exceeds the device's shared memory or its kernel's unit limit; -1
   restores tuning. */
void cubert_ops_matmul_force_candidate(int index);

#endif /* CUBERT_OPS_MATMUL_H */

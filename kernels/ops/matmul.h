/* cubert — a way to bypass the autotuning of cubert_op_matmul (matmul.c), for tests that must
   run every kernel and benchmarks that time fixed choices. */
#ifndef CUBERT_OPS_MATMUL_H
#define CUBERT_OPS_MATMUL_H

/* With a candidate index >= 0 set, the calling thread's next products run that candidate (when
   it is valid for the problem; else UNAVAILABLE) instead of asking the tuner (sets "matmul_f32"
   and "matmul_f64", one candidate list: 0 tile64x64, 1 tile128x64, 2 tile128x256c, 3 tile32x32,
   4 simple, 5 vec8x32, 6 big128k8, 7 big128k16); -1 restores tuning. */
void cubert_ops_matmul_force_candidate(int index);

#endif /* CUBERT_OPS_MATMUL_H */

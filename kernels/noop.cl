/* cubert kernel library: the empty kernel (launch-latency benchmarks). */
__kernel void cubert_noop(void) {}

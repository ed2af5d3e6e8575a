/* The empty library kernel (noop.cl): measures launch overhead and nothing else. */
#include "cubert/kernels.h"

extern const char cubert_src_noop_cl[];

static void noop_cpu(const cubert_cpu_ctx *ctx) {
  (void)ctx;
}

const cubert_kernel_def cubert_kernel_noop = {
    .name = "noop",
    .opencl_source = cubert_src_noop_cl,
    .opencl_entry = "cubert_noop",
    .cpu = noop_cpu,
};

/* cubert — which CPU build of a kernel file the CPU server runs (cpu_variant.c): CMake's
   cubert_add_kernel_cpu_variants compiles the C side of some kernel files again for x86-64-v3
   and -v4, and the operations launch the widest build the host CPU runs. */
#ifndef CUBERT_OPS_CPU_VARIANT_H
#define CUBERT_OPS_CPU_VARIANT_H

#include "cubert/client.h"
#include "cubert/kernel.h"

/* The CPU builds of a kernel file (CUBERT_KERNEL_VARIANT_<name> says which were built). */
typedef enum cubert_ops_cpu_level {
  CUBERT_OPS_CPU_BASELINE = 0,
  CUBERT_OPS_CPU_X86V3 = 1, /* AVX2, FMA, BMI2 */
  CUBERT_OPS_CPU_X86V4 = 2, /* AVX-512 F, BW, VL, DQ, CD */
} cubert_ops_cpu_level;

/* The widest build the host CPU runs (detected once). */
cubert_ops_cpu_level cubert_ops_cpu_level_get(void);

/* The definition to launch on `client`: on the CPU server the widest of x86v4, x86v3 and
   baseline that was built (non-NULL) and that the host runs; on OpenCL always `baseline` (every
   build has the same OpenCL text, so one program serves them all). */
const cubert_kernel_def *cubert_ops_cpu_pick(cubert_client *client,
                                             const cubert_kernel_def *baseline,
                                             const cubert_kernel_def *x86v3,
                                             const cubert_kernel_def *x86v4);

#endif /* CUBERT_OPS_CPU_VARIANT_H */

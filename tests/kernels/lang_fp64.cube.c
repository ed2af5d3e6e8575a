/* Double kernels of the language's newer features (tests/cts/cts_lang_features.c): a double
   named scalar and ATOMIC_ADD_F64 (fp64 with 64-bit atomics on OpenCL). */
#define CUBE_NEEDS_FP64
#include "cubert/cube.h"

/* sum[0] += step * (UNIT_ID + 1) for every unit below n: step * n * (n + 1) / 2. */
UNIT_KERNEL(atomic_add_f64, n, (double, sum), (scalar, double, step), (scalar, uint32_t, n)) {
  ATOMIC_ADD_F64(sum, 0, step * (double)(UNIT_ID + 1));
}

/* Valid C, not OpenCL C (function pointers are not part of the kernel language): the C side
   builds, and the build-time OpenCL check (cubert_add_kernels with CUBERT_CHECK_KERNELS) must
   fail the build naming this file and the line below. */
#include "cubert/cube.h"

CUBE_FN int twice(int v) {
  return 2 * v;
}

UNIT_KERNEL(opencl_only, LEN(out), (int32_t, out)) {
  int (*f)(int) = twice; /* RULE_LINE */
  STORE_UNIT(out, f((int)UNIT_ID));
}

/* A 64-bit atomic built as on a device without cl_khr_int64_base_atomics (the prelude's
   CUBERT_NO_INT64_ATOMICS): the OpenCL build fails naming the extension, at the line below
   (tests/cts/cts_lang_features.c); the CPU server runs it. Outside the build-time OpenCL check
   (tests/CMakeLists.txt), as bad_opencl.cube.c is. */
#define CUBE_OPENCL_OPTIONS "-DCUBERT_NO_INT64_ATOMICS"
#include "cubert/cube.h"

UNIT_KERNEL(atomics64_unavailable, LEN(c), (uint64_t, c)) {
  ATOMIC_ADD(c, 0, 1); /* the line the build error names */
}

/* 64-bit atomics built as on a device without cl_khr_int64_base_atomics (the prelude's
   CUBERT_NO_INT64_ATOMICS): the OpenCL build fails naming the extension, at the lines below
   (tests/cts/cts_lang_features.c); the CPU server runs them. Outside the build-time OpenCL check
   (tests/CMakeLists.txt), as bad_opencl.cube.c is. */
#define CUBE_OPENCL_OPTIONS "-DCUBERT_NO_INT64_ATOMICS"
#include "cubert/cube.h"

UNIT_KERNEL(atomics64_unavailable, LEN(c), (uint64_t, c)) {
  ATOMIC_ADD(c, 0, 1); /* the line the build error names */
}

typedef struct count64 {
  uint64_t n;
} count64;

/* c[0] = the cube's units, counted by a 64-bit shared-memory atomic. */
PHASED_KERNEL(shared_atomics64_unavailable, (count64, sh), (uint64_t, c)) {
  PHASE {
    if (UNIT_POS == 0) sh->n = 0;
  }
  SYNC_CUBE();
  PHASE {
    SHARED_ATOMIC_ADD(&sh->n, (uint64_t)1); /* the line the build error names */
  }
  SYNC_CUBE();
  PHASE {
    if (UNIT_POS == 0) STORE(c, 0, sh->n);
  }
}

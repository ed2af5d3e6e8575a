/* A kernel file that is valid C but not valid OpenCL C (function pointers are not part of the
   kernel language): tests/cts/cts_language.c checks that the OpenCL build error names this
   file and the line below. */
#include "cubert/cube.h"

CUBE_FN int twice(int v) {
  return 2 * v;
}

UNIT_KERNEL(uses_function_pointer, INFO_U64(0), (int32_t, out)) {
  int (*f)(int) = twice; /* BAD_LINE: the OpenCL compiler rejects this line */
  STORE_UNIT(out, f((int)UNIT_ID));
}

/* 64 MiB of shared memory in a file no OpenCL compiler builds: as a driver that refuses to
   build more shared memory than it has (NVIDIA's ptxas: "uses too much shared data"), so a
   launch must be refused with SHARED_MEMORY before the program is built (tests/cts/
   cts_launch.c). */
typedef struct refused_shared {
  uint32_t words[16u << 20];
} refused_shared;
CUBE_KERNEL(shared_over_a_failing_build, (refused_shared, sh), (uint32_t, out)) {
  int (*f)(int) = twice; /* not OpenCL C: no OpenCL compiler builds this kernel */
  sh->words[UNIT_POS] = (uint32_t)f((int)UNIT_POS);
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->words[(UNIT_POS + 1) % CUBE_DIM]);
}

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

/* examples/first.cube.c: y = a * x + y, one unit per element (info word 0: a) */
#include "cubert/cube.h"

UNIT_KERNEL(saxpy, LEN(y), (const float, x), (float, y)) {
  STORE_UNIT(y, INFO_F32(0) * LOAD_UNIT(x) + LOAD_UNIT(y));
}

/* Rule: unit kernels have no barriers. Expected: "SYNC_CUBE() in a UNIT_KERNEL". */
#include "cubert/cube.h"

UNIT_KERNEL(sync_in_unit, LEN(y), (float, y)) {
  STORE_UNIT(y, 1.0f);
  SYNC_CUBE(); /* RULE_LINE */
}

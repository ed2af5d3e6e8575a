/* Rule: unit kernels have no shared memory, dynamic or not. Expected: the static assertion's
   message. */
#include "cubert/cube.h"

UNIT_KERNEL(staged, LEN(y), (float, y), (dynamic_shared, float, tile)) { /* RULE_LINE */
  STORE_UNIT(y, (float)LEN(tile));
}

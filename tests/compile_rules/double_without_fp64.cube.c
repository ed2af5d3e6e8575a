/* Rule: double only in files that declare CUBE_NEEDS_FP64. Expected: poisoned. */
#include "cubert/cube.h"

UNIT_KERNEL(uses_double, LEN(y), (float, y)) {
  double v = 0.5 * (double)UNIT_ID; /* RULE_LINE */
  STORE_UNIT(y, (float)v);
}

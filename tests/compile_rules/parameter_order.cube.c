/* Rule: buffers first, then named scalars, then at most one dynamic shared array. Expected: the
   static assertion's message. */
#include "cubert/cube.h"

UNIT_KERNEL(scaled, LEN(y), (scalar, float, a), (float, y)) { /* RULE_LINE */
  STORE_UNIT(y, a);
}

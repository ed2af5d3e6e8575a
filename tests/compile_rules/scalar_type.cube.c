/* Rule: a named scalar's type is one of int8_t .. uint64_t, float or double. Expected: the
   static assertion's message. */
#include "cubert/cube.h"

UNIT_KERNEL(flagged, LEN(y), (float, y), (scalar, bool, on)) { /* RULE_LINE */
  STORE_UNIT(y, on ? 1.0f : 0.0f);
}

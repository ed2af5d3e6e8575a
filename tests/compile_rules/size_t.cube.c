/* Rule: size_t is not part of the language (its width differs). Expected: poisoned. */
#include "cubert/cube.h"

UNIT_KERNEL(uses_size_t, LEN(y), (float, y)) {
  size_t i = UNIT_ID; /* RULE_LINE */
  STORE(y, i, 1.0f);
}

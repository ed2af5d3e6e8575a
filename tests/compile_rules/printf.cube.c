/* Rule: no C library calls in kernels. Expected: poisoned. */
#include "cubert/cube.h"

UNIT_KERNEL(uses_printf, LEN(y), (float, y)) {
  printf("%u\n", (unsigned)UNIT_ID); /* RULE_LINE */
  STORE_UNIT(y, 1.0f);
}

/* Rule: no variable-length arrays. Expected: -Werror=vla. */
#include "cubert/cube.h"

UNIT_KERNEL(uses_vla, LEN(y), (float, y)) {
  float tmp[INFO_U32(0) + 1]; /* RULE_LINE */
  tmp[0] = 1.0f;
  STORE_UNIT(y, tmp[0]);
}

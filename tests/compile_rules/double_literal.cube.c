/* Rule: without CUBE_NEEDS_FP64 a floating literal carries f (0.5f): `x * 0.5` computes in
   double. Expected (GCC): unsuffixed-float-constants; (clang): double-promotion. */
#include "cubert/cube.h"

UNIT_KERNEL(half_of, LEN(y), (const float, x), (float, y)) {
  STORE_UNIT(y, LOAD_UNIT(x) * 0.5); /* RULE_LINE */
}

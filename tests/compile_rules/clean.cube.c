/* A kernel file that follows every rule, in all three forms, with buffers, shared memory,
   EXCLUSIVE values, fp64 and helpers that use only some of what they are given: it must build
   without a single warning under -Wall -Wextra -Wpedantic (-Werror). */
#define CUBE_NEEDS_FP64 1
#include "cubert/cube.h"

typedef struct tile {
  float v[64];
} tile;

CUBE_FN float twice(float v) {
  return 2.0f * v;
}

UNIT_KERNEL(clean_unit, INFO_U64(0), (const float, x), (float, y), (int32_t, unused)) {
  STORE_UNIT(y, twice(LOAD_UNIT(x)));
}

CUBE_KERNEL(clean_cube, (tile, sh), (const float, x), (float, y)) {
  sh->v[UNIT_POS % 64] = LOAD(x, UNIT_ID);
  SYNC_CUBE();
  STORE(y, UNIT_ID, sh->v[(CUBE_DIM - 1 - UNIT_POS) % 64]);
}

CUBE_KERNEL(clean_no_shared, NO_SHARED, (double, y)) {
  STORE(y, UNIT_ID, (double)UNIT_POS);
}

PHASED_KERNEL(clean_phased, (tile, sh), (const float, x), (float, y)) {
  EXCLUSIVE(float, mine);
  PHASE {
    MY(mine) = LOAD(x, UNIT_ID);
    sh->v[UNIT_POS % 64] = MY(mine);
  }
  SYNC_CUBE();
  PHASE {
    STORE(y, UNIT_ID, MY(mine) + sh->v[0]);
  }
}

PHASED_KERNEL(clean_phased_empty, NO_SHARED, NO_BUFFERS) {
  PHASE {}
}

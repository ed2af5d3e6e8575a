/* Rule: in a phased kernel, barriers go between phases. Expected: "SYNC_CUBE() inside a PHASE
   block". */
#include "cubert/cube.h"

typedef struct tile {
  float v[64];
} tile;

PHASED_KERNEL(sync_in_phase, (tile, sh), (float, y)) {
  PHASE {
    sh->v[UNIT_POS] = 1.0f;
    SYNC_CUBE(); /* RULE_LINE */
    STORE(y, UNIT_ID, sh->v[0]);
  }
}

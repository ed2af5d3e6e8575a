/* Launches of many cubes for the kernel sanitizer (tests/sanitizer/sanitizer_bugs.c's
   check_cubes): big enough to run as several chunks, on several threads at once, against the
   launch's one buffer shadow. Each unit writes its own element of `out`; with INFO_U32(0) set,
   the last cube's last unit also writes element 0, which unit 0 of cube 0 writes: a race between
   the first and the last chunk's cubes, which different threads run. */
#include "cubert/cube.h"

#define CUBES_UNITS 256

typedef struct cubes_shared {
  float v[CUBES_UNITS];
} cubes_shared;

/* Fibers, shared memory and a barrier: out[i] = the id of the next unit of i's cube. */
CUBE_KERNEL(cubes_fiber, (cubes_shared, sh), (float, out)) {
  sh->v[UNIT_POS] = (float)UNIT_ID;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % CUBES_UNITS]);
  if (INFO_U32(0) && UNIT_ID == LEN(out) - 1) STORE(out, 0, -1.0f);
}

/* The phased form of the same. */
PHASED_KERNEL(cubes_phased, (cubes_shared, sh), (float, out)) {
  PHASE {
    sh->v[UNIT_POS] = (float)UNIT_ID;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % CUBES_UNITS]);
    if (INFO_U32(0) && UNIT_ID == LEN(out) - 1) STORE(out, 0, -1.0f);
  }
}

/* A unit kernel (chunks of units, not cubes): out[i] = i. */
UNIT_KERNEL(cubes_unit, LEN(out), (float, out)) {
  STORE(out, UNIT_ID, (float)UNIT_ID);
  if (INFO_U32(0) && UNIT_ID == LEN(out) - 1) STORE(out, 0, -1.0f);
}

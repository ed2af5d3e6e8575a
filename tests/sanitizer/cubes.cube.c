/* Launches of many cubes for the kernel sanitizer (tests/sanitizer/sanitizer_bugs.c's
   check_cubes): big enough to run as several chunks, on several threads at once, against the
   launch's one buffer shadow. Each unit writes its own element of `out`; with INFO_U32(0) set,
   the last cube's last unit also writes element 0, which unit 0 of cube 0 writes: a race between
   the first and the last chunk's cubes, which different threads run. The kernels after
   cubes_unit check same-value stores and private memory over such launches. */
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

/* A "found" flag over the chunks of a launch: the units whose id is a multiple of 1023 (in cubes
   of every chunk) set element 0, every other unit writes its id to its own element. INFO_U32(0):
   0 STORE_SAME of one value (clean), 1 plain STORE of one value (a same-value race), 2 STORE_SAME
   of different values (a race). */
UNIT_KERNEL(cubes_found, LEN(out), (float, out)) {
  const uint32_t how = INFO_U32(0);
  if (UNIT_ID % 1023 != 0)
    STORE(out, UNIT_ID, (float)UNIT_ID);
  else if (how == 0)
    STORE_SAME(out, 0, 1.0f);
  else if (how == 1)
    STORE(out, 0, 1.0f); /* @cubes_found */
  else
    STORE_SAME(out, 0, (float)UNIT_ID); /* @cubes_found_diff */
}

/* Private memory over the chunks of a launch: a[1] is never written, and the launch's last unit
   reads it when INFO_U32(0) is 1 (a report naming element LEN(out) - 1); every unit also adds
   1 / (id + 1) to element 0 atomically, a sum whose rounding depends on the order of the threads
   (no report: the check confirms a difference with a run in one order). GCC would warn about a. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(CUBERT_CUBE_OPENCL)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
UNIT_KERNEL(cubes_private, LEN(out), (float, out)) {
  float a[2];
  a[0] = 2.0f;
  const int last = INFO_U32(0) == 1 && UNIT_ID == LEN(out) - 1;
  if (UNIT_ID) STORE(out, UNIT_ID, a[last ? 1 : 0]);
  ATOMIC_ADD_F32(out, 0, 1.0f / (float)(UNIT_ID + 1));
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(CUBERT_CUBE_OPENCL)
#pragma GCC diagnostic pop
#endif

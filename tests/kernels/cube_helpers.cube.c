/* Kernels of the cube-helper conformance tests (tests/cts/cts_cube_helpers.c): the cube-level
   reduce and scan helpers in both cube forms and three element types, and shared-memory atomics
   (integer old values, float add/min/max) contended by every unit of a cube. */
#include "cubert/cube.h"

/* The scratch of the helpers: 256 elements, so cubes of up to 256 units. */
#define HELPERS_CAPACITY 256

/* Every helper on one value per unit: unit UNIT_ID writes 5 results at UNIT_ID * 5: sum, min,
   max of its cube's values, its inclusive and its exclusive prefix sum. The helpers run back
   to back on one scratch, which each must leave reusable. */
#define HELPER_KERNELS(T, sfx)                                                               \
  typedef struct helpers_shared_##sfx {                                                      \
    T scratch[HELPERS_CAPACITY];                                                             \
  } helpers_shared_##sfx;                                                                    \
  CUBE_KERNEL(helpers_fiber_##sfx, (helpers_shared_##sfx, sh), (const T, in), (T, out)) {    \
    const T v = LOAD(in, UNIT_ID);                                                           \
    T r;                                                                                     \
    CUBE_REDUCE_SUM(v, sh->scratch, r);                                                      \
    STORE(out, UNIT_ID * 5 + 0, r);                                                          \
    CUBE_REDUCE_MIN(v, sh->scratch, r);                                                      \
    STORE(out, UNIT_ID * 5 + 1, r);                                                          \
    CUBE_REDUCE_MAX(v, sh->scratch, r);                                                      \
    STORE(out, UNIT_ID * 5 + 2, r);                                                          \
    CUBE_SCAN_INCLUSIVE_SUM(v, sh->scratch, r);                                              \
    STORE(out, UNIT_ID * 5 + 3, r);                                                          \
    CUBE_SCAN_EXCLUSIVE_SUM(v, sh->scratch, r);                                              \
    STORE(out, UNIT_ID * 5 + 4, r);                                                          \
  }                                                                                          \
  PHASED_KERNEL(helpers_phased_##sfx, (helpers_shared_##sfx, sh), (const T, in), (T, out)) { \
    EXCLUSIVE(T, v);                                                                         \
    EXCLUSIVE(T, r);                                                                         \
    PHASE {                                                                                  \
      MY(v) = LOAD(in, UNIT_ID);                                                             \
    }                                                                                        \
    CUBE_REDUCE_SUM(MY(v), sh->scratch, MY(r));                                              \
    PHASE {                                                                                  \
      STORE(out, UNIT_ID * 5 + 0, MY(r));                                                    \
    }                                                                                        \
    CUBE_REDUCE_MIN(MY(v), sh->scratch, MY(r));                                              \
    PHASE {                                                                                  \
      STORE(out, UNIT_ID * 5 + 1, MY(r));                                                    \
    }                                                                                        \
    CUBE_REDUCE_MAX(MY(v), sh->scratch, MY(r));                                              \
    PHASE {                                                                                  \
      STORE(out, UNIT_ID * 5 + 2, MY(r));                                                    \
    }                                                                                        \
    CUBE_SCAN_INCLUSIVE_SUM(MY(v), sh->scratch, MY(r));                                      \
    PHASE {                                                                                  \
      STORE(out, UNIT_ID * 5 + 3, MY(r));                                                    \
    }                                                                                        \
    /* in place: the value is read before the result is written */                           \
    CUBE_SCAN_EXCLUSIVE_SUM(MY(v), sh->scratch, MY(v));                                      \
    PHASE {                                                                                  \
      STORE(out, UNIT_ID * 5 + 4, MY(v));                                                    \
    }                                                                                        \
  }

HELPER_KERNELS(float, f32)
HELPER_KERNELS(int32_t, i32)
HELPER_KERNELS(uint32_t, u32)

/* Shared atomics contended by every unit of a cube. Cube c writes to `sums` at c * 3: the
   float sum, min and max of its values (SHARED_ATOMIC_*_F32); each unit writes the old values
   it got at UNIT_ID * 4 in `olds`: from ADD of 1 (a permutation of 0 .. units-1), from XCHG of
   UNIT_POS + 1 (with the final value: a permutation of 0 .. units), from CAS(0 -> UNIT_POS +
   1) (0 for exactly one unit, the winner's UNIT_POS + 1 for the others), and from MAX of
   UNIT_POS on an int32 starting at -1 (-1 for exactly one unit, the first; a UNIT_POS for the
   others). The last cube-sized part of `olds` receives each cube's final XCHG value. */
typedef struct atomics_shared {
  float sum, lo, hi;
  uint32_t count, swap, winner;
  int32_t top;
} atomics_shared;

CUBE_FN void atomics_init(CUBE_SHARED atomics_shared *sh) {
  sh->sum = 0.0f;
  sh->lo = INFINITY;
  sh->hi = -INFINITY;
  sh->count = 0;
  sh->swap = 0;
  sh->winner = 0;
  sh->top = -1;
}

CUBE_KERNEL(shared_atomics_fiber, (atomics_shared, sh), (const float, in), (float, sums),
            (uint32_t, olds)) {
  if (UNIT_POS == 0) atomics_init(sh);
  SYNC_CUBE();
  const float v = LOAD(in, UNIT_ID);
  SHARED_ATOMIC_ADD_F32(&sh->sum, v);
  SHARED_ATOMIC_MIN_F32(&sh->lo, v);
  SHARED_ATOMIC_MAX_F32(&sh->hi, v);
  STORE(olds, UNIT_ID * 4 + 0, SHARED_ATOMIC_ADD(&sh->count, 1u));
  STORE(olds, UNIT_ID * 4 + 1, SHARED_ATOMIC_XCHG(&sh->swap, (uint32_t)UNIT_POS + 1));
  STORE(olds, UNIT_ID * 4 + 2, SHARED_ATOMIC_CAS(&sh->winner, 0u, (uint32_t)UNIT_POS + 1));
  STORE(olds, UNIT_ID * 4 + 3, (uint32_t)SHARED_ATOMIC_MAX(&sh->top, (int32_t)UNIT_POS));
  SYNC_CUBE();
  if (UNIT_POS == 0) {
    STORE(sums, CUBE_POS * 3 + 0, sh->sum);
    STORE(sums, CUBE_POS * 3 + 1, sh->lo);
    STORE(sums, CUBE_POS * 3 + 2, sh->hi);
    STORE(olds, CUBE_COUNT * CUBE_DIM * 4 + CUBE_POS, sh->swap);
  }
}

PHASED_KERNEL(shared_atomics_phased, (atomics_shared, sh), (const float, in), (float, sums),
              (uint32_t, olds)) {
  PHASE {
    if (UNIT_POS == 0) atomics_init(sh);
  }
  SYNC_CUBE();
  PHASE {
    const float v = LOAD(in, UNIT_ID);
    SHARED_ATOMIC_ADD_F32(&sh->sum, v);
    SHARED_ATOMIC_MIN_F32(&sh->lo, v);
    SHARED_ATOMIC_MAX_F32(&sh->hi, v);
    STORE(olds, UNIT_ID * 4 + 0, SHARED_ATOMIC_ADD(&sh->count, 1u));
    STORE(olds, UNIT_ID * 4 + 1, SHARED_ATOMIC_XCHG(&sh->swap, (uint32_t)UNIT_POS + 1));
    STORE(olds, UNIT_ID * 4 + 2, SHARED_ATOMIC_CAS(&sh->winner, 0u, (uint32_t)UNIT_POS + 1));
    STORE(olds, UNIT_ID * 4 + 3, (uint32_t)SHARED_ATOMIC_MAX(&sh->top, (int32_t)UNIT_POS));
  }
  SYNC_CUBE();
  PHASE {
    if (UNIT_POS == 0) {
      STORE(sums, CUBE_POS * 3 + 0, sh->sum);
      STORE(sums, CUBE_POS * 3 + 1, sh->lo);
      STORE(sums, CUBE_POS * 3 + 2, sh->hi);
      STORE(olds, CUBE_COUNT * CUBE_DIM * 4 + CUBE_POS, sh->swap);
    }
  }
}

/* Planted bugs for the kernel sanitizer (tests/sanitizer/sanitizer_bugs.c): each bug class in
   each kernel form, and its corrected twin (`_ok`). A comment `@name` marks the line a report
   must name (the test finds it in this file). Bugs happen only in cube (0, 1, 0) of a launch of
   (1, 2, 1) cubes of 8 units, so the report's cube is known; `out` has one float per unit. */
#include "cubert/cube.h"

#define UNITS 8

typedef struct shared8 {
  float v[UNITS];
} shared8;

/* ---- CUBE_KERNEL (fibers) ---- */

/* Write after write: every unit writes v[0] in one barrier interval. */
CUBE_KERNEL(ww_fiber, (shared8, sh), (float, out)) {
  if (CUBE_POS_Y == 1 || UNIT_POS == 0) sh->v[0] = (float)UNIT_POS; /* @ww_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}
CUBE_KERNEL(ww_fiber_ok, (shared8, sh), (float, out)) {
  if (UNIT_POS == 0) sh->v[0] = (float)UNIT_POS;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* Read after write: a unit reads its left neighbour's slot with no barrier between. */
CUBE_KERNEL(rw_fiber_ok, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS] = (float)UNIT_POS;
  if (CUBE_POS_Y == 0) SYNC_CUBE();
  if (CUBE_POS_Y == 1) SYNC_CUBE();
  STORE(out, UNIT_ID, UNIT_POS ? sh->v[UNIT_POS - 1] : 0.0f);
}
CUBE_KERNEL(rw_fiber, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS] = (float)UNIT_POS; /* @rw_fiber_write */
  if (CUBE_POS_Y == 0) SYNC_CUBE();
  STORE(out, UNIT_ID, UNIT_POS ? sh->v[UNIT_POS - 1] : 0.0f); /* @rw_fiber */
}

/* Write after read: the scan step that overwrites a slot its right neighbour still reads.
   Kept in the fiber form: phased by the build, its units run in another order and the sanitizer
   reports the same race from the writer's side (unit 0, line 46), not the reader's that
   sanitizer_bugs.c expects. */
CUBE_KERNEL_FIBERS(war_fiber, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE();
  float left = UNIT_POS ? sh->v[UNIT_POS - 1] : 0.0f; /* @war_fiber */
  if (CUBE_POS_Y == 0) SYNC_CUBE();
  sh->v[UNIT_POS] += left; /* @war_fiber_write */
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[UNIT_POS]);
}

/* Atomics on one shared word by every unit: no race. */
typedef struct shared_counter {
  int32_t count;
} shared_counter;
CUBE_KERNEL(atomic_fiber_ok, (shared_counter, sh), (float, out)) {
  if (UNIT_POS == 0) sh->count = 0;
  SYNC_CUBE();
  SHARED_ATOMIC_ADD(&sh->count, 1);
  SYNC_CUBE();
  STORE(out, UNIT_ID, (float)sh->count);
}

/* Index one past the shared array (bounds-strict names the line). */
CUBE_KERNEL(oob_index_fiber, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS + (CUBE_POS_Y == 1)] = 1.0f; /* @oob_index_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, 0.0f);
}
/* Through a pointer: the redzone after the shared memory catches it. */
CUBE_KERNEL(oob_ptr_fiber, (shared8, sh), (float, out)) {
  CUBE_SHARED float *p = (CUBE_SHARED float *)sh;
  p[UNIT_POS + 2 * UNITS * (CUBE_POS_Y == 1 && UNIT_POS == 3)] = 1.0f; /* @oob_ptr_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, 0.0f);
}
CUBE_KERNEL(oob_fiber_ok, (shared8, sh), (float, out)) {
  CUBE_SHARED float *p = (CUBE_SHARED float *)sh;
  p[UNIT_POS] = 1.0f;
  sh->v[UNIT_POS] = 2.0f;
  SYNC_CUBE();
  STORE(out, UNIT_ID, 0.0f);
}

/* Reads a slot nobody wrote (cube 1 writes only the even ones). */
CUBE_KERNEL(uninit_fiber, (shared8, sh), (float, out)) {
  if (CUBE_POS_Y == 0 || UNIT_POS % 2 == 0) sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[UNIT_POS ^ 1]); /* @uninit_fiber */
}
CUBE_KERNEL(uninit_fiber_ok, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[UNIT_POS ^ 1]);
}

/* Barrier divergence: an early return before a barrier. */
CUBE_KERNEL(return_fiber, (shared8, sh), (float, out)) {
  if (CUBE_POS_Y == 1 && UNIT_POS == 5) return;
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE(); /* @return_fiber */
  STORE(out, UNIT_ID, sh->v[UNIT_POS]);
}
CUBE_KERNEL(return_fiber_ok, (shared8, sh), (float, out)) {
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE();
  if (CUBE_POS_Y == 1 && UNIT_POS == 5) return;
  STORE(out, UNIT_ID, sh->v[UNIT_POS]);
}

/* Private array indexed past its end. */
CUBE_KERNEL(private_fiber, NO_SHARED, (float, out)) {
  float a[4];
  for (int i = 0; i < 4; ++i) a[i] = (float)i;
  STORE(out, UNIT_ID, a[INFO_U32(0) + (CUBE_POS_Y == 1 && UNIT_POS == 6)]); /* @private_fiber */
}

/* Buffer race inside a cube: unit 3 also writes unit 2's element, no barrier between. */
CUBE_KERNEL(ww_buffer_fiber, NO_SHARED, (float, out)) {
  STORE(out, UNIT_ID, 1.0f);                                           /* @ww_buffer_fiber_first */
  if (CUBE_POS_Y == 1 && UNIT_POS == 3) STORE(out, UNIT_ID - 1, 2.0f); /* @ww_buffer_fiber */
}
/* The same with a barrier between: ordered. */
CUBE_KERNEL(ww_buffer_fiber_ok, NO_SHARED, (float, out)) {
  STORE(out, UNIT_ID, 1.0f);
  SYNC_CUBE();
  if (CUBE_POS_Y == 1 && UNIT_POS == 3) STORE(out, UNIT_ID - 1, 2.0f);
}
/* Buffer race between cubes: a barrier orders only the units of one cube. */
CUBE_KERNEL(rw_buffer_fiber, NO_SHARED, (float, out)) {
  STORE(out, UNIT_ID, 1.0f);
  SYNC_CUBE();
  float v = CUBE_POS_Y == 1 && UNIT_POS == 2 ? LOAD(out, 1) : 0.0f; /* @rw_buffer_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, v); /* @rw_buffer_fiber_write */
}
CUBE_KERNEL(rw_buffer_fiber_ok, NO_SHARED, (float, out)) {
  STORE(out, UNIT_ID, 1.0f);
  SYNC_CUBE();
  float v = CUBE_POS_Y == 1 && UNIT_POS == 2 ? LOAD(out, UNIT_ID - 1) : 0.0f;
  SYNC_CUBE();
  STORE(out, UNIT_ID, v);
}
/* Buffer atomics by every unit of every cube on one element: no race. */
CUBE_KERNEL(atomic_buffer_fiber_ok, NO_SHARED, (int32_t, count)) {
  ATOMIC_ADD(count, 0, 1);
}

/* ---- PHASED_KERNEL ---- */

/* Buffer race inside a phase: unit 3 reads the element unit 4 then writes. */
PHASED_KERNEL(war_buffer_phased, NO_SHARED, (float, out)) {
  PHASE {
    float v = CUBE_POS_Y == 1 && UNIT_POS == 3 ? LOAD(out, UNIT_ID + 1) : 0.0f; /* @war_read */
    STORE(out, UNIT_ID, v + 1.0f); /* @war_buffer_phased */
  }
}
/* Each unit reads the next element in one phase and writes its own after a barrier. */
PHASED_KERNEL(war_buffer_phased_ok, NO_SHARED, (float, out)) {
  EXCLUSIVE(float, v);
  PHASE {
    MY(v) = UNIT_POS + 1 < UNITS ? LOAD(out, UNIT_ID + 1) : 0.0f;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, MY(v) + 1.0f);
  }
}
/* Every cube writes one element outside its phases (every unit of the cube does, on a GPU). */
PHASED_KERNEL(ww_buffer_phased, NO_SHARED, (float, out)) {
  PHASE {
    STORE(out, UNIT_ID, 1.0f);
  }
  SYNC_CUBE();
  STORE(out, 0, (float)CUBE_POS); /* @ww_buffer_phased */
}

/* A missing SYNC_CUBE between two phases: the second reads what the first wrote. */
PHASED_KERNEL(rw_phased, (shared8, sh), (float, out)) {
  PHASE {
    sh->v[UNIT_POS] = (float)UNIT_POS; /* @rw_phased_write */
  }
  if (CUBE_POS_Y == 0) SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % UNITS]); /* @rw_phased */
  }
}
PHASED_KERNEL(rw_phased_ok, (shared8, sh), (float, out)) {
  PHASE {
    sh->v[UNIT_POS] = (float)UNIT_POS;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % UNITS]);
  }
}

/* Every unit writes v[0] in one phase. */
PHASED_KERNEL(ww_phased, (shared8, sh), (float, out)) {
  PHASE {
    if (CUBE_POS_Y == 1 || UNIT_POS == 0) sh->v[0] = (float)UNIT_POS; /* @ww_phased */
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[0]);
  }
}

/* Every unit reads v[0], then unit 0 writes it in the same interval: a race with each other
   reader; the record keeps the interval's first two readers, so the report names unit 1. */
PHASED_KERNEL(war_phased, (shared8, sh), (float, out)) {
  PHASE {
    sh->v[UNIT_POS] = 1.0f;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[0]); /* @war_phased_read */
  }
  if (CUBE_POS_Y == 0) SYNC_CUBE();
  PHASE {
    if (UNIT_POS == 0) sh->v[0] = 2.0f; /* @war_phased */
  }
}

/* Units store neighbouring bytes of one 4-byte word (the shadow's records per word split into
   records per byte: no race); in cube (0, 1, 0) units 2k and 2k + 1 store one byte. */
typedef struct shared_bytes {
  uint8_t b[UNITS];
} shared_bytes;
PHASED_KERNEL(bytes_phased, (shared_bytes, sh), (float, out)) {
  PHASE {
    const uint32_t at = (CUBE_POS_Y == 1 ? UNIT_POS / 2 : UNIT_POS) % UNITS;
    sh->b[at] = (uint8_t)UNIT_POS; /* @bytes_phased */
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, (float)sh->b[(UNIT_POS + 1) % UNITS]);
  }
}
PHASED_KERNEL(bytes_phased_ok, (shared_bytes, sh), (float, out)) {
  PHASE {
    sh->b[UNIT_POS % UNITS] = (uint8_t)UNIT_POS;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, (float)sh->b[(UNIT_POS + 1) % UNITS]);
  }
}

PHASED_KERNEL(oob_index_phased, (shared8, sh), (float, out)) {
  PHASE {
    sh->v[UNIT_POS + (CUBE_POS_Y == 1)] = 1.0f; /* @oob_index_phased */
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, 0.0f);
  }
}
PHASED_KERNEL(oob_ptr_phased, (shared8, sh), (float, out)) {
  PHASE {
    CUBE_SHARED float *p = sh->v;
    p[UNIT_POS + (CUBE_POS_Y == 1 && UNIT_POS == 2 ? UNITS * 3 : 0)] = 1.0f; /* @oob_ptr_phased */
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, 0.0f);
  }
}
PHASED_KERNEL(oob_phased_ok, (shared8, sh), (float, out)) {
  PHASE {
    CUBE_SHARED float *p = sh->v;
    p[UNIT_POS] = 1.0f;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[UNIT_POS]);
  }
}

PHASED_KERNEL(uninit_phased, (shared8, sh), (float, out)) {
  PHASE {
    if (CUBE_POS_Y == 0 || UNIT_POS != 4) sh->v[UNIT_POS] = 1.0f;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % UNITS]); /* @uninit_phased */
  }
}

/* Barrier divergence in the phased form: a `return` inside a PHASE does not compile (the PHASE
   is an `omp simd` loop), and neither does a SYNC_CUBE() inside one (a static assertion:
   tests/compile_rules/sync_in_phase.cube.c). */

/* EXCLUSIVE_ARRAY indexed past its size. */
PHASED_KERNEL(private_phased, NO_SHARED, (float, out)) {
  EXCLUSIVE_ARRAY(float, acc, 4);
  PHASE {
    for (int i = 0; i < 4; ++i) MY_AT(acc, i) = (float)i;
  }
  PHASE {
    const uint32_t i = INFO_U32(0) + (CUBE_POS_Y == 1 && UNIT_POS == 6);
    STORE(out, UNIT_ID, MY_AT(acc, i)); /* @private_phased */
  }
}

/* ---- UNIT_KERNEL ---- */

UNIT_KERNEL(private_unit, LEN(out), (float, out)) {
  float a[4];
  for (int i = 0; i < 4; ++i) a[i] = (float)i;
  STORE_UNIT(out, a[INFO_U32(0) + (UNIT_ID == 13)]); /* @private_unit */
}

/* ---- private memory read before it is written ----
   Unit 13 (unit 5 of cube (0, 1, 0)) reads a[INFO_U32(0)], never written unless it is 0; the
   sanitize copy fills it with 0xfe bytes and the zeroed copy with zeros, so the output differs. */
UNIT_KERNEL(uninit_private_unit, LEN(out), (float, out)) { /* @uninit_private_unit */
  float a[4];
  a[0] = 1.0f;
  STORE_UNIT(out, a[UNIT_ID == 13 ? INFO_U32(0) % 4 : 0]);
}
UNIT_KERNEL(uninit_private_unit_ok, LEN(out), (float, out)) {
  float a[4];
  for (int i = 0; i < 4; ++i) a[i] = (float)i;
  STORE_UNIT(out, a[UNIT_ID == 13 ? INFO_U32(0) % 4 : 0]);
}
/* A private scalar that unit 6 of cube (0, 1, 0) never sets. GCC would warn about it. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(CUBERT_CUBE_OPENCL)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
CUBE_KERNEL(uninit_scalar_fiber, NO_SHARED, (float, out)) { /* @uninit_scalar_fiber */
  float x;
  if (!(CUBE_POS_Y == 1 && UNIT_POS == 6)) x = (float)UNIT_POS;
  SYNC_CUBE();
  STORE(out, UNIT_ID, x + 1.0f);
}
/* A private scalar read before it is written whose value never reaches an output: clean. */
CUBE_KERNEL(uninit_scalar_fiber_ok, NO_SHARED, (float, out)) {
  float x;
  if (UNIT_POS != 6) x = (float)UNIT_POS;
  STORE(out, UNIT_ID, UNIT_POS != 6 ? x + 1.0f : 0.0f);
}
/* The same in a phased kernel's EXCLUSIVE value. */
PHASED_KERNEL(uninit_exclusive_phased, NO_SHARED, (float, out)) { /* @uninit_exclusive_phased */
  EXCLUSIVE(float, v);
  PHASE {
    if (!(CUBE_POS_Y == 1 && UNIT_POS == 2)) MY(v) = 1.0f;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, MY(v));
  }
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(CUBERT_CUBE_OPENCL)
/* An integer divisor that unit 5 of cube (0, 1, 0) never sets: 0xfefefefe in the sanitize copy
   (the quotient 0), 0 in the zeroed copy, which divides by zero there. */
UNIT_KERNEL(uninit_divisor_unit, LEN(out), (float, out)) {
  int32_t d;
  if (UNIT_ID != 13) d = (int32_t)UNIT_ID + 1;
  STORE_UNIT(out, (float)(100 / d)); /* @uninit_divisor_unit */
}
#pragma GCC diagnostic pop
#endif

/* ---- integer division by zero ----
   Unit 5 of cube (0, 1, 0) divides by INFO_U32(0) >> 4, which is 0 (the info word is 3): in each
   form, the fiber form kept on fibers. */
UNIT_KERNEL(div_unit, LEN(out), (float, out)) {
  const int32_t d = UNIT_ID == 13 ? (int32_t)(INFO_U32(0) >> 4) : 1;
  STORE_UNIT(out, (float)((int32_t)UNIT_ID / d)); /* @div_unit */
}
UNIT_KERNEL(div_unit_ok, LEN(out), (float, out)) {
  const int32_t d = UNIT_ID == 13 ? (int32_t)(INFO_U32(0) >> 4) : 1;
  STORE_UNIT(out, d ? (float)((int32_t)UNIT_ID / d) : 0.0f);
}
CUBE_KERNEL_FIBERS(div_fiber, NO_SHARED, (float, out)) {
  const uint32_t d = CUBE_POS_Y == 1 && UNIT_POS == 5 ? INFO_U32(0) >> 4 : 1;
  SYNC_CUBE();
  STORE(out, UNIT_ID, (float)((uint32_t)UNIT_POS % d)); /* @div_fiber */
}
PHASED_KERNEL(div_phased, NO_SHARED, (float, out)) {
  PHASE {
    const uint32_t d = CUBE_POS_Y == 1 && UNIT_POS == 5 ? INFO_U32(0) >> 4 : 1;
    STORE(out, UNIT_ID, (float)((uint32_t)UNIT_POS / d)); /* @div_phased */
  }
}

/* ---- same-value writes ----
   A "found" flag: the units whose UNIT_ID % 8 is INFO_U32(0) (one per cube) store 1 to element
   0. Plain STORE is a same-value race; STORE_SAME declares it intended; STORE_SAME of different
   values is a race again. */
UNIT_KERNEL(found_flag_unit, LEN(out), (float, out)) {
  if (UNIT_ID % UNITS == INFO_U32(0)) STORE(out, 0, 1.0f); /* @found_flag_unit */
}
UNIT_KERNEL(found_flag_unit_ok, LEN(out), (float, out)) {
  if (UNIT_ID % UNITS == INFO_U32(0)) STORE_SAME(out, 0, 1.0f);
}
UNIT_KERNEL(found_diff_unit, LEN(out), (float, out)) {
  if (UNIT_ID % UNITS == INFO_U32(0)) STORE_SAME(out, 0, (float)UNIT_ID); /* @found_diff_unit */
}
/* The same on shared memory: every unit of cube (0, 1, 0) (and unit 0 of cube 0) stores to
   v[0], then unit 0 copies it out. */
CUBE_KERNEL(found_flag_fiber, (shared8, sh), (float, out)) {
  if (UNIT_POS == 0 || CUBE_POS_Y == 1) sh->v[0] = 1.0f; /* @found_flag_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}
CUBE_KERNEL(found_flag_fiber_ok, (shared8, sh), (float, out)) {
  if (UNIT_POS == 0 || CUBE_POS_Y == 1) SHARED_STORE_SAME(&sh->v[0], 1.0f);
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}
CUBE_KERNEL(found_diff_fiber, (shared8, sh), (float, out)) {
  if (UNIT_POS == 0 || CUBE_POS_Y == 1)
    SHARED_STORE_SAME(&sh->v[0], (float)UNIT_POS); /* @found_diff_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}
PHASED_KERNEL(found_flag_phased_ok, (shared8, sh), (float, out)) {
  PHASE {
    if (UNIT_POS % 2 == 1) SHARED_STORE_SAME(&sh->v[0], 1.0f);
    if (UNIT_POS == 0) SHARED_STORE_SAME(&sh->v[0], 1.0f);
  }
  SYNC_CUBE();
  PHASE {
    STORE_SAME(out, CUBE_POS, sh->v[0]);
  }
}

/* ---- a return before a barrier, then a read of what the returned unit never wrote ---- */
CUBE_KERNEL(return_read_fiber, (shared8, sh), (float, out)) {
  if (CUBE_POS_Y == 1 && (UNIT_POS == 5 || UNIT_POS == 6)) return;
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE(); /* @return_read_fiber */
  STORE(out, UNIT_ID, sh->v[(UNIT_POS + 1) % UNITS]);
}

/* Two units write one element: unit 13 (unit 5 of cube (0, 1, 0)) also writes unit 12's. */
UNIT_KERNEL(ww_buffer_unit, LEN(out), (float, out)) {
  STORE(out, UNIT_ID == 13 ? 12 : UNIT_ID, (float)UNIT_ID); /* @ww_buffer_unit */
}
UNIT_KERNEL(ww_buffer_unit_ok, LEN(out), (float, out)) {
  STORE(out, UNIT_ID, 1.0f);
}
/* A unit reads an element another unit writes in the same launch. */
UNIT_KERNEL(rw_buffer_unit, LEN(out), (float, out)) {
  float v = UNIT_ID == 13 ? LOAD(out, 12) : 0.0f; /* @rw_buffer_unit */
  STORE(out, UNIT_ID, v + 1.0f);                  /* @rw_buffer_unit_write */
}

/* ---- buffer elements past the end, through a helper ----
   A tiled kernel's edge load in a helper macro (as the library's matmul indexes its tiles):
   unit 7 of cube (0, 1, 0) reads element 16 of 16. The report names the buffer, the element and
   the line where the helper is used, which is where the bounds check is. */
#define TILE_AT(buf, row, col) LOAD(buf, (row)*UNITS + (col))
CUBE_KERNEL(oob_buffer_fiber, NO_SHARED, (float, out)) {
  const uint32_t col = UNIT_POS + (CUBE_POS_Y == 1 && UNIT_POS == 7);
  const float v = TILE_AT(out, CUBE_POS_Y, col); /* @oob_buffer_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, v);
}
UNIT_KERNEL(oob_buffer_unit, LEN(out), (float, out)) {
  STORE_UNIT(out, 1.0f + TILE_AT(out, 0, UNIT_ID + (UNIT_ID == 13) * 3)); /* @oob_buffer_unit */
}

/* ---- wild pointers ----
   Unit 2 of cube (0, 1, 0) accesses memory outside everything a unit may touch; the others use
   their own element of `out`. INFO_U32(0) picks the bug: bit 0 a private pointer never set
   (`ptrs[2]`: the sanitize copy fills it with 0xfe bytes, so it holds 0xfefefefefefefefe, no
   canonical address), else the constant address 64 (in the first page, which is never mapped);
   bit 1 a store of 1 before the load; bit 2 no bug (the corrected twin: every unit adds 1 to its
   element). The sanitizer stops the unit before the access, so the memory is never touched
   (only validate mode runs the bugs: the plain copy would fault). */
CUBE_FN CUBE_GLOBAL float *wild_ptr(CUBE_GLOBAL float *own, int wild_unit, uint32_t bug) {
  CUBE_GLOBAL float *ptrs[3];
  ptrs[0] = own;
  ptrs[1] = (CUBE_GLOBAL float *)(uint64_t)64;
  return ptrs[wild_unit && !(bug & 4) ? 1 + (bug & 1) : 0];
}
CUBE_KERNEL(wild_fiber, NO_SHARED, (float, out)) {
  CUBE_GLOBAL float *p = wild_ptr(out + UNIT_ID, CUBE_POS_Y == 1 && UNIT_POS == 2, INFO_U32(0));
  if (INFO_U32(0) & 2) *p = 1.0f; /* @wild_store_fiber */
  const float v = *p;             /* @wild_load_fiber */
  SYNC_CUBE();
  STORE(out, UNIT_ID, v + 1.0f);
}
PHASED_KERNEL(wild_phased, NO_SHARED, (float, out)) {
  EXCLUSIVE(float, v);
  PHASE {
    CUBE_GLOBAL float *p = wild_ptr(out + UNIT_ID, CUBE_POS_Y == 1 && UNIT_POS == 2, INFO_U32(0));
    if (INFO_U32(0) & 2) *p = 1.0f; /* @wild_store_phased */
    MY(v) = *p;                     /* @wild_load_phased */
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, MY(v) + 1.0f);
  }
}
UNIT_KERNEL(wild_unit, LEN(out), (float, out)) {
  CUBE_GLOBAL float *p = wild_ptr(out + UNIT_ID, UNIT_ID == UNITS + 2, INFO_U32(0));
  if (INFO_U32(0) & 2) *p = 1.0f; /* @wild_store_unit */
  const float v = *p;             /* @wild_load_unit */
  STORE(out, UNIT_ID, v + 1.0f);
}

/* ---- buffers nothing wrote ----
   The bug is the host's: `in` comes from cubert_client_empty and only its first INFO_U32(0)
   elements are filled (by a host write or by fill_first), so the first unit of cube (0, 1, 0)
   reads an element nothing wrote. The kernels are correct for a filled `in`. */
UNIT_KERNEL(read_in_unit, LEN(out), (const float, in), (float, out)) {
  STORE(out, UNIT_ID, LOAD(in, UNIT_ID) + 1.0f); /* @read_in_unit */
}
CUBE_KERNEL(read_in_fiber, NO_SHARED, (const float, in), (float, out)) {
  STORE(out, UNIT_ID, LOAD(in, UNIT_ID) + 1.0f); /* @read_in_fiber */
}
PHASED_KERNEL(read_in_phased, NO_SHARED, (const float, in), (float, out)) {
  PHASE {
    STORE(out, UNIT_ID, LOAD(in, UNIT_ID) + 1.0f); /* @read_in_phased */
  }
}
/* Writes the first INFO_U32(0) elements of `out`. */
UNIT_KERNEL(fill_first, LEN(out), (float, out)) {
  if (UNIT_ID < INFO_U32(0)) STORE(out, UNIT_ID, 2.0f);
}
/* Reads and writes back: an element it reads before any write is unwritten. */
UNIT_KERNEL(increment_unit, LEN(out), (float, out)) {
  STORE(out, UNIT_ID, LOAD(out, UNIT_ID) + 1.0f); /* @increment_unit */
}

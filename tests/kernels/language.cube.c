/* Kernels of the kernel-language conformance tests (tests/cts/cts_language.c): each exercises
   one part of cubert/cube.h, on every server, against a host reference in the test. */
#include "cubert/cube.h"

/* Every position a unit can ask for, 16 words per unit at UNIT_ID * 16. */
#define POSITIONS_WORDS 16
#define WRITE_POSITIONS(out)                                                     \
  do {                                                                           \
    const uint64_t at_ = UNIT_ID * POSITIONS_WORDS;                              \
    STORE(out, at_ + 0, UNIT_POS_X);                                             \
    STORE(out, at_ + 1, UNIT_POS_Y);                                             \
    STORE(out, at_ + 2, UNIT_POS_Z);                                             \
    STORE(out, at_ + 3, UNIT_POS);                                               \
    STORE(out, at_ + 4, CUBE_POS_X);                                             \
    STORE(out, at_ + 5, CUBE_POS_Y);                                             \
    STORE(out, at_ + 6, CUBE_POS_Z);                                             \
    STORE(out, at_ + 7, (uint32_t)CUBE_POS);                                     \
    STORE(out, at_ + 8, CUBE_DIM_X * 100 + CUBE_DIM_Y * 10 + CUBE_DIM_Z);        \
    STORE(out, at_ + 9, CUBE_DIM);                                               \
    STORE(out, at_ + 10, CUBE_COUNT_X * 100 + CUBE_COUNT_Y * 10 + CUBE_COUNT_Z); \
    STORE(out, at_ + 11, (uint32_t)CUBE_COUNT);                                  \
    STORE(out, at_ + 12, ABSOLUTE_POS_X);                                        \
    STORE(out, at_ + 13, ABSOLUTE_POS_Y);                                        \
    STORE(out, at_ + 14, ABSOLUTE_POS_Z);                                        \
    STORE(out, at_ + 15, (uint32_t)UNIT_ID);                                     \
  } while (0)

UNIT_KERNEL(positions_unit, INFO_U64(0), (uint32_t, out)) {
  WRITE_POSITIONS(out);
}

CUBE_KERNEL(positions_fiber, NO_SHARED, (uint32_t, out)) {
  WRITE_POSITIONS(out);
}

PHASED_KERNEL(positions_phased, NO_SHARED, (uint32_t, out)) {
  PHASE {
    WRITE_POSITIONS(out);
  }
}

/* out[UNIT_ID + shift] = UNIT_ID for the first n units: with shift > 0 the last units write
   past the end of `out`. */
UNIT_KERNEL(shifted_write, INFO_U64(0), (float, out)) {
  STORE(out, UNIT_ID + INFO_U64(1), (float)UNIT_ID);
}

/* out[UNIT_ID] = in[UNIT_ID + shift] for the first n units: with shift > 0 the last units read
   past the end of `in`. */
UNIT_KERNEL(shifted_read, INFO_U64(0), (const float, in), (float, out)) {
  STORE(out, UNIT_ID, LOAD(in, UNIT_ID + INFO_U64(1)));
}

/* Reads info word 5 (launched with fewer). */
UNIT_KERNEL(info_reader, 1, (uint64_t, out)) {
  STORE(out, 0, INFO_U64(5) + 1);
}

/* Atomics on buffer elements: counters[0] += 1, [1] max, [2] min, [3] += 2 (u32), sum_f[0]
   += 1.0f, and an exchange/compare-exchange pair on [4]/[5]. */
UNIT_KERNEL(atomics, INFO_U64(0), (int32_t, counters), (float, sum_f)) {
  const int32_t id = (int32_t)UNIT_ID;
  ATOMIC_ADD(counters, 0, 1);
  ATOMIC_MAX(counters, 1, id);
  ATOMIC_MIN(counters, 2, -id);
  ATOMIC_SUB(counters, 3, 2);
  ATOMIC_XCHG(counters, 4, 7);
  ATOMIC_CAS(counters, 5, 0, id + 1); /* exactly one unit wins */
  ATOMIC_ADD_F32(sum_f, 0, 1.0f);
  ATOMIC_ADD(counters, 1000, 1); /* out of range: dropped in checked mode */
}

/* A histogram in shared memory: each cube counts UNIT_POS % 4 with shared atomics. */
typedef struct histogram_shared {
  uint32_t bins[4];
} histogram_shared;
CUBE_KERNEL(shared_histogram, (histogram_shared, sh), (uint32_t, out)) {
  if (UNIT_POS < 4) sh->bins[UNIT_POS] = 0;
  SYNC_CUBE();
  SHARED_ATOMIC_ADD(&sh->bins[UNIT_POS % 4], 1u);
  SYNC_CUBE();
  if (UNIT_POS < 4) STORE(out, CUBE_POS * 4 + UNIT_POS, sh->bins[UNIT_POS]);
}

/* A "found" flag, as a BFS step keeps one: the units whose key is INFO_I32(0) store 1 to
   found[0] with STORE_SAME, and to their cube's shared flag with SHARED_STORE_SAME, which unit 0
   copies to found[1 + CUBE_POS]. */
typedef struct found_shared {
  int32_t any;
} found_shared;
CUBE_KERNEL(found_flags, (found_shared, sh), (const int32_t, keys), (int32_t, found)) {
  if (UNIT_POS == 0) sh->any = 0;
  SYNC_CUBE();
  if (LOAD(keys, UNIT_ID) == INFO_I32(0)) {
    STORE_SAME(found, 0, 1);
    SHARED_STORE_SAME(&sh->any, 1);
  }
  SYNC_CUBE();
  if (UNIT_POS == 0) STORE(found, 1 + CUBE_POS, sh->any);
}

/* The math set: 10 results per input. */
UNIT_KERNEL(math, INFO_U64(0), (const float, x), (float, out), (int32_t, iout)) {
  const float v = LOAD_UNIT(x);
  const uint64_t at = UNIT_ID * 10;
  STORE(out, at + 0, sqrt(fabs(v)));
  STORE(out, at + 1, exp(v * 0.25f));
  STORE(out, at + 2, log(fabs(v) + 1.0f));
  STORE(out, at + 3, fma(v, 3.0f, 0.5f));
  STORE(out, at + 4, min(v, 1.0f));
  STORE(out, at + 5, max(v, -1.0f));
  STORE(out, at + 6, clamp(v, -2.0f, 2.0f));
  STORE(out, at + 7, floor(v) + ceil(v));
  STORE(out, at + 8, v * 3.0f + 0.5f); /* not contracted: rounds twice */
  STORE(out, at + 9, tanh(v));
  const int32_t i = (int32_t)(v * 4.0f);
  STORE(iout, UNIT_ID * 3 + 0, (int32_t)abs(i));
  STORE(iout, UNIT_ID * 3 + 1, min(i, 3));
  STORE(iout, UNIT_ID * 3 + 2, max(i, -3));
}

/* One reduction body in both cube forms: cube c writes the sum of in[c*units .. +units). */
typedef struct sum_shared {
  float partial[256];
} sum_shared;
CUBE_KERNEL(cube_sum_fiber, (sum_shared, sh), (const float, in), (float, out)) {
  sh->partial[UNIT_POS] = LOAD(in, UNIT_ID);
  SYNC_CUBE();
  for (uint32_t step = CUBE_DIM / 2; step > 0; step /= 2) {
    if (UNIT_POS < step) sh->partial[UNIT_POS] += sh->partial[UNIT_POS + step];
    SYNC_CUBE();
  }
  if (UNIT_POS == 0) STORE(out, CUBE_POS, sh->partial[0]);
}
PHASED_KERNEL(cube_sum_phased, (sum_shared, sh), (const float, in), (float, out)) {
  PHASE {
    sh->partial[UNIT_POS] = LOAD(in, UNIT_ID);
  }
  SYNC_CUBE();
  for (uint32_t step = CUBE_DIM / 2; step > 0; step /= 2) {
    PHASE {
      if (UNIT_POS < step) sh->partial[UNIT_POS] += sh->partial[UNIT_POS + step];
    }
    SYNC_CUBE();
  }
  PHASE {
    if (UNIT_POS == 0) STORE(out, CUBE_POS, sh->partial[0]);
  }
}

/* A value kept across barriers with EXCLUSIVE: each unit doubles its own value twice. */
PHASED_KERNEL(exclusive_carry, NO_SHARED, (uint32_t, out)) {
  EXCLUSIVE(uint32_t, mine);
  PHASE {
    MY(mine) = (uint32_t)UNIT_ID;
  }
  SYNC_CUBE();
  PHASE {
    MY(mine) *= 2;
  }
  SYNC_CUBE();
  PHASE {
    STORE(out, UNIT_ID, MY(mine) * 2 + 1);
  }
}

/* Unit 0 of each cube returns before the barrier the others wait at: a divergent barrier. */
CUBE_KERNEL(skips_barrier, NO_SHARED, (uint32_t, out)) {
  if (UNIT_POS == 0) return;
  SYNC_CUBE();
  STORE(out, UNIT_ID, 1u);
}

/* Units wait at two different barriers (odd and even units). */
CUBE_KERNEL(different_barriers, NO_SHARED, (uint32_t, out)) {
  if (UNIT_POS % 2) {
    SYNC_CUBE();
  } else {
    SYNC_CUBE();
  }
  STORE(out, UNIT_ID, 1u);
}

/* A barrier inside a phase (misuse of the phased form) no longer compiles: it is a static
   assertion naming the rule (tests/compile_rules/sync_in_phase.cube.c, CTest
   compile_rules_sync_in_phase). */

/* q = a / b per unit, in each kernel form, the CUBE_KERNEL on fibers on the CPU server (cts
   language/integer_division_faults_*): a zero divisor, or INT32_MIN / -1, gives an unspecified
   value on a GPU and fails the launch on the CPU server. */
UNIT_KERNEL(divide_unit, LEN(q), (const int32_t, a), (const int32_t, b), (int32_t, q)) {
  STORE_UNIT(q, LOAD_UNIT(a) / LOAD_UNIT(b));
}
CUBE_KERNEL_FIBERS(divide_fiber, NO_SHARED, (const int32_t, a), (const int32_t, b), (int32_t, q)) {
  SYNC_CUBE();
  STORE(q, UNIT_ID, LOAD(a, UNIT_ID) / LOAD(b, UNIT_ID)); /* @divide_fiber */
  SYNC_CUBE();
}
PHASED_KERNEL(divide_phased, NO_SHARED, (const int32_t, a), (const int32_t, b), (int32_t, q)) {
  PHASE {
    STORE(q, UNIT_ID, LOAD(a, UNIT_ID) / LOAD(b, UNIT_ID));
  }
}

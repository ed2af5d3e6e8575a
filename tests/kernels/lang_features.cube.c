/* Kernels of the language's named scalars, dynamic shared memory, 64-bit atomics and buffers of
   structs (tests/cts/cts_lang_features.c), in the three forms where a feature has them. */
#include "cubert/cube.h"

/* ---- named scalars ---- */

/* y[i] = alpha * x[i] + offset + INFO_F32(3): three named scalars (info words 0 .. 2), `n` also
   in `active`, and an info word after them read as before. */
UNIT_KERNEL(scalars_axpy, n, (const float, x), (float, y), (scalar, float, alpha),
            (scalar, int32_t, offset), (scalar, uint64_t, n)) {
  STORE_UNIT(y, alpha * LOAD_UNIT(x) + (float)offset + INFO_F32(3));
}

/* out[id] = base + step * UNIT_POS, one kernel per cube form. */
CUBE_KERNEL(scalars_fiber, NO_SHARED, (int64_t, out), (scalar, int64_t, base),
            (scalar, uint8_t, step)) {
  STORE(out, UNIT_ID, base + (int64_t)step * (int64_t)UNIT_POS);
}
PHASED_KERNEL(scalars_phased, NO_SHARED, (int64_t, out), (scalar, int64_t, base),
              (scalar, uint8_t, step)) {
  PHASE {
    STORE(out, UNIT_ID, base + (int64_t)step * (int64_t)UNIT_POS);
  }
}
/* Scalars after NO_BUFFERS: a launch without their two info words is refused. */
UNIT_KERNEL(scalars_only, 1, NO_BUFFERS, (scalar, int16_t, a), (scalar, uint16_t, b)) {
  (void)a;
  (void)b;
}

/* ---- dynamic shared memory ---- */

typedef struct reverse_shared {
  uint32_t elements;
} reverse_shared;

/* Each cube reverses its slice of x through its dynamic array (LEN(tile) elements, as the
   launch sized it); units past the array write -1. The static struct sits in front of it. */
CUBE_KERNEL(dynamic_reverse_fiber, (reverse_shared, sh), (const float, x), (float, y),
            (dynamic_shared, float, tile)) {
  if (UNIT_POS < LEN(tile)) tile[UNIT_POS] = LOAD(x, UNIT_ID);
  if (UNIT_POS == 0) sh->elements = (uint32_t)LEN(tile);
  SYNC_CUBE();
  const uint32_t k = CUBE_DIM - 1 - UNIT_POS;
  STORE(y, UNIT_ID, k < sh->elements ? tile[k] : -1.0f);
}
PHASED_KERNEL(dynamic_reverse_phased, NO_SHARED, (const float, x), (float, y),
              (dynamic_shared, float, tile)) {
  PHASE {
    if (UNIT_POS < LEN(tile)) tile[UNIT_POS] = LOAD(x, UNIT_ID);
  }
  SYNC_CUBE();
  PHASE {
    const uint32_t k = CUBE_DIM - 1 - UNIT_POS;
    STORE(y, UNIT_ID, k < LEN(tile) ? tile[k] : -1.0f);
  }
}
/* Writes one element per unit whatever the array's size: the sanitizer's finding in validate
   mode when the launch gives fewer elements than units. */
CUBE_KERNEL(dynamic_overflow, NO_SHARED, (uint32_t, out), (dynamic_shared, uint32_t, tile)) {
  tile[UNIT_POS] = UNIT_POS;
  SYNC_CUBE();
  STORE(out, UNIT_ID, tile[(UNIT_POS + 1) % CUBE_DIM]);
}

/* ---- 64-bit atomics ---- */

/* Every unit updates the same elements; c[6] counts by a compare-and-swap loop. */
UNIT_KERNEL(atomics64, n, (int64_t, c), (uint64_t, u), (scalar, uint32_t, n)) {
  const int64_t big = (int64_t)1 << 40;
  ATOMIC_ADD(c, 0, big + 1);
  ATOMIC_SUB(c, 1, big);
  ATOMIC_MIN(c, 2, -(int64_t)UNIT_ID * big);
  ATOMIC_MAX(c, 3, (int64_t)UNIT_ID * big);
  ATOMIC_CAS(c, 4, 0, 7 * big);
  ATOMIC_XCHG(c, 5, (int64_t)UNIT_ID + big);
  int64_t seen = 0, old;
  while ((old = ATOMIC_CAS(c, 6, seen, seen + 3)) != seen) seen = old;
  ATOMIC_ADD(u, 0, (uint64_t)1 << 33);
  ATOMIC_MAX(u, 1, (uint64_t)UNIT_ID << 32);
  ATOMIC_MIN(u, 2, ((uint64_t)UNIT_ID + 5) << 32);
  ATOMIC_CAS(u, 3, UINT64_MAX, (uint64_t)UNIT_ID);
  ATOMIC_ADD(u, 99, 1); /* out of range: dropped (checked mode) */
}

/* 64-bit atomics on shared memory: every unit of a cube updates the cube's values, then unit 0
   stores them, nine per cube (tests/cts/cts_lang_features.c has the expected values). */
typedef struct shared64 {
  int64_t sum, neg, low, high, swap, winner, counted;
  uint64_t usum, umax;
} shared64;

CUBE_KERNEL(shared_atomics64, (shared64, sh), (int64_t, out)) {
  const int64_t big = (int64_t)1 << 40;
  if (UNIT_POS == 0) {
    sh->sum = sh->neg = sh->low = sh->high = sh->winner = sh->counted = 0;
    sh->swap = -1;
    sh->usum = sh->umax = 0;
  }
  SYNC_CUBE();
  SHARED_ATOMIC_ADD(&sh->sum, big + (int64_t)UNIT_POS);
  SHARED_ATOMIC_SUB(&sh->neg, big);
  SHARED_ATOMIC_MIN(&sh->low, -(int64_t)UNIT_POS * big);
  SHARED_ATOMIC_MAX(&sh->high, (int64_t)UNIT_POS * big);
  SHARED_ATOMIC_XCHG(&sh->swap, (int64_t)UNIT_POS + big);
  SHARED_ATOMIC_CAS(&sh->winner, (int64_t)0, 7 * big);
  int64_t seen = 0, old;
  while ((old = SHARED_ATOMIC_CAS(&sh->counted, seen, seen + 3)) != seen) seen = old;
  SHARED_ATOMIC_ADD(&sh->usum, (uint64_t)1 << 33);
  SHARED_ATOMIC_MAX(&sh->umax, (uint64_t)UNIT_POS << 32);
  SYNC_CUBE();
  if (UNIT_POS == 0) {
    const int64_t v[9] = {sh->sum,    sh->neg,     sh->low,           sh->high,         sh->swap,
                          sh->winner, sh->counted, (int64_t)sh->usum, (int64_t)sh->umax};
    for (uint32_t k = 0; k < 9; ++k) STORE(out, CUBE_POS * 9 + k, v[k]);
  }
}

/* ---- buffers of structs ---- */

#include "lang_particle.h"

/* out[i] = in[i + 1] moved by dt (the last unit's read is past the end: a zero particle);
   same[i] = in[i] through LOAD_UNIT / STORE_UNIT. */
UNIT_KERNEL(particles_step, LEN(out), (const particle, in), (particle, out), (particle, same),
            (scalar, float, dt)) {
  particle p = LOAD(in, UNIT_ID + 1);
  p.x += dt * p.v;
  p.id += 1;
  p.flags |= 1u;
  p.tag = p.tag * 2 + 1;
  STORE(out, UNIT_ID, p);
  STORE_UNIT(same, LOAD_UNIT(in));
}

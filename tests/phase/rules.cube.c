/* The phase transform's rules and fallbacks (tools/cubert_phase.py), one small kernel each.
   check_phase.py runs the tool on this file and checks, for each `expect` line, that the
   output holds (or, with `expect-not`, lacks) the text, and for each `note` line that the
   kernel kept the fiber form with that construct named. Built also as a kernel file of
   phase_rules (tests/CMakeLists.txt), so the output compiles clean under -Werror. */
#include "cubert/cube.h"

typedef struct rules_shared {
  float v[64];
  float scratch[64];
} rules_shared;

/* expect: PHASED_KERNEL(tiled, */
/* expect: EXCLUSIVE(float, acc); */
/* expect-not: EXCLUSIVE(uint32_t, row) */
/* expect: MY(acc) += sh->v[ */
/* expect: for (uint32_t t = 0; t < n; ++t) { */
CUBE_KERNEL(tiled, (rules_shared, sh), (const float, in), (float, out)) {
  const uint32_t n = INFO_U32(0);
  const uint32_t row = CUBE_POS * CUBE_DIM + UNIT_POS;
  float acc = 0.0f;
  for (uint32_t t = 0; t < n; ++t) {
    sh->v[UNIT_POS] = LOAD(in, (uint64_t)t * LEN(out) + row);
    SYNC_CUBE();
    acc += sh->v[(UNIT_POS + 1) % CUBE_DIM];
    SYNC_CUBE();
  }
  STORE(out, row, acc);
}

/* expect: if (CUBE_POS_X == 0) { */
/* expect: while (top < CUBE_DIM) top *= 2; */
/* expect: CUBE_REDUCE_SUM(MY(cubert_pv0_), sh->scratch, MY(total)); */
/* expect: continue; */
CUBE_KERNEL(reduce, (rules_shared, sh), (const float, in), (float, out)) {
  uint32_t top = 1;
  while (top < CUBE_DIM) top *= 2;
  const float x = LOAD(in, UNIT_ID);
  float total;
  CUBE_REDUCE_SUM(x * 2.0f, sh->scratch, total);
  if (CUBE_POS_X == 0) {
    sh->v[UNIT_POS] = total;
    SYNC_CUBE();
  }
  if (UNIT_POS != 0) return;
  STORE(out, CUBE_POS, total + (float)top);
}

/* A declaration with uniform and per-unit declarators is split, one declaration each: the
   uniform ones stay around the phases (here the loop's bound), the per-unit ones go into them. */
/* expect: const uint32_t units = CUBE_DIM; */
/* expect: for (uint32_t step = top / 2; step > 0; step /= 2) { */
/* expect: float scale = 1.0f; */
/* expect: float *mine = &sh->v[me]; */
/* expect-not: units = CUBE_DIM, me */
CUBE_KERNEL(mixed_decl, (rules_shared, sh), (const float, in), (float, out)) {
  const uint32_t units = CUBE_DIM, me = UNIT_POS;
  sh->v[me] = LOAD(in, UNIT_ID);
  SYNC_CUBE();
  uint32_t top = 1;
  while (top < units) top *= 2;
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    float scale = 1.0f, *mine = &sh->v[me];
    if (me < step && me + step < units) *mine += scale * sh->v[me + step];
    SYNC_CUBE();
  }
  if (me == 0) STORE(out, CUBE_POS, sh->v[0]);
}

/* A phase whose body is one test that fails for every unit whose x is at or past a uniform
   integer bound runs only the units below it: its x loop stops there, the test stays. */
/* expect: CUBERT_CUBE_PHASE_BELOW_X_(half) { */
/* expect: CUBERT_CUBE_PHASE_BELOW_X_((uint64_t)(0) + 1) { */
/* expect-not: CUBERT_CUBE_PHASE_BELOW_X_(2) */
CUBE_KERNEL(below_x, (rules_shared, sh), (const float, in), (float, out)) {
  const uint32_t half = CUBE_DIM_X / 2, x = UNIT_POS_X;
  const uint8_t narrow = (uint8_t)UNIT_POS_X; /* may wrap: no bound from it */
  sh->v[UNIT_POS] = LOAD(in, UNIT_ID);
  SYNC_CUBE();
  if (UNIT_POS_Y == 0 && UNIT_POS_Z == 0 && half > x) sh->scratch[x] = sh->v[x] + sh->v[x + half];
  SYNC_CUBE();
  if (narrow < 2) sh->v[UNIT_POS] = 0.5f;
  SYNC_CUBE();
  if (x == 0 && UNIT_POS_Y == 0 && UNIT_POS_Z == 0)
    STORE(out, CUBE_POS, (half ? sh->scratch[0] : 1.0f) + sh->v[CUBE_DIM - 1]);
}

/* A phase's per-cube version (tools/cubert_phase_ranges.py): where the cube's units keep every
   index of the phase inside its buffer, with no wrap, a copy runs with direct accesses, indices
   in 64 bits, the clamps `min(x, n - 1)` and `cx ? cx - 1 : 0` passing x through, the bound test
   `x < n` as 1, and each `if (UNIT_POS_X == 0)` or `if (UNIT_POS_Y == 0)` statement in a phase of
   its own over those units alone; else the phase as written. */
/* expect: if (CUBERT_CUBE_VERSIONS_ && */
/* expect: cubert_span_in_( */
/* expect: cubert_span_le_( */
/* expect: cubert_span_nonzero_( */
/* expect: = (in)[ */
/* expect: (out)[ */
/* expect: (int64_t)cubert_ux_ */
/* expect: if (1) */
/* expect: CUBERT_CUBE_PHASE_RANGE_(0, (uint64_t)(0) + 1, 0, cubert_dy_) { */
/* expect: CUBERT_CUBE_PHASE_RANGE_(0, cubert_dx_, 0, (uint64_t)(0) + 1) { */
CUBE_KERNEL(versioned, (rules_shared, sh), (const float, in), (float, out)) {
  const uint32_t n = INFO_U32(0);
  if (CUBE_DIM_X > 32 || CUBE_DIM_Y * CUBE_DIM_Z != 1 || n == 0) return;
  const uint64_t x = CUBE_POS * CUBE_DIM_X + UNIT_POS_X, cx = min(x, (uint64_t)n - 1);
  sh->v[UNIT_POS_X + 1] = LOAD(in, cx);
  if (UNIT_POS_X == 0) sh->v[0] = LOAD(in, cx ? cx - 1 : 0);
  if (UNIT_POS_Y == 0) sh->scratch[UNIT_POS_X] = 2.0f * LOAD(in, cx);
  SYNC_CUBE();
  if (x < n) STORE(out, x, sh->v[UNIT_POS_X] + sh->v[UNIT_POS_X + 1] + sh->scratch[UNIT_POS_X]);
}

/* Where a unit may return in the phase, the version keeps its statements in one phase (a split
   would let the unit run the statements after its return). */
/* expect: (out)[(((int64_t)cubert_cl_ * (int64_t)cubert_dx_) + (int64_t)cubert_ux_)] = (1.0f */
/* expect-not: CUBERT_CUBE_PHASE_RANGE_(1, */
CUBE_KERNEL(versioned_return, (rules_shared, sh), (const float, in), (float, out)) {
  if (CUBE_DIM_X > 64 || CUBE_DIM_Y * CUBE_DIM_Z != 1) return;
  const uint64_t at = CUBE_POS * CUBE_DIM_X + UNIT_POS_X;
  sh->v[UNIT_POS_X] = LOAD(in, at);
  SYNC_CUBE();
  if (UNIT_POS_X == 1) STORE(out, at, sh->v[0]);
  if (UNIT_POS_X >= 2) return;
  STORE(out, at, 1.0f + sh->v[UNIT_POS_X]);
}

/* A phase with an index the tool cannot bound (read from shared memory) keeps its checks: no
   version. */
/* expect-not: = (1.0f) */
CUBE_KERNEL(unversioned, (rules_shared, sh), (const float, in), (float, out)) {
  if (CUBE_DIM > 64) return;
  sh->v[UNIT_POS] = LOAD(in, UNIT_ID);
  SYNC_CUBE();
  STORE(out, (uint32_t)sh->v[UNIT_POS] % 64u, 1.0f);
}

/* expect-not: PHASED_KERNEL(fibers_by_name */
CUBE_KERNEL_FIBERS(fibers_by_name, (rules_shared, sh), (float, out)) {
  sh->v[UNIT_POS] = 1.0f;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: per_unit_if: a barrier under a condition that is not uniform */
CUBE_KERNEL(per_unit_if, (rules_shared, sh), (float, out)) {
  if (UNIT_POS % 2) SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: per_unit_loop: a barrier in a loop whose condition is not uniform */
CUBE_KERNEL(per_unit_loop, (rules_shared, sh), (float, out)) {
  for (uint32_t i = 0; i < UNIT_POS; ++i) SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: early_return: return before a barrier */
CUBE_KERNEL(early_return, (rules_shared, sh), (float, out)) {
  if (UNIT_POS == 0) return;
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: break_across: break or continue across a barrier */
CUBE_KERNEL(break_across, (rules_shared, sh), (float, out)) {
  for (uint32_t i = 0; i < 4; ++i) {
    if (LOAD(out, UNIT_ID) > 0.0f) break;
    SYNC_CUBE();
  }
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: with_goto: goto or a label in a kernel with barriers */
CUBE_KERNEL(with_goto, (rules_shared, sh), (float, out)) {
  if (UNIT_POS == 0) goto done;
  sh->v[UNIT_POS] = 1.0f;
done:
  SYNC_CUBE();
  STORE(out, UNIT_ID, sh->v[0]);
}

/* note: escaping: the address of a per-unit variable escapes a phase */
CUBE_KERNEL(escaping, (rules_shared, sh), (float, out)) {
  float mine = LOAD(out, UNIT_ID);
  float *p = &mine;
  SYNC_CUBE();
  STORE(out, UNIT_ID, *p + sh->v[0]);
}

/* note: array_across: the per-unit array `vals` lives across a barrier */
CUBE_KERNEL(array_across, (rules_shared, sh), (float, out)) {
  float vals[2] = {LOAD(out, UNIT_ID), 0.0f};
  SYNC_CUBE();
  STORE(out, UNIT_ID, vals[0] + sh->v[0]);
}

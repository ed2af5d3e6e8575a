/* Row softmax, y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r), in the kernel
   language (cubert/cube.h). Info words: rows, cols (row-major, contiguous rows). Launch: one
   cube per row (cube count >= rows; extra cubes do nothing), a 1-D cube dim (x, 1, 1) of any x
   from 1 to SOFTMAX_MAX_UNITS (the kernel reads it from CUBE_DIM_X; other dims do nothing).

   Positions are UNIT_POS_X (the cube is 1-D), not UNIT_POS: in a PHASE on the CPU, index
   arithmetic on UNIT_POS does not vectorise with GCC 12 (it is a truncated 64-bit value), and
   that made every phase a scalar loop (1.9x slower at 256 units).

   Numerically stable: the row's maximum is subtracted before exp, so no term overflows and the
   largest one is exactly 1. Three passes over the row, two reductions in shared memory:
     1. each unit takes the max of a strided share of the row (unit u: columns u, u + units, ...:
        neighbouring units read neighbouring elements), then a tree over the units;
     2. each unit writes e = exp(x - max) for its share into y and sums its e's, then a tree;
     3. each unit scales its share of y by 1 / sum.
   The trees fold the slots in halves from the smallest power of two >= units, so any unit count
   works, and are branch-free: at each level every unit combines slot u and slot u + step of one
   array into slot u of the other (ping-pong, so no unit reads what another writes at the same
   level), and the slots past the units hold the identity (-inf for max, 0 for sum). Units past
   the step compute values nobody reads; in exchange a level on the CPU is one vectorised loop
   over the units, where a conditional store (if (u < step) ...) is a scalar loop with a branch
   per unit: that made 256 units 1.5x slower than 64. Both sides add in the same order.

   softmax_rows is the PHASED_KERNEL (on the CPU server each PHASE is a loop over the units);
   softmax_rows_fibers is the same body as a CUBE_KERNEL (one fiber per unit on the CPU). */
#include "cubert/cube.h"

#define SOFTMAX_MAX_UNITS 1024

typedef struct softmax_shared {
  float slot[2][2 * SOFTMAX_MAX_UNITS]; /* the two ping-pong arrays of the trees */
} softmax_shared;

PHASED_KERNEL(softmax_rows, (softmax_shared, sh), (const float, x), (float, y)) {
  const uint64_t rows = INFO_U64(0), cols = INFO_U64(1), row = CUBE_POS;
  const uint32_t units = CUBE_DIM_X;
  /* Uniform exits (the whole cube leaves, no barrier is skipped by some units only): an extra
     cube, a cube that is not 1-D or too big for the slots, or info words that do not fit the
     buffers (the shares below index x and y directly, so that the CPU loops vectorise). */
  if (row >= rows || CUBE_DIM_Y * CUBE_DIM_Z != 1 || units > SOFTMAX_MAX_UNITS ||
      rows * cols > LEN(x) || rows * cols > LEN(y))
    return;
  const uint64_t base = row * cols, full = cols / units, rest = cols % units;
  uint32_t top = 1;
  while (top < units) top *= 2;

  /* 1. The row's maximum. */
  PHASE {
    float v = -INFINITY;
    for (uint64_t r = 0; r < full; ++r) v = max(v, x[base + r * units + UNIT_POS_X]);
    if (UNIT_POS_X < rest) v = max(v, x[base + full * units + UNIT_POS_X]);
    sh->slot[0][UNIT_POS_X] = v;
    sh->slot[0][units + UNIT_POS_X] = -INFINITY;
    sh->slot[1][units + UNIT_POS_X] = -INFINITY;
  }
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    PHASE {
      sh->slot[1 - from][UNIT_POS_X] =
          max(sh->slot[from][UNIT_POS_X], sh->slot[from][UNIT_POS_X + step]);
    }
    SYNC_CUBE();
  }
  const float row_max = sh->slot[from][0];
  SYNC_CUBE(); /* every unit has read it before the slots are reused */

  /* 2. e = exp(x - max) into y, and the sum of the e's. */
  PHASE {
    float s = 0.0f;
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t i = base + r * units + UNIT_POS_X;
      const float e = exp(x[i] - row_max);
      y[i] = e;
      s += e;
    }
    if (UNIT_POS_X < rest) {
      const uint64_t i = base + full * units + UNIT_POS_X;
      const float e = exp(x[i] - row_max);
      y[i] = e;
      s += e;
    }
    sh->slot[0][UNIT_POS_X] = s;
    sh->slot[0][units + UNIT_POS_X] = 0.0f;
    sh->slot[1][units + UNIT_POS_X] = 0.0f;
  }
  SYNC_CUBE();
  from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    PHASE {
      sh->slot[1 - from][UNIT_POS_X] =
          sh->slot[from][UNIT_POS_X] + sh->slot[from][UNIT_POS_X + step];
    }
    SYNC_CUBE();
  }
  const float scale = 1.0f / sh->slot[from][0];

  /* 3. Scale. */
  PHASE {
    for (uint64_t r = 0; r < full; ++r) y[base + r * units + UNIT_POS_X] *= scale;
    if (UNIT_POS_X < rest) y[base + full * units + UNIT_POS_X] *= scale;
  }
}

CUBE_KERNEL(softmax_rows_fibers, (softmax_shared, sh), (const float, x), (float, y)) {
  const uint64_t rows = INFO_U64(0), cols = INFO_U64(1), row = CUBE_POS;
  const uint32_t units = CUBE_DIM_X;
  if (row >= rows || CUBE_DIM_Y * CUBE_DIM_Z != 1 || units > SOFTMAX_MAX_UNITS ||
      rows * cols > LEN(x) || rows * cols > LEN(y))
    return;
  const uint64_t base = row * cols, full = cols / units, rest = cols % units;
  uint32_t top = 1;
  while (top < units) top *= 2;

  float v = -INFINITY;
  for (uint64_t r = 0; r < full; ++r) v = max(v, x[base + r * units + UNIT_POS_X]);
  if (UNIT_POS_X < rest) v = max(v, x[base + full * units + UNIT_POS_X]);
  sh->slot[0][UNIT_POS_X] = v;
  sh->slot[0][units + UNIT_POS_X] = -INFINITY;
  sh->slot[1][units + UNIT_POS_X] = -INFINITY;
  SYNC_CUBE();
  uint32_t from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    sh->slot[1 - from][UNIT_POS_X] =
        max(sh->slot[from][UNIT_POS_X], sh->slot[from][UNIT_POS_X + step]);
    SYNC_CUBE();
  }
  const float row_max = sh->slot[from][0];
  SYNC_CUBE();

  float s = 0.0f;
  for (uint64_t r = 0; r < full; ++r) {
    const uint64_t i = base + r * units + UNIT_POS_X;
    const float e = exp(x[i] - row_max);
    y[i] = e;
    s += e;
  }
  if (UNIT_POS_X < rest) {
    const uint64_t i = base + full * units + UNIT_POS_X;
    const float e = exp(x[i] - row_max);
    y[i] = e;
    s += e;
  }
  sh->slot[0][UNIT_POS_X] = s;
  sh->slot[0][units + UNIT_POS_X] = 0.0f;
  sh->slot[1][units + UNIT_POS_X] = 0.0f;
  SYNC_CUBE();
  from = 0;
  for (uint32_t step = top / 2; step > 0; step /= 2, from = 1 - from) {
    sh->slot[1 - from][UNIT_POS_X] = sh->slot[from][UNIT_POS_X] + sh->slot[from][UNIT_POS_X + step];
    SYNC_CUBE();
  }
  const float scale = 1.0f / sh->slot[from][0];

  for (uint64_t r = 0; r < full; ++r) y[base + r * units + UNIT_POS_X] *= scale;
  if (UNIT_POS_X < rest) y[base + full * units + UNIT_POS_X] *= scale;
}

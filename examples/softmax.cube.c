/* Row softmax, y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r), in the kernel
   language (cubert/cube.h). Info words: rows, cols (row-major, contiguous rows). Launch: one
   cube per row (cube count >= rows; extra cubes do nothing), any 1-D cube dim from 1 to
   SOFTMAX_MAX_UNITS units (the kernel reads it from CUBE_DIM).

   Numerically stable: the row's maximum is subtracted before exp, so no term overflows and the
   largest one is exactly 1. Three passes over the row, two reductions in shared memory:
     1. each unit takes the max of a strided share of the row (unit u: columns u, u + units, ...:
        neighbouring units read neighbouring elements), then a tree over the units;
     2. each unit writes e = exp(x - max) for its share into y and sums its e's, then a tree;
     3. each unit scales its share of y by 1 / sum.
   The tree folds the slots in halves from the smallest power of two >= units, so any unit count
   works. Both sides add in the same order.

   softmax_rows is the PHASED_KERNEL (on the CPU server each PHASE is a loop over the units);
   softmax_rows_fibers is the same body as a CUBE_KERNEL (one fiber per unit on the CPU). */
#include "cubert/cube.h"

#define SOFTMAX_MAX_UNITS 1024

typedef struct softmax_shared {
  float slot[SOFTMAX_MAX_UNITS];
} softmax_shared;

PHASED_KERNEL(softmax_rows, (softmax_shared, sh), (const float, x), (float, y)) {
  const uint64_t rows = INFO_U64(0), cols = INFO_U64(1), row = CUBE_POS;
  const uint32_t units = CUBE_DIM;
  /* Uniform exits (the whole cube leaves, no barrier is skipped by some units only): an extra
     cube, a cube too big for the slots, or info words that do not fit the buffers (the shares
     below index x and y directly, so that the CPU loops vectorise). */
  if (row >= rows || units > SOFTMAX_MAX_UNITS || rows * cols > LEN(x) || rows * cols > LEN(y))
    return;
  const uint64_t base = row * cols, full = cols / units, rest = cols % units;
  uint32_t top = 1;
  while (top < units) top *= 2;

  PHASE {
    float v = -INFINITY;
    for (uint64_t r = 0; r < full; ++r) v = max(v, x[base + r * units + UNIT_POS]);
    if (UNIT_POS < rest) v = max(v, x[base + full * units + UNIT_POS]);
    sh->slot[UNIT_POS] = v;
  }
  SYNC_CUBE();
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    PHASE {
      if (UNIT_POS < step && UNIT_POS + step < units)
        sh->slot[UNIT_POS] = max(sh->slot[UNIT_POS], sh->slot[UNIT_POS + step]);
    }
    SYNC_CUBE();
  }
  const float row_max = sh->slot[0];
  SYNC_CUBE(); /* every unit has read slot[0] before it is overwritten */

  PHASE {
    float s = 0.0f;
    for (uint64_t r = 0; r < full; ++r) {
      const uint64_t i = base + r * units + UNIT_POS;
      const float e = exp(x[i] - row_max);
      y[i] = e;
      s += e;
    }
    if (UNIT_POS < rest) {
      const uint64_t i = base + full * units + UNIT_POS;
      const float e = exp(x[i] - row_max);
      y[i] = e;
      s += e;
    }
    sh->slot[UNIT_POS] = s;
  }
  SYNC_CUBE();
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    PHASE {
      if (UNIT_POS < step && UNIT_POS + step < units)
        sh->slot[UNIT_POS] += sh->slot[UNIT_POS + step];
    }
    SYNC_CUBE();
  }
  const float scale = 1.0f / sh->slot[0];

  PHASE {
    for (uint64_t r = 0; r < full; ++r) y[base + r * units + UNIT_POS] *= scale;
    if (UNIT_POS < rest) y[base + full * units + UNIT_POS] *= scale;
  }
}

CUBE_KERNEL(softmax_rows_fibers, (softmax_shared, sh), (const float, x), (float, y)) {
  const uint64_t rows = INFO_U64(0), cols = INFO_U64(1), row = CUBE_POS;
  const uint32_t units = CUBE_DIM;
  if (row >= rows || units > SOFTMAX_MAX_UNITS || rows * cols > LEN(x) || rows * cols > LEN(y))
    return;
  const uint64_t base = row * cols, full = cols / units, rest = cols % units;
  uint32_t top = 1;
  while (top < units) top *= 2;

  float v = -INFINITY;
  for (uint64_t r = 0; r < full; ++r) v = max(v, x[base + r * units + UNIT_POS]);
  if (UNIT_POS < rest) v = max(v, x[base + full * units + UNIT_POS]);
  sh->slot[UNIT_POS] = v;
  SYNC_CUBE();
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    if (UNIT_POS < step && UNIT_POS + step < units)
      sh->slot[UNIT_POS] = max(sh->slot[UNIT_POS], sh->slot[UNIT_POS + step]);
    SYNC_CUBE();
  }
  const float row_max = sh->slot[0];
  SYNC_CUBE();

  float s = 0.0f;
  for (uint64_t r = 0; r < full; ++r) {
    const uint64_t i = base + r * units + UNIT_POS;
    const float e = exp(x[i] - row_max);
    y[i] = e;
    s += e;
  }
  if (UNIT_POS < rest) {
    const uint64_t i = base + full * units + UNIT_POS;
    const float e = exp(x[i] - row_max);
    y[i] = e;
    s += e;
  }
  sh->slot[UNIT_POS] = s;
  SYNC_CUBE();
  for (uint32_t step = top / 2; step > 0; step /= 2) {
    if (UNIT_POS < step && UNIT_POS + step < units) sh->slot[UNIT_POS] += sh->slot[UNIT_POS + step];
    SYNC_CUBE();
  }
  const float scale = 1.0f / sh->slot[0];

  for (uint64_t r = 0; r < full; ++r) y[base + r * units + UNIT_POS] *= scale;
  if (UNIT_POS < rest) y[base + full * units + UNIT_POS] *= scale;
}

/* reduce_sum_f32: per-cube partial sums (kernels.h gives the buffers and info words), as a
   phased cube kernel (cubert/cube.h): on OpenCL an ordinary work-group reduction with
   barriers, on the CPU each PHASE a loop over the cube's units.

   Any cube dim works, powers of two or not, larger than the scratch or not:
     1. each unit sums a strided share of the cube's block (neighbouring units read
        neighbouring elements: loads coalesce on a GPU; on the CPU each row of the block is a
        phase, a loop over units that the compiler vectorises);
     2. the first p units (p = the largest power of two <= min(units, scratch)) store their
        shares, the others add theirs in p at a time;
     3. a tree over the p slots.
   Both sides add in the same order, so they round alike. */
#include "cubert/cube.h"

#define REDUCE_SCRATCH 1024 /* floats (4 KiB: fits OpenCL 1.2's 32 KiB minimum) */

typedef struct reduce_scratch {
  float slot[REDUCE_SCRATCH];
} reduce_scratch;

PHASED_KERNEL(reduce_sum_f32, (reduce_scratch, sh), (const float, in), (float, out)) {
  const uint64_t n = INFO_U64(0), per_cube = INFO_U64(1);
  /* Cubes past the last block (a spread cube count may launch extra ones) have no output. */
  if (per_cube == 0 || CUBE_POS >= n / per_cube + (n % per_cube != 0)) return;
  const uint64_t begin = CUBE_POS * per_cube;
  uint64_t end = n - begin < per_cube ? n : begin + per_cube;
  /* The share loop below indexes `in` directly (an unchecked access, so that the CPU loop
     vectorises): bound it by the buffer here, through one checked access that validate mode
     reports. */
  if (end > LEN(in)) {
    (void)LOAD(in, end - 1);
    end = begin < LEN(in) ? LEN(in) : begin;
  }
  const uint32_t units = CUBE_DIM;
  const uint64_t rows = (end - begin) / units, rest = (end - begin) % units;

  /* Each unit's share in[begin + unit], in[begin + unit + units], ... is added row by row: the
     loop over rows is the same for every unit (so it may sit outside the phases), and on the
     CPU each row is a phase over the cube's units, one contiguous vectorised loop. */
  EXCLUSIVE(float, share);
  PHASE {
    MY(share) = 0.0f;
  }
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t row = begin + r * units;
    PHASE {
      MY(share) += in[row + UNIT_POS];
    }
  }
  PHASE {
    if (UNIT_POS < rest) MY(share) += in[begin + rows * units + UNIT_POS];
  }

  uint32_t slots = 1;
  while (slots * 2 <= units && slots * 2 <= REDUCE_SCRATCH) slots *= 2;

  PHASE {
    if (UNIT_POS < slots) sh->slot[UNIT_POS] = MY(share);
  }
  SYNC_CUBE();
  for (uint32_t base = slots; base < units; base += slots) {
    PHASE {
      if (UNIT_POS >= base && UNIT_POS - base < slots) sh->slot[UNIT_POS - base] += MY(share);
    }
    SYNC_CUBE();
  }
  for (uint32_t step = slots / 2; step > 0; step /= 2) {
    PHASE {
      if (UNIT_POS < step) sh->slot[UNIT_POS] += sh->slot[UNIT_POS + step];
    }
    SYNC_CUBE();
  }
  PHASE {
    if (UNIT_POS == 0) STORE(out, CUBE_POS, sh->slot[0]);
  }
}

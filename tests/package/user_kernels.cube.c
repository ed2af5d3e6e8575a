/* A user's kernels, compiled outside the cubert tree through the installed kernel helper
   (cubert_add_kernels after find_package(cubert), or the pkg-config variables in Makefile). */
#include "cubert/cube.h"

/* y = a * x + y over the first n units. Info words: n, bits of a (f32). */
UNIT_KERNEL(pkg_axpy, INFO_U64(0), (const float, x), (float, y)) {
  STORE_UNIT(y, INFO_F32(1) * LOAD_UNIT(x) + LOAD_UNIT(y));
}

/* One sum per cube of 64 units over the first n elements of `in` (info word 0: n); out holds
   one element per cube. A phased kernel: shared memory and barriers. */
typedef struct {
  float partial[64];
} pkg_sums;

PHASED_KERNEL(pkg_block_sum, (pkg_sums, sh), (const float, in), (float, out)) {
  const uint64_t n = INFO_U64(0);
  PHASE {
    sh->partial[UNIT_POS] = UNIT_ID < n ? LOAD(in, UNIT_ID) : 0.0f;
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

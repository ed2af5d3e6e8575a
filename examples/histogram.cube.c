/* A 256-bin histogram of bytes in the kernel language (cubert/cube.h): each cube counts its
   share of the data into a histogram of its own in shared memory (SHARED_ATOMIC_ADD), then adds
   its bins to the result with buffer atomics (ATOMIC_ADD).

   Info word 0: n, the number of bytes. Launch: any number of 1-D cubes of any size up to the
   device's limit; `hist` (256 uint32 counts) starts at zero. The data is cut into rows of
   CUBE_DIM bytes, and cube c counts a contiguous run of rows: on a GPU each row is one
   coalesced load, on the CPU server one loop over the cube's units (the PHASE inside the row
   loop), which reads the row's bytes in order. Few cubes with long runs keep the merge small:
   256 buffer atomics per cube, which on the CPU server are real atomics between threads.

   On the CPU server a cube's units share one thread, so SHARED_ATOMIC_ADD is a plain load and
   store there (cubert/cube.h, "shared-memory atomics"); on OpenCL it is atomic_add on __local
   memory. */
#include "cubert/cube.h"

#define HISTOGRAM_BINS 256

typedef struct histogram_shared {
  uint32_t bins[HISTOGRAM_BINS];
} histogram_shared;

PHASED_KERNEL(histogram256, (histogram_shared, sh), (const uint8_t, data), (uint32_t, hist)) {
  const uint64_t n = min(INFO_U64(0), LEN(data)), units = CUBE_DIM;
  const uint64_t rows = (n + units - 1) / units, per_cube = (rows + CUBE_COUNT - 1) / CUBE_COUNT;
  const uint64_t first = CUBE_POS * per_cube, last = min(first + per_cube, rows);
  const uint64_t full = min(last, n / units); /* rows before it lie wholly below n */

  PHASE {
    for (uint32_t b = UNIT_POS; b < HISTOGRAM_BINS; b += (uint32_t)units) sh->bins[b] = 0;
  }
  SYNC_CUBE();
  /* data[i] is unchecked: i < n <= LEN(data). */
  for (uint64_t r = first; r < full; ++r) {
    const uint64_t base = r * units;
    PHASE {
      SHARED_ATOMIC_ADD(&sh->bins[data[base + UNIT_POS]], 1u);
    }
  }
  for (uint64_t r = max(first, full); r < last; ++r) { /* the last, partial row */
    const uint64_t base = r * units;
    PHASE {
      if (base + UNIT_POS < n) SHARED_ATOMIC_ADD(&sh->bins[data[base + UNIT_POS]], 1u);
    }
  }
  SYNC_CUBE();
  PHASE {
    for (uint32_t b = UNIT_POS; b < HISTOGRAM_BINS; b += (uint32_t)units)
      if (sh->bins[b] != 0) ATOMIC_ADD(hist, b, sh->bins[b]);
  }
}

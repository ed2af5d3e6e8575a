/* A large inclusive prefix sum, y[i] = x[0] + ... + x[i], in the kernel language
   (cubert/cube.h), built on the cube-level helpers. The data is cut into tiles of CUBE_DIM *
   SCAN_PER_UNIT elements, and cube c takes a contiguous run of tiles. Three launches
   (examples/scan.c):
     1. scan_totals_*:  cube c adds up its run into totals[c] (each unit a strided share, row by
                        row, then CUBE_REDUCE_SUM);
     2. scan_offsets_*: one cube turns the totals into each cube's offset, offsets[c] = totals[0]
                        + ... + totals[c-1] (CUBE_SCAN_INCLUSIVE_SUM over blocks of CUBE_DIM
                        totals, with a carry between blocks);
     3. scan_tiles_*:   cube c scans its tiles from offsets[c], one tile at a time: each unit
                        adds up its SCAN_PER_UNIT consecutive elements, CUBE_SCAN_EXCLUSIVE_SUM
                        gives it the sum of the units before it, and it writes the running sums
                        of its elements from there; the tile's total carries to the next tile.
   The data is read twice and written once (the "reduce, then scan" order; scanning first and
   adding the offsets back would read and write it twice). The helper runs once per tile, not
   once per CUBE_DIM elements: on the CPU server its serial pass over the units is then a small
   part of the work (one helper per 256 elements made the scan 4x slower than OpenMP). On a GPU,
   consecutive elements per unit make uncoalesced loads; a GPU-tuned scan would stage each tile
   through shared memory first.
   Info word 0: n. Launches 1 and 3 take the same 1-D cube count and dim; launch 2 one cube of
   any dim, and offsets has one element per cube of the other launches. Every kernel is a
   PHASED_KERNEL (on the CPU server each PHASE is a loop over the cube's units), for uint32_t
   (sums wrap modulo 2^32, as in C) and float. */
#include "cubert/cube.h"

#define SCAN_MAX_UNITS 1024
#define SCAN_PER_UNIT 16

#define SCAN_KERNELS(T, sfx)                                                                     \
  typedef struct scan_shared_##sfx {                                                             \
    T scratch[SCAN_MAX_UNITS];                                                                   \
    T total; /* the last unit's inclusive sum of a row or block */                               \
  } scan_shared_##sfx;                                                                           \
                                                                                                 \
  PHASED_KERNEL(scan_totals_##sfx, (scan_shared_##sfx, sh), (const T, x), (T, totals)) {         \
    const uint64_t n = min(INFO_U64(0), LEN(x)), units = CUBE_DIM, tile = units * SCAN_PER_UNIT; \
    const uint64_t tiles = (n + tile - 1) / tile, per = (tiles + CUBE_COUNT - 1) / CUBE_COUNT;   \
    /* the cube's run of tiles, as rows of `units` elements */                                   \
    const uint64_t first = CUBE_POS * per * SCAN_PER_UNIT,                                       \
                   last = min(first + per * SCAN_PER_UNIT, (n + units - 1) / units);             \
    EXCLUSIVE(T, part);                                                                          \
    PHASE {                                                                                      \
      MY(part) = 0;                                                                              \
    }                                                                                            \
    /* x[i] is unchecked: i < n <= LEN(x). Rows wholly below n need no test (and vectorise). */  \
    const uint64_t full = min(last, n / units);                                                  \
    for (uint64_t r = first; r < full; ++r) {                                                    \
      const uint64_t base = r * units;                                                           \
      PHASE {                                                                                    \
        MY(part) += x[base + UNIT_POS];                                                          \
      }                                                                                          \
    }                                                                                            \
    for (uint64_t r = max(first, full); r < last; ++r) {                                         \
      const uint64_t base = r * units;                                                           \
      PHASE {                                                                                    \
        if (base + UNIT_POS < n) MY(part) += x[base + UNIT_POS];                                 \
      }                                                                                          \
    }                                                                                            \
    CUBE_REDUCE_SUM(MY(part), sh->scratch, MY(part));                                            \
    PHASE {                                                                                      \
      if (UNIT_POS == 0) STORE(totals, CUBE_POS, MY(part));                                      \
    }                                                                                            \
  }                                                                                              \
                                                                                                 \
  PHASED_KERNEL(scan_offsets_##sfx, (scan_shared_##sfx, sh), (const T, totals), (T, offsets)) {  \
    const uint64_t count = min(LEN(totals), LEN(offsets)), units = CUBE_DIM;                     \
    EXCLUSIVE(T, v);                                                                             \
    T carry = 0;                                                                                 \
    for (uint64_t base = 0; base < count; base += units) {                                       \
      PHASE {                                                                                    \
        MY(v) = base + UNIT_POS < count ? totals[base + UNIT_POS] : 0;                           \
      }                                                                                          \
      CUBE_SCAN_INCLUSIVE_SUM(MY(v), sh->scratch, MY(v));                                        \
      PHASE { /* offsets[i + 1] = totals[0] + ... + totals[i] */                                 \
        if (base + UNIT_POS + 1 < count) offsets[base + UNIT_POS + 1] = carry + MY(v);           \
        if (base == 0 && UNIT_POS == 0) offsets[0] = 0;                                          \
        if (UNIT_POS == units - 1) sh->total = MY(v);                                            \
      }                                                                                          \
      SYNC_CUBE();                                                                               \
      carry += sh->total;                                                                        \
    }                                                                                            \
  }                                                                                              \
                                                                                                 \
  PHASED_KERNEL(scan_tiles_##sfx, (scan_shared_##sfx, sh), (const T, x), (const T, offsets),     \
                (T, y)) {                                                                        \
    const uint64_t n = min(min(INFO_U64(0), LEN(x)), LEN(y)), units = CUBE_DIM;                  \
    const uint64_t tile = units * SCAN_PER_UNIT, tiles = (n + tile - 1) / tile;                  \
    const uint64_t per = (tiles + CUBE_COUNT - 1) / CUBE_COUNT;                                  \
    const uint64_t first = CUBE_POS * per, last = min(first + per, tiles);                       \
    EXCLUSIVE(T, before); /* the sum of the tile's elements before the unit's own */             \
    EXCLUSIVE(T, own);                                                                           \
    T carry = LOAD(offsets, CUBE_POS);                                                           \
    for (uint64_t t = first; t < last; ++t) {                                                    \
      const uint64_t base = t * tile;                                                            \
      PHASE { /* x[i], y[i] unchecked: i < n <= LEN(x), LEN(y) */                                \
        const uint64_t at = base + UNIT_POS * SCAN_PER_UNIT;                                     \
        T s = 0;                                                                                 \
        if (at + SCAN_PER_UNIT <= n) /* a constant trip count: unrolled */                       \
          for (uint32_t k = 0; k < SCAN_PER_UNIT; ++k) s += x[at + k];                           \
        else                                                                                     \
          for (uint64_t i = at; i < n; ++i) s += x[i];                                           \
        MY(own) = s;                                                                             \
      }                                                                                          \
      CUBE_SCAN_EXCLUSIVE_SUM(MY(own), sh->scratch, MY(before));                                 \
      PHASE {                                                                                    \
        const uint64_t at = base + UNIT_POS * SCAN_PER_UNIT;                                     \
        T run = carry + MY(before);                                                              \
        if (at + SCAN_PER_UNIT <= n) {                                                           \
          for (uint32_t k = 0; k < SCAN_PER_UNIT; ++k) {                                         \
            run += x[at + k];                                                                    \
            y[at + k] = run;                                                                     \
          }                                                                                      \
        } else {                                                                                 \
          for (uint64_t i = at; i < n; ++i) {                                                    \
            run += x[i];                                                                         \
            y[i] = run;                                                                          \
          }                                                                                      \
        }                                                                                        \
        if (UNIT_POS == units - 1) sh->total = MY(before) + MY(own);                             \
      }                                                                                          \
      SYNC_CUBE();                                                                               \
      carry += sh->total;                                                                        \
    }                                                                                            \
  }

SCAN_KERNELS(uint32_t, u32)
SCAN_KERNELS(float, f32)

/* A large inclusive prefix sum, y[i] = x[0] + ... + x[i], in the kernel language
   (cubert/cube.h), built on the cube-level helpers. Three launches (examples/scan.c):
     1. scan_totals_*:  cube c adds up its run of rows (one row = CUBE_DIM elements) into
                        totals[c] (CUBE_REDUCE_SUM);
     2. scan_offsets_*: one cube turns the totals into each cube's offset, offsets[c] = totals[0]
                        + ... + totals[c-1] (CUBE_SCAN_INCLUSIVE_SUM over blocks of CUBE_DIM
                        totals, with a carry between blocks);
     3. scan_rows_*:    cube c scans its rows again, one row at a time (CUBE_SCAN_INCLUSIVE_SUM),
                        from offsets[c], carrying each row's total to the next.
   The data is read twice and written once (the "reduce, then scan" order; scanning first and
   adding the offsets back would read and write it twice). Info word 0: n. Launches 1 and 3 take
   the same 1-D cube count and dim; launch 2 one cube of any dim, and offsets has one element
   per cube of the other launches. Every kernel is a PHASED_KERNEL (on the CPU server each
   PHASE is a loop over the cube's units, so a row costs one pass of the helper), for uint32_t
   (sums wrap modulo 2^32, as in C) and float. */
#include "cubert/cube.h"

#define SCAN_MAX_UNITS 1024

#define SCAN_KERNELS(T, sfx)                                                                    \
  typedef struct scan_shared_##sfx {                                                            \
    T scratch[SCAN_MAX_UNITS];                                                                  \
    T total; /* the last unit's inclusive sum of a row or block */                              \
  } scan_shared_##sfx;                                                                          \
                                                                                                \
  PHASED_KERNEL(scan_totals_##sfx, (scan_shared_##sfx, sh), (const T, x), (T, totals)) {        \
    const uint64_t n = min(INFO_U64(0), LEN(x)), units = CUBE_DIM;                              \
    const uint64_t rows = (n + units - 1) / units, per = (rows + CUBE_COUNT - 1) / CUBE_COUNT;  \
    const uint64_t first = CUBE_POS * per, last = min(first + per, rows);                       \
    EXCLUSIVE(T, part);                                                                         \
    PHASE {                                                                                     \
      MY(part) = 0;                                                                             \
    }                                                                                           \
    for (uint64_t r = first; r < last; ++r) { /* x[i] is unchecked: i < n <= LEN(x) */          \
      const uint64_t base = r * units;                                                          \
      PHASE {                                                                                   \
        if (base + UNIT_POS < n) MY(part) += x[base + UNIT_POS];                                \
      }                                                                                         \
    }                                                                                           \
    CUBE_REDUCE_SUM(MY(part), sh->scratch, MY(part));                                           \
    PHASE {                                                                                     \
      if (UNIT_POS == 0) STORE(totals, CUBE_POS, MY(part));                                     \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  PHASED_KERNEL(scan_offsets_##sfx, (scan_shared_##sfx, sh), (const T, totals), (T, offsets)) { \
    const uint64_t count = min(LEN(totals), LEN(offsets)), units = CUBE_DIM;                    \
    EXCLUSIVE(T, v);                                                                            \
    T carry = 0;                                                                                \
    for (uint64_t base = 0; base < count; base += units) {                                      \
      PHASE {                                                                                   \
        MY(v) = base + UNIT_POS < count ? totals[base + UNIT_POS] : 0;                          \
      }                                                                                         \
      CUBE_SCAN_INCLUSIVE_SUM(MY(v), sh->scratch, MY(v));                                       \
      PHASE { /* offsets[i + 1] = totals[0] + ... + totals[i] */                                \
        if (base + UNIT_POS + 1 < count) offsets[base + UNIT_POS + 1] = carry + MY(v);          \
        if (base == 0 && UNIT_POS == 0) offsets[0] = 0;                                         \
        if (UNIT_POS == units - 1) sh->total = MY(v);                                           \
      }                                                                                         \
      SYNC_CUBE();                                                                              \
      carry += sh->total;                                                                       \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  PHASED_KERNEL(scan_rows_##sfx, (scan_shared_##sfx, sh), (const T, x), (const T, offsets),     \
                (T, y)) {                                                                       \
    const uint64_t n = min(min(INFO_U64(0), LEN(x)), LEN(y)), units = CUBE_DIM;                 \
    const uint64_t rows = (n + units - 1) / units, per = (rows + CUBE_COUNT - 1) / CUBE_COUNT;  \
    const uint64_t first = CUBE_POS * per, last = min(first + per, rows);                       \
    EXCLUSIVE(T, v);                                                                            \
    T carry = LOAD(offsets, CUBE_POS);                                                          \
    for (uint64_t r = first; r < last; ++r) {                                                   \
      const uint64_t base = r * units;                                                          \
      PHASE {                                                                                   \
        MY(v) = base + UNIT_POS < n ? x[base + UNIT_POS] : 0;                                   \
      }                                                                                         \
      CUBE_SCAN_INCLUSIVE_SUM(MY(v), sh->scratch, MY(v));                                       \
      PHASE {                                                                                   \
        if (base + UNIT_POS < n) y[base + UNIT_POS] = carry + MY(v);                            \
        if (UNIT_POS == units - 1) sh->total = MY(v);                                           \
      }                                                                                         \
      SYNC_CUBE();                                                                              \
      carry += sh->total;                                                                       \
    }                                                                                           \
  }

SCAN_KERNELS(uint32_t, u32)
SCAN_KERNELS(float, f32)

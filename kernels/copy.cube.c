/* copy_strided: gathers a strided tensor into a contiguous row-major buffer (the device side of
   read_tensor; kernels.h gives the info words). One unit per destination element: it splits
   its index into coordinates (innermost dimension first) and moves the element from the
   strided source, as one 2-, 4- or 8-byte access where the element has that size (bounds
   checked once per element), else byte by byte through checked accesses, so no info words can
   take it outside the buffers.

   On the CPU server the hand-written copy_rows.c runs instead: it walks the source a row at a
   time with memcpy and is many times faster than a byte per access (bench/cpu_server.c,
   docs/BENCHMARKS.md); tests/unit/kernels_cross.c checks it against this body. */
#include "cubert/cube.h"

#define COPY_MAX_RANK 8 /* CUBERT_KERNEL_COPY_MAX_RANK */

#ifndef CUBERT_CUBE_OPENCL
#include "copy_rows.h"
#define CUBERT_CPU_OVERRIDE_copy_strided ~, 1, cubert_copy_strided_rows_cpu
#endif

/* 1 when the rank (info word 0) is at most COPY_MAX_RANK; else 0, and in validate mode the
   launch's violation: the kernel's own guard must not hide a bad launch from validate mode. */
#define COPY_RANK_OK() INFO_AT_MOST(0, COPY_MAX_RANK)

UNIT_KERNEL(copy_strided, INFO_U64(2), (const uint8_t, src), (uint8_t, dst)) {
  const uint64_t rank = INFO_U64(0), elem = INFO_U64(1);
  /* A rank above the limit copies nothing; validate mode reports it (COPY_RANK_OK). */
  if (!COPY_RANK_OK() || elem == 0) return;
  uint64_t rest = UNIT_ID, offset = 0;
  for (uint64_t d = rank; d-- > 1;) {
    const uint64_t dim = INFO_U64(3 + d);
    if (dim == 0) return; /* n > 0 with an empty dimension: inconsistent info words */
    offset += (rest % dim) * INFO_U64(3 + rank + d);
    rest /= dim;
  }
  /* The outermost coordinate is what is left: in range exactly when the unit is below
     product(shape) (for rank 0 only unit 0 exists). */
  if (rank == 0 ? rest != 0 : rest >= INFO_U64(3)) return;
  if (rank > 0) offset += rest * INFO_U64(3 + rank);
  const uint64_t from = offset * elem, to = UNIT_ID * elem;
  /* Elements of 2, 4 or 8 bytes move as one typed access when both ends lie inside their
     buffers and the buffers are aligned to the element (always, for the allocator's memory):
     one bounds check per element instead of one per byte. The rest, and anything a checked
     launch would drop or validate mode would report, go byte by byte. */
  const bool fits = from + elem <= LEN(src) && to + elem <= LEN(dst) &&
                    ((uint64_t)src | (uint64_t)dst) % elem == 0;
  if (fits && elem == 4) {
    ((CUBE_GLOBAL uint32_t *)dst)[to / 4] = ((CUBE_GLOBAL const uint32_t *)src)[from / 4];
  } else if (fits && elem == 8) {
    ((CUBE_GLOBAL uint64_t *)dst)[to / 8] = ((CUBE_GLOBAL const uint64_t *)src)[from / 8];
  } else if (fits && elem == 2) {
    ((CUBE_GLOBAL uint16_t *)dst)[to / 2] = ((CUBE_GLOBAL const uint16_t *)src)[from / 2];
  } else {
    for (uint64_t b = 0; b < elem; ++b) STORE(dst, to + b, LOAD(src, from + b));
  }
}

/* cubert — copy_strided on the CPU server (copy_rows.c): the hand-written override of
   copy.cube.c's portable body, which walks the source a row at a time with memcpy. */
#ifndef CUBERT_KERNELS_COPY_ROWS_H
#define CUBERT_KERNELS_COPY_ROWS_H

#include "cubert/kernel.h"

/* The CPU function of copy_strided (copy.cube.c's CUBERT_CPU_OVERRIDE_copy_strided): the units
   [ctx->unit_begin, ctx->unit_end) of a launch, info words as in cubert/kernels.h. */
void cubert_copy_strided_rows_cpu(const cubert_cpu_ctx *ctx);

#endif /* CUBERT_KERNELS_COPY_ROWS_H */

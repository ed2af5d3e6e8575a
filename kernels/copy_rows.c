/* copy_strided on the CPU server: the hand-written override of copy.cube.c's portable body
   (info layout in kernels.h).

   The portable body splits every destination index into coordinates and moves a byte per
   checked access. This version splits only the first index of its range and then walks the
   source like an odometer, a row of the innermost dimension at a time: a row with unit stride
   is one memcpy, so reading a pitched (optimized-layout) tensor costs about as much as a plain
   copy. It checks the info words against the buffers once per call instead of per access. */
#include "copy_rows.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cubert/kernels.h"

/* Checks the info words and the buffer sizes against each other. Returns NULL when the copy
   is safe, else writes the reason into `why`. Every call of a launch runs it (it is a few
   dozen operations), so no call reads or writes out of bounds whatever it was given. */
static const char *validate(const cubert_cpu_ctx *ctx, char *why, size_t why_size) {
  if (ctx->buffer_count < 2 || ctx->info_count < 3) {
    snprintf(why, why_size,
             "copy_strided: got %" PRIu32 " buffers and %" PRIu32
             " info words, needs 2 buffers (src, dst) and at least 3 info words",
             ctx->buffer_count, ctx->info_count);
    return why;
  }
  const uint64_t rank = ctx->info[0], elem = ctx->info[1], n = ctx->info[2];
  if (rank > CUBERT_KERNEL_COPY_MAX_RANK) {
    snprintf(why, why_size, "copy_strided: rank %" PRIu64 " exceeds the maximum of %d", rank,
             CUBERT_KERNEL_COPY_MAX_RANK);
    return why;
  }
  if (ctx->info_count < 3 + 2 * rank) {
    snprintf(why, why_size,
             "copy_strided: rank %" PRIu64 " needs %" PRIu64 " info words, got %" PRIu32, rank,
             3 + 2 * rank, ctx->info_count);
    return why;
  }
  if (elem == 0) {
    snprintf(why, why_size, "copy_strided: elem_size is 0 bytes");
    return why;
  }
  const uint64_t *shape = ctx->info + 3, *strides = ctx->info + 3 + rank;
  /* product(shape) must be n, and the largest source offset must fit the source buffer. */
  uint64_t count = 1, last = 0;
  int overflow = 0;
  for (uint64_t d = 0; d < rank; ++d) {
    overflow |= __builtin_mul_overflow(count, shape[d], &count);
    uint64_t span = 0;
    if (shape[d] > 0) overflow |= __builtin_mul_overflow(shape[d] - 1, strides[d], &span);
    overflow |= __builtin_add_overflow(last, span, &last);
  }
  if (overflow || count != n) {
    snprintf(why, why_size,
             "copy_strided: n = %" PRIu64 " elements does not match the product of the shape%s", n,
             overflow ? " (the shape or the strides overflow 64 bits)" : "");
    return why;
  }
  if (n == 0 || ctx->buffer_bytes == NULL) return NULL;
  uint64_t dst_bytes = 0, src_bytes = 0;
  overflow = __builtin_mul_overflow(n, elem, &dst_bytes);
  overflow |= __builtin_add_overflow(last, 1, &src_bytes);
  overflow |= __builtin_mul_overflow(src_bytes, elem, &src_bytes);
  if (overflow || dst_bytes > ctx->buffer_bytes[1] || src_bytes > ctx->buffer_bytes[0]) {
    snprintf(why, why_size,
             "copy_strided: needs %" PRIu64 " source bytes and %" PRIu64
             " destination bytes, the buffers hold %" PRIu64 " and %" PRIu64,
             src_bytes, dst_bytes, ctx->buffer_bytes[0], ctx->buffer_bytes[1]);
    return why;
  }
  return NULL;
}

/* Copies `len` elements of `elem` bytes from src (element offset `offset`, element stride
   `stride`) to the contiguous dst. memcpy with a constant size compiles to one load and one
   store, and, unlike casting the byte pointers, is valid for any alignment. */
static void copy_row(const uint8_t *src, uint8_t *dst, uint64_t offset, uint64_t stride,
                     uint64_t len, uint64_t elem) {
  if (stride == 1) {
    memcpy(dst, src + offset * elem, len * elem);
    return;
  }
#define COPY_ROW_OF(size)                                    \
  for (uint64_t k = 0; k < len; ++k, offset += stride)       \
    memcpy(dst + k * (size), src + offset * (size), (size)); \
  return
  switch (elem) {
    case 1:
      COPY_ROW_OF(1);
    case 2:
      COPY_ROW_OF(2);
    case 4:
      COPY_ROW_OF(4);
    case 8:
      COPY_ROW_OF(8);
    default:
      COPY_ROW_OF(elem);
  }
#undef COPY_ROW_OF
}

void cubert_copy_strided_rows_cpu(const cubert_cpu_ctx *ctx) {
  char why[256];
  if (validate(ctx, why, sizeof why) != NULL) {
    /* Every call of the launch fails the same way; only the one that holds unit 0 (there is
       exactly one) reports, so the user sees one error rather than one per chunk. */
    if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, why);
    return;
  }
  const uint8_t *src = ctx->buffers[0];
  uint8_t *dst = ctx->buffers[1];
  const uint32_t rank = (uint32_t)ctx->info[0];
  const uint64_t elem = ctx->info[1], n = ctx->info[2];
  const uint64_t *shape = ctx->info + 3, *strides = ctx->info + 3 + rank;
  const uint64_t end = ctx->unit_end < n ? ctx->unit_end : n;
  uint64_t i = ctx->unit_begin;
  if (i >= end) return;
  if (rank == 0) { /* a scalar: n == 1, so this call holds unit 0 */
    memcpy(dst, src, elem);
    return;
  }

  /* Coordinates and source offset (in elements) of destination element i. */
  uint64_t coord[CUBERT_KERNEL_COPY_MAX_RANK];
  uint64_t offset = 0, rest = i;
  for (uint32_t d = rank; d-- > 0;) {
    coord[d] = rest % shape[d];
    rest /= shape[d];
    offset += coord[d] * strides[d];
  }

  const uint32_t inner = rank - 1;
  while (i < end) {
    uint64_t len = shape[inner] - coord[inner];
    if (len > end - i) len = end - i;
    copy_row(src, dst + i * elem, offset, strides[inner], len, elem);
    i += len;
    coord[inner] += len;
    offset += len * strides[inner];
    /* Carry into the outer dimensions (offsets wrap modulo 2^64 on the way and come out
       exact, since validate() bounded the final ones). */
    for (uint32_t d = inner; d > 0 && coord[d] == shape[d]; --d) {
      offset -= coord[d] * strides[d];
      coord[d] = 0;
      ++coord[d - 1];
      offset += strides[d - 1];
    }
  }
}

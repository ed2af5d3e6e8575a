/* Elementwise library kernels: the C implementations beside elementwise.cl.

   Each CPU function runs the call's unit range clamped to n (units past n do nothing) in a
   loop helper whose pointers are restrict-qualified parameters. Three choices make that loop
   vectorise well at -O2 (the default build) and -O3 (Release) alike:
   - restrict on parameters: GCC ignores restrict on local pointer variables for alias
     analysis, and without it versions the loop with runtime overlap checks (or gives up);
   - blocks of BLOCK elements with a fixed-length inner loop, then a scalar tail: GCC's -O2
     cost model ("very cheap") only vectorises loops that need no scalar epilogue, which a
     fixed-length inner loop satisfies; at -O3 or with clang the plain loop would do too;
   - the pointers advance by one block per iteration and the inner loop indexes them from 0
     (BLOCK_LOOP). Indexing with `i + j` instead makes GCC 12 at -O3 unroll the blocks four
     times and keep a dead vector induction variable that it spills to the stack every
     iteration; that loop streamed about 7% below the STREAM triad on 64 Mi floats, while this
     form (one 64-byte block per iteration: four loads, adds and stores per array on SSE2)
     matches it. bench/cpu_server.c section 3 measures it.
   The kernels read element i and write element i in the same iteration only, so an output that
   is exactly one of the inputs (in place) still gets the right values; that, not a partial
   overlap, is the aliasing kernels.h allows. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cubert/kernels.h"

extern const char cubert_src_elementwise_cl[];

/* 16 elements = 64 bytes of f32/i32: one cache line, a whole number of vectors on every SIMD
   width up to AVX-512. */
#define BLOCK 16

/* The end of the call's range clamped to n = info[0], or 0 (nothing to do) when the launch
   cannot hold n elements: too few buffers or info words, or a buffer smaller than n elements.
   The check costs a few comparisons per call (not per element) and keeps a CPU kernel inside
   its buffers whatever n says; every call of such a launch fails alike, and only the one that
   holds unit 0 (there is exactly one) reports, so the user sees one error. */
static uint64_t checked_end(const cubert_cpu_ctx *ctx, const char *name, uint32_t buffer_count,
                            uint32_t info_count) {
  char why[256];
  if (ctx->buffer_count < buffer_count || ctx->info_count < info_count) {
    snprintf(why, sizeof why,
             "%s: got %" PRIu32 " buffers and %" PRIu32 " info words, needs %" PRIu32
             " buffers and %" PRIu32 " info words",
             name, ctx->buffer_count, ctx->info_count, buffer_count, info_count);
  } else {
    const uint64_t n = ctx->info[0];
    uint32_t b = 0;
    if (ctx->buffer_bytes != NULL)
      while (b < buffer_count && ctx->buffer_bytes[b] / 4 >= n) ++b;
    if (ctx->buffer_bytes == NULL || b == buffer_count)
      return ctx->unit_end < n ? ctx->unit_end : n;
    snprintf(why, sizeof why,
             "%s: n = %" PRIu64 " elements of 4 bytes, but buffer %" PRIu32 " holds %" PRIu64
             " bytes",
             name, n, b, ctx->buffer_bytes[b]);
  }
  if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, why);
  return 0;
}

/* Runs STATEMENT for the `count` elements of a call, whose restrict pointer parameters start at
   the call's first element: a fixed-length inner loop (j in [0, BLOCK)) over each whole block,
   `advance` moving the pointers one block on, then a scalar tail (j in [0, count % BLOCK)). See
   the top of the file for why this shape. */
#define BLOCK_LOOP(count, advance, STATEMENT)                             \
  do {                                                                    \
    for (uint64_t blocks_ = (count) / BLOCK; blocks_; --blocks_, advance) \
      for (unsigned j = 0; j < BLOCK; ++j) STATEMENT;                     \
    for (unsigned j = 0; j < (unsigned)((count) % BLOCK); ++j) STATEMENT; \
  } while (0)

static inline void fill_u32_loop(uint64_t count, uint32_t *restrict out, uint32_t value) {
  BLOCK_LOOP(count, out += BLOCK, out[j] = value);
}

static void fill_u32_cpu(const cubert_cpu_ctx *ctx) {
  const uint64_t end = checked_end(ctx, "fill_u32", 1, 2);
  if (end > ctx->unit_begin)
    fill_u32_loop(end - ctx->unit_begin, (uint32_t *)ctx->buffers[0] + ctx->unit_begin,
                  (uint32_t)ctx->info[1]);
}

/* out = a OP b over elements of type T. i32 kernels use T = uint32_t: signed overflow is
   undefined in C while unsigned arithmetic wraps, and the bits equal the two's-complement
   result the OpenCL version produces. */
#define BINARY_KERNEL(kname, T, OP)                                                         \
  static inline void kname##_loop(uint64_t count, const T *restrict a, const T *restrict b, \
                                  T *restrict out) {                                        \
    BLOCK_LOOP(count, (a += BLOCK, b += BLOCK, out += BLOCK), out[j] = a[j] OP b[j]);       \
  }                                                                                         \
  static void kname##_cpu(const cubert_cpu_ctx *ctx) {                                      \
    const uint64_t end = checked_end(ctx, #kname, 3, 1);                                    \
    const uint64_t i = ctx->unit_begin;                                                     \
    if (end > i)                                                                            \
      kname##_loop(end - i, (const T *)ctx->buffers[0] + i, (const T *)ctx->buffers[1] + i, \
                   (T *)ctx->buffers[2] + i);                                               \
  }

BINARY_KERNEL(add_f32, float, +)
BINARY_KERNEL(add_i32, uint32_t, +)
BINARY_KERNEL(mul_f32, float, *)
BINARY_KERNEL(mul_i32, uint32_t, *)

/* The in-place update is the exception to BLOCK_LOOP: indexed with `i + j`, GCC 12 at -O3 groups
   the loads of four blocks of x and y before their stores, which streams about 3% faster here
   than one block per iteration (47.5 against 46.0 GB/s on 2 threads; 64 Mi floats, where the
   triad makes 26.5), while for add the same transformation was 7% slower. At -O2 both forms
   give the same one-block loop. */
static inline void saxpy_f32_loop(uint64_t i, uint64_t end, float a, const float *restrict x,
                                  float *restrict y) {
  for (; i + BLOCK <= end; i += BLOCK)
    for (unsigned j = 0; j < BLOCK; ++j) y[i + j] = a * x[i + j] + y[i + j];
  for (; i < end; ++i) y[i] = a * x[i] + y[i];
}

static void saxpy_f32_cpu(const cubert_cpu_ctx *ctx) {
  const uint64_t end = checked_end(ctx, "saxpy_f32", 2, 2);
  if (end <= ctx->unit_begin) return;
  const uint32_t bits = (uint32_t)ctx->info[1];
  float a;
  memcpy(&a, &bits, sizeof a);
  saxpy_f32_loop(ctx->unit_begin, end, a, ctx->buffers[0], ctx->buffers[1]);
}

/* All six kernels share elementwise.cl, so the OpenCL server builds (and caches) one program
   for them. */
#define ELEMENTWISE_DEF(kname)                      \
  const cubert_kernel_def cubert_kernel_##kname = { \
      .name = #kname,                               \
      .opencl_source = cubert_src_elementwise_cl,   \
      .opencl_entry = "cubert_" #kname,             \
      .cpu = kname##_cpu,                           \
  };

ELEMENTWISE_DEF(fill_u32)
ELEMENTWISE_DEF(add_f32)
ELEMENTWISE_DEF(add_i32)
ELEMENTWISE_DEF(mul_f32)
ELEMENTWISE_DEF(mul_i32)
ELEMENTWISE_DEF(saxpy_f32)

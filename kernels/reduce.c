/* reduce_sum_f32: per-cube partial sums, the C implementation beside reduce.cl (same
   algorithm, same summation order, so both backends round alike; info layout in kernels.h).

   The CPU server runs a SYNC_CUBE kernel one unit per call, the units of a cube as cooperative
   contexts on one worker that switch at each cubert_cpu_sync_cube; ctx->shared is the cube's
   own CUBERT_KERNEL_REDUCE_SCRATCH floats. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "cubert/kernels.h"

extern const char cubert_src_reduce_cl[];

/* A cube of one unit has nobody to wait for: skipping the barrier saves a context switch per
   cube, and keeps the one-unit path free of the scheduler (tests call it directly). */
static inline void cube_barrier(const cubert_cpu_ctx *ctx, uint64_t units) {
  if (units > 1) cubert_cpu_sync_cube(ctx);
}

/* Reports bad buffers or info words once (from unit 0 of the launch, which exists exactly
   once) and tells every unit to stop. Depends only on values equal for all units of a cube, so
   all of them return before the first barrier alike. */
static int invalid(const cubert_cpu_ctx *ctx, uint64_t id) {
  char why[256];
  if (ctx->buffer_count < 2 || ctx->info_count < 2) {
    snprintf(why, sizeof why,
             "reduce_sum_f32: got %" PRIu32 " buffers and %" PRIu32
             " info words, needs 2 buffers (in, out) and 2 info words (n, elements per cube)",
             ctx->buffer_count, ctx->info_count);
  } else if (ctx->shared == NULL) {
    snprintf(why, sizeof why, "reduce_sum_f32: launched without shared memory");
  } else {
    const uint64_t n = ctx->info[0];
    const uint64_t outputs = cubert_kernel_reduce_cube_count(n, ctx->info[1]);
    if (ctx->buffer_bytes == NULL || (n <= ctx->buffer_bytes[0] / sizeof(float) &&
                                      outputs <= ctx->buffer_bytes[1] / sizeof(float)))
      return 0;
    snprintf(why, sizeof why,
             "reduce_sum_f32: needs %" PRIu64 " input and %" PRIu64
             " output floats, the buffers hold %" PRIu64 " and %" PRIu64 " bytes",
             n, outputs, ctx->buffer_bytes[0], ctx->buffer_bytes[1]);
  }
  if (id == 0) cubert_cpu_fail(ctx, why);
  return 1;
}

/* acc[u] = in[begin + u] + in[begin + u + units] + ... (below end), for u < units.
   Accumulators go in blocks of 16 with a fixed inner trip count, which GCC vectorises even at
   -O2's cheap cost model; the adds of each accumulator stay in row order. */
static void shares_of_cube(const float *restrict in, uint64_t begin, uint64_t end, uint64_t units,
                           float *restrict acc) {
  enum { BLOCK = 16 };
  const uint64_t rows = (end - begin) / units, rest = (end - begin) % units;
  const float *base = in + begin;
  uint64_t u0 = 0;
  for (; u0 + BLOCK <= units; u0 += BLOCK) {
    float a[BLOCK] = {0};
    const float *row = base + u0;
    for (uint64_t k = 0; k < rows; ++k, row += units)
      for (int j = 0; j < BLOCK; ++j) a[j] += row[j];
    for (int j = 0; j < BLOCK; ++j) acc[u0 + j] = a[j];
  }
  for (uint64_t u = u0; u < units; ++u) {
    float a = 0.0f;
    for (uint64_t k = 0; k < rows; ++k) a += base[k * units + u];
    acc[u] = a;
  }
  for (uint64_t u = 0; u < rest; ++u) acc[u] += base[rows * units + u];
}

static void reduce_sum_f32_cpu(const cubert_cpu_ctx *ctx) {
  const uint64_t id = ctx->unit_begin;
  if (invalid(ctx, id)) return;
  const float *in = ctx->buffers[0];
  float *out = ctx->buffers[1];
  float *scratch = ctx->shared;
  const uint64_t n = ctx->info[0], per_cube = ctx->info[1];
  const uint64_t cube = cubert_cpu_cube_linear(ctx, id);
  const uint64_t units = cubert_cpu_units_per_cube(ctx);
  const uint64_t unit = cubert_cpu_unit_linear(ctx, id);

  /* Cubes past the last block (a spread cube count may launch extra ones) have no output. */
  if (cube >= cubert_kernel_reduce_cube_count(n, per_cube)) return;
  const uint64_t begin = cube * per_cube;
  const uint64_t end = n - begin < per_cube ? n : begin + per_cube;

  float share;
  if (units > 1 && units <= CUBERT_KERNEL_REDUCE_SCRATCH) {
    /* The units of a cube take turns on one worker, so one strided loop per unit would be a
       chain of dependent adds. Unit 0 computes every unit's share at once instead, one
       accumulator per unit (a loop the compiler vectorises), in exactly the order each unit
       would have added its own: the result is bit-identical to the OpenCL kernel's. */
    if (unit == 0) shares_of_cube(in, begin, end, units, scratch);
    cube_barrier(ctx, units);
    share = scratch[unit];
    cube_barrier(ctx, units); /* everyone has its share before the fold below overwrites it */
  } else {
    share = 0.0f;
    for (uint64_t i = begin + unit; i < end; i += units) share += in[i];
  }

  uint64_t slots = 1;
  while (slots * 2 <= units && slots * 2 <= CUBERT_KERNEL_REDUCE_SCRATCH) slots *= 2;

  if (unit < slots) scratch[unit] = share;
  cube_barrier(ctx, units);
  for (uint64_t base = slots; base < units; base += slots) {
    if (unit >= base && unit - base < slots) scratch[unit - base] += share;
    cube_barrier(ctx, units);
  }
  for (uint64_t step = slots / 2; step > 0; step /= 2) {
    if (unit < step) scratch[unit] += scratch[unit + step];
    cube_barrier(ctx, units);
  }
  if (unit == 0) out[cube] = scratch[0];
}

const cubert_kernel_def cubert_kernel_reduce_sum_f32 = {
    .name = "reduce_sum_f32",
    .opencl_source = cubert_src_reduce_cl,
    .opencl_entry = "cubert_reduce_sum_f32",
    .cpu = reduce_sum_f32_cpu,
    .flags = CUBERT_KERNEL_SYNC_CUBE,
    .shared_bytes = CUBERT_KERNEL_REDUCE_SCRATCH * sizeof(float),
};

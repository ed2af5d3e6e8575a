/** @file
   cubert — the kernel library: ready-made kernels (kernels/README.md), each written once in the
   kernel language (cubert/cube.h, the .cube.c files in kernels/, docs/kernels.md), so the CPU
   server runs the code the OpenCL devices run.

   Calling convention shared by every kernel below:
   - Buffers are bound in the order listed (cubert_kernel_args.buffers). Each kernel declares
     its buffers' element types; a launch with another buffer count, or a buffer that is not a
     whole number of elements, is INVALID_ARGUMENT on every server.
   - "Unit id" is the global unit id numbered cube-major (see cubert_cpu_ctx in kernel.h):
       id = cube_linear * units_per_cube + unit_linear.
     For a 1-D launch it equals the OpenCL global id; a launch may be spread over 2-D/3-D cube
     counts (cubert_cube_count_spread) with the same result.
   - Elementwise kernels handle unit id `id` when id < n (info[0]) and ignore the others, so a
     launch may cover more units than elements (round n up to whole cubes).
   - Every info word is a uint64_t. Floating-point scalars travel as their IEEE-754 bit pattern
     in the low 32 bits (cubert_kernel_info_f32 builds one).
   - Accesses follow the launch's execution mode (docs/kernels.md): checked (the default) never
     leaves a buffer whatever the info words say (out-of-range reads give 0, writes are
     dropped, missing info words read 0); validate also reports the first violation at the
     next sync, naming kernel, buffer, unit and index; unchecked trusts the caller.
   - An output buffer may be the very same buffer as an input of an elementwise kernel (in
     place, e.g. add_f32 with out == a); partial overlaps give undefined results.

   The definitions are immutable, live for the whole process and may be used from any thread. */
#ifndef CUBERT_KERNELS_H
#define CUBERT_KERNELS_H

#include <stdint.h>
#include <string.h>

#include "cubert/export.h"
#include "cubert/kernel.h"
#include "cubert/layout.h"

CUBERT_EXTERN_C_BEGIN

/** Empty kernel. No buffers, no info words, any launch shape. For launch-latency benchmarks. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_noop;

/** out[id] = value for id < n, 4-byte elements (u32, i32 and f32 alike: pass the bits).
   Buffers: 0 out (n * 4 bytes).
   Info: [0] n (elements), [1] value bits in the low 32 bits.
   Launch: one unit per element, any cube shape. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_fill_u32;

/** @{ */
/** Gathers a strided tensor into a contiguous row-major one (used by read_tensor).
   Buffers: 0 src (bytes), 1 dst (n * elem_size bytes, row-major, contiguous).
   Info (3 + 2 * rank words):
     [0] rank r (0..CUBERT_KERNEL_COPY_MAX_RANK; rank 0 copies one element),
     [1] elem_size in bytes (1, 2, 4 and 8 use typed moves; any other size is copied
         byte by byte; the src and dst buffers must be aligned to elem_size when it is 2, 4 or
         8, which the allocator guarantees),
     [2] n = product(shape), the number of elements,
     [3 .. 3+r)       shape, in elements,
     [3+r .. 3+2r)    src strides, in elements (dst strides are implied by the shape).
   Unit id = the destination element: dst[id] = src[sum(coord[d] * stride[d])].
   Launch: one unit per element, any cube shape.
   Checks: units whose coordinates fall outside the shape, a rank above the limit and an
   elem_size of 0 copy nothing; every byte moved is a checked access; validate mode reports a
   rank above the limit ("info word 0 = 9, above the kernel's limit of 8"). On the CPU server a
   hand-written override walks rows with memcpy; it checks the info words against the
   buffers once per call and reports (cubert_cpu_fail) a rank above the limit, too few info
   words, n != product(shape) or buffers too small, and then copies nothing.
   cubert_kernel_copy_strided_portable is the portable body on every server (for tests). */
CUBERT_API extern const cubert_kernel_def cubert_kernel_copy_strided;
CUBERT_API extern const cubert_kernel_def cubert_kernel_copy_strided_portable;
/** @} */
/** The most dimensions copy_strided takes: 8, the tensor rank limit of layout.h. */
#define CUBERT_KERNEL_COPY_MAX_RANK CUBERT_MAX_RANK

/** @{ */
/** out[id] = a[id] + b[id] (f32 / i32, i32 wraps around on overflow) for id < n.
   Buffers: 0 a, 1 b, 2 out (n elements each). Info: [0] n.
   Launch: one unit per element, any cube shape. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_add_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_add_i32;
/** @} */
/** @{ */
/** out[id] = a[id] * b[id] (f32 / i32, i32 wraps around) for id < n. Layout as add_f32. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_mul_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_mul_i32;
/** @} */

/** y[id] = a * x[id] + y[id] for id < n (f32; whether a*x+y is fused is up to the device).
   Buffers: 0 x, 1 y (n floats each; y is read and written).
   Info: [0] n, [1] a as f32 bits in the low 32 bits (cubert_kernel_info_f32(a)).
   Launch: one unit per element, any cube shape. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_saxpy_f32;

/** Partial sums: cube c writes out[c] = sum of in[c*e .. min((c+1)*e, n)), e = info[1].
   A phased cube kernel (CUBERT_KERNEL_PHASED: barriers + CUBERT_KERNEL_REDUCE_SCRATCH floats of
   shared memory per cube; on the CPU server one call per cube, no fibers).
   Buffers: 0 in (n floats), 1 out (ceil(n / e) floats; cubert_kernel_reduce_cube_count).
   Info: [0] n, [1] e = elements per cube (>= 1; 0 writes nothing).
   Launch: at least ceil(n / e) cubes (extra cubes write nothing, so a spread 2-D/3-D cube
   count is fine), any cube dim and shape: not limited to powers of two nor to the scratch
   size (units beyond CUBERT_KERNEL_REDUCE_SCRATCH fold their sums in before the tree).
   Each unit sums a strided share of the block, then the cube adds the shares in a tree, so
   the rounding differs from a sequential sum; integers below 2^24 sum exactly.
   For a full sum, launch again on out (e = ceil(n / e)) or add the partial sums on the host. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_reduce_sum_f32;
#define CUBERT_KERNEL_REDUCE_SCRATCH 1024 /**< floats of shared memory per cube (4 KiB) */

/** @{ */
/** Reductions along an axis (cubert_op_reduce; kernels/reduce_axis.cube.c), phased kernels:
   reduce_inner_<f> (one cube per output and split; units share the reduced axis; at most
   CUBERT_KERNEL_REDUCE_AXIS_MAX_UNITS units, 1-D cubes) and reduce_outer_<f> (one cube per
   block of CUBE_DIM_X outputs along the last kept axis and split; each unit walks the axis),
   for f in sum_f32, mean_f32, sum_i32, mean_i32, mean_i64 (pass 2 of mean_i32), max_f32,
   min_f32, max_i32, min_i32, argmax_f32, argmin_f32, argmax_i32, argmin_i32.
   Buffers: 0 in (const T), 1 in_idx (const i32), 2 part (A), 3 part_idx (i32), 4 out (O), where
   T/A/O are the element, accumulator and output types (mean_i32: i32/i64/f32; argmax: T/T/i32).
   Info (CUBERT_KERNEL_REDUCE_AXIS_INFO(kr) words): [0] kr, kept axes (<= 7; outer needs >= 1),
   [1] R, reduced length, [2] its input stride, [3] input offset, [4] output offset, [5] S splits
   (>= 1), [6] chunk (elements of the axis per split), [7] flags (1: index of element p is
   in_idx[p], else its position along the axis; 2: write partials part[k*S + s] (and part_idx)
   instead of out; 4: reduce_inner reads eight elements per unit and step), [8] divisor of mean, [9]
   rows (outputs: product of the kept shape), then kr kept lengths, kr input strides and kr output
   strides. Output k (row-major over the kept shape) reads in[in_offset + sum(c_d * in_stride_d) + r
   * R-stride] and writes out[out_offset + sum(c_d * out_stride_d)]. Cube counts: inner rows * S,
   outer ceil(I / CUBE_DIM_X) * (rows / I) * S with I the last kept length (extra cubes do nothing).
   Elements outside `in` are never read: a cube whose range leaves `in` (or `in_idx`, with
   flags bit 0), or whose walk passes 2^64, reduces nothing; validate mode reports it (the
   element past the buffer, or element 2^64-1 of `in` for a walk past 2^64). */
CUBERT_API extern const cubert_kernel_def cubert_kernel_reduce_inner_sum_f32,
    cubert_kernel_reduce_outer_sum_f32, cubert_kernel_reduce_inner_mean_f32,
    cubert_kernel_reduce_outer_mean_f32, cubert_kernel_reduce_inner_sum_i32,
    cubert_kernel_reduce_outer_sum_i32, cubert_kernel_reduce_inner_mean_i32,
    cubert_kernel_reduce_outer_mean_i32, cubert_kernel_reduce_inner_mean_i64,
    cubert_kernel_reduce_outer_mean_i64, cubert_kernel_reduce_inner_max_f32,
    cubert_kernel_reduce_outer_max_f32, cubert_kernel_reduce_inner_min_f32,
    cubert_kernel_reduce_outer_min_f32, cubert_kernel_reduce_inner_max_i32,
    cubert_kernel_reduce_outer_max_i32, cubert_kernel_reduce_inner_min_i32,
    cubert_kernel_reduce_outer_min_i32, cubert_kernel_reduce_inner_argmax_f32,
    cubert_kernel_reduce_outer_argmax_f32, cubert_kernel_reduce_inner_argmin_f32,
    cubert_kernel_reduce_outer_argmin_f32, cubert_kernel_reduce_inner_argmax_i32,
    cubert_kernel_reduce_outer_argmax_i32, cubert_kernel_reduce_inner_argmin_i32,
    cubert_kernel_reduce_outer_argmin_i32;
/** @} */
/** @{ */
/** reduce_outer_sync_<f>: reduce_outer_<f> with a barrier after each step along the axis (for
   OpenCL devices that are CPUs, where it makes the compiled loop run over the units per step). */
CUBERT_API extern const cubert_kernel_def cubert_kernel_reduce_outer_sync_sum_f32,
    cubert_kernel_reduce_outer_sync_mean_f32, cubert_kernel_reduce_outer_sync_sum_i32,
    cubert_kernel_reduce_outer_sync_mean_i32, cubert_kernel_reduce_outer_sync_mean_i64,
    cubert_kernel_reduce_outer_sync_max_f32, cubert_kernel_reduce_outer_sync_min_f32,
    cubert_kernel_reduce_outer_sync_max_i32, cubert_kernel_reduce_outer_sync_min_i32,
    cubert_kernel_reduce_outer_sync_argmax_f32, cubert_kernel_reduce_outer_sync_argmin_f32,
    cubert_kernel_reduce_outer_sync_argmax_i32, cubert_kernel_reduce_outer_sync_argmin_i32;
/** @} */
/** @{ */
/** reduce_outer_wide_<f> and reduce_outer_wide_sync_<f>: reduce_outer_<f> (and _sync) where a
   cube covers 8 * units outputs of the last kept axis, unit u owning outputs g * units + u
   (g < 8): each step along the axis reads one contiguous run of the block's row. Same info and
   buffers; the cube count is ceil(len / (8 * units)) * (rows / len) * S. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_reduce_outer_wide_sum_f32,
    cubert_kernel_reduce_outer_wide_mean_f32, cubert_kernel_reduce_outer_wide_sum_i32,
    cubert_kernel_reduce_outer_wide_mean_i32, cubert_kernel_reduce_outer_wide_mean_i64,
    cubert_kernel_reduce_outer_wide_max_f32, cubert_kernel_reduce_outer_wide_min_f32,
    cubert_kernel_reduce_outer_wide_max_i32, cubert_kernel_reduce_outer_wide_min_i32,
    cubert_kernel_reduce_outer_wide_argmax_f32, cubert_kernel_reduce_outer_wide_argmin_f32,
    cubert_kernel_reduce_outer_wide_argmax_i32, cubert_kernel_reduce_outer_wide_argmin_i32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_reduce_outer_wide_sync_sum_f32,
    cubert_kernel_reduce_outer_wide_sync_mean_f32, cubert_kernel_reduce_outer_wide_sync_sum_i32,
    cubert_kernel_reduce_outer_wide_sync_mean_i32, cubert_kernel_reduce_outer_wide_sync_mean_i64,
    cubert_kernel_reduce_outer_wide_sync_max_f32, cubert_kernel_reduce_outer_wide_sync_min_f32,
    cubert_kernel_reduce_outer_wide_sync_max_i32, cubert_kernel_reduce_outer_wide_sync_min_i32,
    cubert_kernel_reduce_outer_wide_sync_argmax_f32,
    cubert_kernel_reduce_outer_wide_sync_argmin_f32,
    cubert_kernel_reduce_outer_wide_sync_argmax_i32,
    cubert_kernel_reduce_outer_wide_sync_argmin_i32;
/** @} */
/** The most units of a reduce_inner cube. */
#define CUBERT_KERNEL_REDUCE_AXIS_MAX_UNITS 256
/** Info words of an axis reduction with `kr` (the argument) kept axes. */
#define CUBERT_KERNEL_REDUCE_AXIS_INFO(...) (10 + 3 * (__VA_ARGS__))

/** @{ */
/** Row softmax (cubert_op_softmax; kernels/softmax.cube.c, softmax_f64.cube.c): one cube per
   row (1-D cubes of at most CUBERT_KERNEL_SOFTMAX_MAX_UNITS units), max-subtracted.
   Buffers: 0 in, 1 out (f32, or f64 for softmax_f64, which needs CUBERT_FEATURE_FP64).
   Info (CUBERT_KERNEL_SOFTMAX_INFO(kr) words): [0] kr (kept axes <= 7), [1] C (row length),
   [2] in column stride, [3] out column stride, [4] in offset, [5] out offset, [6] rows, then kr
   kept lengths, kr in strides, kr out strides. out may be in (same offset and strides).
   softmax_online_*: the same in two passes over the row (a running maximum and sum, then the
   output), the same buffers and info; cubert_op_softmax tunes between the two forms.
   softmax_rows_f32: the three passes over ceil(rows / cube count) consecutive rows per cube,
   each row's exps overlapping the next row's maximum (for CPUs); the same buffers and info.
   softmax_units_*: one unit per row (a unit kernel: any cube dim, units past the rows idle),
   no shared memory or barriers, for short rows; the same buffers and info. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_softmax_f32, cubert_kernel_softmax_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_softmax_online_f32,
    cubert_kernel_softmax_online_f64, cubert_kernel_softmax_rows_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_softmax_units_f32,
    cubert_kernel_softmax_units_f64;
/** @} */
/** The most units of a softmax cube. */
#define CUBERT_KERNEL_SOFTMAX_MAX_UNITS 256
/** Info words of a softmax with `kr` (the argument) kept axes. */
#define CUBERT_KERNEL_SOFTMAX_INFO(...) (7 + 3 * (__VA_ARGS__))

/** @{ */
/** Matrix multiply, the kernels behind cubert_op_matmul (cubert/ops.h), which picks among them
   by autotune: c = alpha * A B per batch, for any strides; c is written, never read. Buffers
   a, b, c of the element type; 20 info words (element offsets and strides of the three
   operands, sizes, alpha; kernels/matmul.cube.c lists them). `simple`: one unit per element of
   C, any 1-D launch of at least batches * M * N units. `tileBMxBN[c]`: phased, cube dim
   (16, 16, 1), cube count (ceil(N / BN), ceil(M / BM), batches), BM x BN outputs per cube.
   `vec8x32_f32`: one unit per 8 x 32 block of C in vector registers (for CPUs behind OpenCL),
   any 1-D launch of at least batches * ceil(M / 8) * ceil(N / 32) units.
   `big128k<TK>_f32`: phased, cube dim (16, 16, 1), cube count (ceil(N / 128), ceil(M / 128),
   batches): 128 x 128 blocks, 8 x 8 outputs per unit, double-buffered shared tiles of K depth
   TK (8 or 16), for GPUs.
   `beta`: buffers t, c; c = t + beta * c (t dense), or beta * c. The f64 kernels need
   CUBERT_FEATURE_FP64 (CUBERT_KERNEL_NEEDS_FP64). Prefer cubert_op_matmul. */
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_simple_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile32x32_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile64x64_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile128x64_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile128x256c_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_vec8x32_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_big128k8_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_big128k16_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_big128k16mn_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_beta_f32;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_simple_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile32x32_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile64x64_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile128x64_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_tile128x256c_f64;
CUBERT_API extern const cubert_kernel_def cubert_kernel_matmul_beta_f64;
/** @} */

/** Every kernel above, NULL-terminated, in declaration order (for tools and test suites that
   run the whole library). */
CUBERT_API extern const cubert_kernel_def *const cubert_kernel_library[];

/** The library kernel named `name` (its cubert_kernel_def.name, e.g. "add_f32"), or NULL. */
CUBERT_API const cubert_kernel_def *cubert_kernel_find(const char *name);

/* ---- helpers for building info words ------------------------------------------------------ */

/** An f32 as an info word: its IEEE-754 bits in the low 32 bits. */
static inline uint64_t cubert_kernel_info_f32(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

/** Cubes (== partial sums) reduce_sum_f32 needs for n elements at e elements per cube:
   ceil(n / e), 0 when e is 0. */
static inline uint64_t cubert_kernel_reduce_cube_count(uint64_t n, uint64_t elems_per_cube) {
  if (elems_per_cube == 0) return 0;
  return n / elems_per_cube + (n % elems_per_cube != 0);
}

CUBERT_EXTERN_C_END

#endif /* CUBERT_KERNELS_H */

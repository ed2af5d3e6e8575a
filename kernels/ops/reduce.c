/* cubert_op_reduce: reductions along one axis or all of them (cubert/ops.h).

   Every problem is brought into one form before a kernel sees it (kernels/reduce_axis.cube.c):
   `rows` outputs over the kept axes (sorted by input stride, largest first, then merged where
   contiguous in both in and out: cubert_strided_collapse_axes), each reducing R elements at stride
   sR. Two kernels serve that form: reduce_inner (a cube per output, units share the axis) for
   axes that move fastest in memory, reduce_outer (a unit per output, walking the axis) when a
   kept axis moves faster; a long axis with few outputs is split over several cubes and the
   partial values (and indices) reduced again by reduce_inner.

   Which kernel, cube dim and split run is measured per device by autotune (cubert/tune.h): the
   set below, keyed by the operation, the layout class and the anchored sizes. A full
   reduction (CUBERT_AXIS_ALL) of a view that does not collapse to one strided axis is gathered
   into a contiguous temporary first (cubert_op_copy), since the flat index of argmax is defined
   in row-major order of `in`. */
#include "ops/reduce.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cubert/geometry.h"
#include "cubert/kernels.h"
#include "cubert/ops.h"
#include "cubert/tune.h"
#include "cubert_kernel_variants.h" /* CUBERT_KERNEL_VARIANT_*: the CPU variants built */
#include "ops/cpu_variant.h"
#include "ops/forced_candidate.h"
#include "ops/known_good.h"
#include "ops/operand.h"
#include "strided.h"
#include "tune/tuner.h"

#define OP "reduce"
#define KEPT_MAX (CUBERT_MAX_RANK - 1)

typedef struct family {
  const cubert_kernel_def *inner, *outer, *outer_sync, *wide, *wide_sync;
  const cubert_kernel_def *second; /* reduce_inner over the partials */
  uint32_t part_size;              /* bytes of one partial value */
  bool has_idx;
} family;

#define FAM(pre, f, s, size, idx)                                                              \
  {                                                                                            \
    &pre##reduce_inner_##f, &pre##reduce_outer_##f, &pre##reduce_outer_sync_##f,               \
        &pre##reduce_outer_wide_##f, &pre##reduce_outer_wide_sync_##f, &pre##reduce_inner_##s, \
        size, idx                                                                              \
  }
/* [op][0: f32, 1: i32] of the kernels with prefix `pre` */
#define FAMILIES(pre)                                                     \
  {                                                                       \
    [CUBERT_REDUCE_SUM] = {FAM(pre, sum_f32, sum_f32, 4, false),          \
                           FAM(pre, sum_i32, sum_i32, 4, false)},         \
    [CUBERT_REDUCE_MAX] = {FAM(pre, max_f32, max_f32, 4, false),          \
                           FAM(pre, max_i32, max_i32, 4, false)},         \
    [CUBERT_REDUCE_MIN] = {FAM(pre, min_f32, min_f32, 4, false),          \
                           FAM(pre, min_i32, min_i32, 4, false)},         \
    [CUBERT_REDUCE_MEAN] = {FAM(pre, mean_f32, mean_f32, 4, false),       \
                            FAM(pre, mean_i32, mean_i64, 8, false)},      \
    [CUBERT_REDUCE_ARGMAX] = {FAM(pre, argmax_f32, argmax_f32, 4, true),  \
                              FAM(pre, argmax_i32, argmax_i32, 4, true)}, \
    [CUBERT_REDUCE_ARGMIN] = {FAM(pre, argmin_f32, argmin_f32, 4, true),  \
                              FAM(pre, argmin_i32, argmin_i32, 4, true)}, \
  }
static const family families[CUBERT_REDUCE_COUNT_][2] = FAMILIES(cubert_kernel_);

/* The same kernels built for AVX2+FMA and AVX-512 CPUs (CMakeLists.txt:
   cubert_add_kernel_cpu_variants), which the CPU server runs where the host has them
   (cubert_ops_cpu_pick): the SSE2 baseline's row sums of 8192² reached 59-60% of the triad on
   an AVX-512 Intel guest, where the column sums already ran at the triad's speed. */
#define RA_DECLARE(pre, f)                                                     \
  extern const cubert_kernel_def pre##reduce_inner_##f, pre##reduce_outer_##f, \
      pre##reduce_outer_sync_##f, pre##reduce_outer_wide_##f, pre##reduce_outer_wide_sync_##f
#define RA_DECLARE_ALL(pre)    \
  RA_DECLARE(pre, sum_f32);    \
  RA_DECLARE(pre, sum_i32);    \
  RA_DECLARE(pre, max_f32);    \
  RA_DECLARE(pre, max_i32);    \
  RA_DECLARE(pre, min_f32);    \
  RA_DECLARE(pre, min_i32);    \
  RA_DECLARE(pre, mean_f32);   \
  RA_DECLARE(pre, mean_i32);   \
  RA_DECLARE(pre, mean_i64);   \
  RA_DECLARE(pre, argmax_f32); \
  RA_DECLARE(pre, argmax_i32); \
  RA_DECLARE(pre, argmin_f32); \
  RA_DECLARE(pre, argmin_i32)
#ifdef CUBERT_KERNEL_VARIANT_x86v3
RA_DECLARE_ALL(cubert_kernel_x86v3_);
static const family families_x86v3[CUBERT_REDUCE_COUNT_][2] = FAMILIES(cubert_kernel_x86v3_);
#define RA_X86V3(op, d) (&families_x86v3[op][d])
#else
#define RA_X86V3(op, d) NULL
#endif
#ifdef CUBERT_KERNEL_VARIANT_x86v4
RA_DECLARE_ALL(cubert_kernel_x86v4_);
static const family families_x86v4[CUBERT_REDUCE_COUNT_][2] = FAMILIES(cubert_kernel_x86v4_);
#define RA_X86V4(op, d) (&families_x86v4[op][d])
#else
#define RA_X86V4(op, d) NULL
#endif

/* The family of `op` and dtype row `d` to launch on `client` (the widest CPU build the CPU
   server's host runs; the baseline elsewhere). */
static const family *family_for(cubert_client *client, cubert_reduce_op op, int d) {
  const family *base = &families[op][d], *v3 = RA_X86V3(op, d), *v4 = RA_X86V4(op, d);
  const cubert_kernel_def *k =
      cubert_ops_cpu_pick(client, base->inner, v3 ? v3->inner : NULL, v4 ? v4->inner : NULL);
  if (v4 && k == v4->inner) return v4;
  if (v3 && k == v3->inner) return v3;
  return base;
}

static const char *const op_names[CUBERT_REDUCE_COUNT_] = {"sum",  "max",    "min",
                                                           "mean", "argmax", "argmin"};

/* One reduction in kernel form: what the tuner's candidates receive. */
typedef struct reduce_problem {
  const family *fam;
  cubert_handle *in, *out;
  uint32_t kr; /* >= 1 (a single output is one kept axis of length 1) */
  uint64_t shape[KEPT_MAX], in_strides[KEPT_MAX], out_strides[KEPT_MAX];
  uint64_t R, sR, in_off, out_off, rows, divisor;
  bool inner_fav; /* the reduced axis moves fastest: reduce_inner's layout */
  uint32_t compute_units, max_units;
  cubert_tune_output result; /* out's region (CUBERT_AUTOTUNE_CHECKS) */
} reduce_problem;

static void put_info(uint64_t *info, const reduce_problem *p, uint64_t R, uint64_t sR,
                     uint64_t in_off, uint64_t out_off, uint64_t S, uint64_t chunk, uint64_t flags,
                     const uint64_t *in_strides) {
  info[0] = p->kr;
  info[1] = R;
  info[2] = sR;
  info[3] = in_off;
  info[4] = out_off;
  info[5] = S;
  info[6] = chunk;
  info[7] = flags;
  info[8] = p->divisor;
  info[9] = p->rows;
  for (uint32_t d = 0; d < p->kr; ++d) {
    info[10 + d] = p->shape[d];
    info[10 + p->kr + d] = in_strides[d];
    info[10 + 2 * p->kr + d] = p->out_strides[d];
  }
}

static cubert_status launch(cubert_client *client, const cubert_kernel_def *k, uint64_t cubes,
                            uint32_t units, cubert_handle *const bufs[5], const uint64_t *info,
                            uint32_t info_count) {
  if (cubes == 0) return NULL;
  if (cubes > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              OP ": kernel \"%s\" would need %llu cubes, more than 2^32-1", k->name,
                              (unsigned long long)cubes);
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
  cubert_handle *b[5] = {bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]};
  cubert_kernel_args args = {b, 5, info, info_count};
  return cubert_client_launch(client, k, sel.cube_count, cubert_cube_dim_new_3d(units, 1, 1),
                              &args);
}

/* One launch shape: the kernel form, `units` per cube, `chunk` elements of the axis per split
   (0: no split). */
typedef struct geometry {
  bool outer;
  uint32_t units;
  uint64_t chunk;
  bool sync; /* reduce_outer(_wide)_sync: a barrier per step (for OpenCL CPU devices) */
  /* outer: 1 reduce_outer_wide (8 outputs per unit), 2 the same with eight rows per step (flags
     bit 3); inner: 1 eight loads per unit and phase */
  uint8_t wide;
  /* reduce_outer (a unit per output, no barriers) on reduce_inner's layout, for short axes only
     (ROWWISE_MAX_R): an argmax over a classifier's ten classes reads ten elements per output,
     which one unit does in ten loads while a cube per output pays a tree and its barriers (61 x
     10 argmax on PoCL: 5 us against 135); on PoCL a kernel without barriers also compiles in a
     fraction of the time, which is what a cold first run pays. */
  bool rowwise;
} geometry;

/* The longest reduced axis a rowwise geometry takes (one unit walks it). */
#define ROWWISE_MAX_R 128

static cubert_status run(cubert_client *client, const reduce_problem *p, const geometry *g) {
  const family *f = p->fam;
  const bool outer = g->outer;
  const uint32_t units = g->units;
  uint64_t chunk = g->chunk;
  const cubert_kernel_def *outer_kernel =
      g->wide ? (g->sync ? f->wide_sync : f->wide) : (g->sync ? f->outer_sync : f->outer);
  const uint64_t span = g->wide ? 8 * (uint64_t)units : units;
  /* reduce_inner's flags bit 2: eight loads per unit and phase; reduce_outer_wide's bit 3: eight
     rows per step (kernels/reduce_axis.cube.c). */
  const uint64_t wide_loads = (g->wide && !outer ? 4 : 0) | (g->wide == 2 ? 8 : 0);
  uint64_t S = 1;
  if (chunk && p->R > chunk) S = p->R / chunk + (p->R % chunk != 0);
  if (S == 1) chunk = p->R;
  uint64_t info[CUBERT_KERNEL_REDUCE_AXIS_INFO(KEPT_MAX)];
  const uint32_t info_count = CUBERT_KERNEL_REDUCE_AXIS_INFO(p->kr);
  const uint64_t I = p->shape[p->kr - 1];
  const uint64_t cubes1 = outer ? (I / span + (I % span != 0)) * (p->rows / I) * S : p->rows * S;
  cubert_handle *dummy8 = NULL, *part = NULL, *part_idx = NULL;
  cubert_status st = NULL;
  if (S == 1) {
    /* Unused buffers: any handle of whole elements (in and out hold 4-byte ones). */
    if (f->part_size != 4) st = cubert_client_empty(client, 8, &dummy8);
    if (!st) {
      cubert_handle *bufs[5] = {p->in, p->in, dummy8 ? dummy8 : p->out, p->out, p->out};
      put_info(info, p, p->R, p->sR, p->in_off, p->out_off, 1, chunk, wide_loads, p->in_strides);
      st = launch(client, outer ? outer_kernel : f->inner, cubes1, units, bufs, info, info_count);
    }
    cubert_handle_release(dummy8);
    return st;
  }
  /* Pass 1: partials part[k * S + s]; pass 2: reduce_inner over those rows. */
  const uint64_t parts = p->rows * S;
  st = cubert_client_empty(client, parts * f->part_size, &part);
  if (!st) st = cubert_client_empty(client, f->has_idx ? parts * 4 : 4, &part_idx);
  if (!st) {
    cubert_handle *bufs[5] = {p->in, p->in, part, part_idx, p->out};
    put_info(info, p, p->R, p->sR, p->in_off, 0, S, chunk, 2 | wide_loads, p->in_strides);
    st = launch(client, outer ? outer_kernel : f->inner, cubes1, units, bufs, info, info_count);
  }
  if (!st) {
    uint64_t strides[KEPT_MAX], step = S;
    for (uint32_t d = p->kr; d-- > 0;) {
      strides[d] = step;
      step *= p->shape[d];
    }
    const uint32_t u2 = S >= 256 && p->max_units >= 256 ? 256 : S >= 64 ? 64 : 32;
    cubert_handle *bufs[5] = {part, part_idx, part, part_idx, p->out};
    put_info(info, p, S, 1, 0, p->out_off, 1, S, f->has_idx ? 1 : 0, strides);
    st = launch(client, f->second, p->rows, u2 <= p->max_units ? u2 : p->max_units, bufs, info,
                info_count);
  }
  cubert_handle_release(part);
  cubert_handle_release(part_idx);
  return st;
}

/* ---- the tunable set ----------------------------------------------------------------------- */

/* Inner without split, inner split in the (elements per cube x cube dim) shapes the full
   reduction used to be measured at (bench/tune.c), outer without and with split, outer with a
   barrier per step (OpenCL CPU devices), and the wide outer form (8 outputs per unit: one
   sequential stream per row on a CPU, more loads in flight on a GPU) with and without both;
   inner_x8: reduce_inner with eight loads per unit and phase (GPUs); more outer splits around
   outer_d256_c256, the H200's choice for 8192² column sums (at 78-81% of copy there). */
static const geometry geometries[] = {
    {false, 64, 0, false, false, false},       {false, 256, 0, false, false, false},
    {false, 256, 4096, false, false, false},   {false, 256, 16384, false, false, false},
    {false, 256, 65536, false, false, false},  {false, 16, 16384, false, false, false},
    {false, 16, 65536, false, false, false},   {false, 16, 262144, false, false, false},
    {false, 64, 65536, false, false, false},   {false, 64, 262144, false, false, false},
    {false, 64, 1048576, false, false, false}, {true, 64, 0, false, false, false},
    {true, 256, 0, false, false, false},       {true, 1024, 0, false, false, false},
    {true, 64, 1024, false, false, false},     {true, 256, 1024, false, false, false},
    {true, 256, 256, false, false, false},     {true, 64, 0, true, false, false},
    {true, 256, 0, true, false, false},        {true, 1024, 0, true, false, false},
    {true, 256, 1024, true, false, false},     {true, 128, 0, false, true, false},
    {true, 256, 0, false, true, false},        {true, 256, 0, true, true, false},
    {false, 64, 0, false, true, false},        {false, 256, 0, false, true, false},
    {false, 256, 65536, false, true, false},   {false, 64, 262144, false, true, false},
    {true, 256, 128, false, false, false},     {true, 128, 256, false, false, false},
    {true, 256, 512, false, false, false},     {true, 1024, 2048, false, true, false},
    {true, 1024, 1024, false, true, false},    {true, 512, 1024, false, true, false},
    {true, 1024, 1024, false, 2, false},       {true, 1024, 512, false, 2, false},
    {true, 1024, 2048, false, 2, false},       {true, 512, 1024, false, 2, false},
    {true, 64, 0, false, false, true},
};
#define GEOMETRY_COUNT (sizeof(geometries) / sizeof(geometries[0]))

static int geometry_valid(const reduce_problem *p, const geometry *g) {
  if (g->units > p->max_units) return 0;
  if (g->rowwise) return p->inner_fav && p->R <= ROWWISE_MAX_R;
  if (!g->outer && g->units > CUBERT_KERNEL_REDUCE_AXIS_MAX_UNITS) return 0;
  if (g->outer == p->inner_fav) return 0;
  const uint64_t spread = 2 * (uint64_t)(p->compute_units ? p->compute_units : 1);
  const uint64_t span = g->wide ? 8 * (uint64_t)g->units : g->units;
  /* Bounding the search (inner, no split): a cube whose quarter already covers the axis in one
     pass (units / 4 x the loads per unit >= R) only adds idle units and reduction steps, so it
     cannot beat the same geometry with a quarter of the units, which is measured instead. The
     spans are powers of two, so the rule gives one answer for every R of a key anchored at the
     balanced level (a pruned geometry stays correct wherever it runs). */
  if (!g->outer && g->chunk == 0 && g->units >= 256 && span / 4 >= p->R) return 0;
  if (g->chunk == 0) {
    /* One cube per output (block): enough of them, or an axis short enough for one cube. */
    const uint64_t cubes = g->outer ? p->rows / span + 1 : p->rows;
    return cubes >= spread || p->R <= (g->outer ? 4096 : 65536);
  }
  /* A split only where it splits, and only for few outputs. */
  const uint64_t cubes = g->outer ? p->rows / span + 1 : p->rows;
  return p->R > 2 * g->chunk && cubes < 4 * spread;
}

#define CANDIDATE(i)                                                                             \
  static cubert_status launch_##i(cubert_client *client, const void *args) {                     \
    return run(client, args, &geometries[i]);                                                    \
  }                                                                                              \
  static int valid_##i(const cubert_client *client, const cubert_tune_key *key, const void *a) { \
    (void)client, (void)key;                                                                     \
    return geometry_valid(a, &geometries[i]);                                                    \
  }
CANDIDATE(0)
CANDIDATE(1)
CANDIDATE(2)
CANDIDATE(3)
CANDIDATE(4)
CANDIDATE(5)
CANDIDATE(6)
CANDIDATE(7)
CANDIDATE(8)
CANDIDATE(9)
CANDIDATE(10)
CANDIDATE(11)
CANDIDATE(12)
CANDIDATE(13)
CANDIDATE(14)
CANDIDATE(15)
CANDIDATE(16)
CANDIDATE(17)
CANDIDATE(18)
CANDIDATE(19)
CANDIDATE(20)
CANDIDATE(21)
CANDIDATE(22)
CANDIDATE(23)
CANDIDATE(24)
CANDIDATE(25)
CANDIDATE(26)
CANDIDATE(27)
CANDIDATE(28)
CANDIDATE(29)
CANDIDATE(30)
CANDIDATE(31)
CANDIDATE(32)
CANDIDATE(33)
CANDIDATE(34)
CANDIDATE(35)
CANDIDATE(36)
CANDIDATE(37)
CANDIDATE(38)

/* Group 0 (CUBERT_AUTOTUNE=minimal): one per family. */
static const cubert_tune_candidate candidates[] = {
    {"inner_d64", launch_0, valid_0, 0},
    {"inner_d256", launch_1, valid_1, 1},
    {"inner_d256_e4096", launch_2, valid_2, 0},
    {"inner_d256_e16384", launch_3, valid_3, 1},
    {"inner_d256_e65536", launch_4, valid_4, 1},
    {"inner_d16_e16384", launch_5, valid_5, 1},
    {"inner_d16_e65536", launch_6, valid_6, 0},
    {"inner_d16_e262144", launch_7, valid_7, 1},
    {"inner_d64_e65536", launch_8, valid_8, 1},
    {"inner_d64_e262144", launch_9, valid_9, 0},
    {"inner_d64_e1048576", launch_10, valid_10, 1},
    {"outer_d64", launch_11, valid_11, 1},
    {"outer_d256", launch_12, valid_12, 0},
    {"outer_d1024", launch_13, valid_13, 1},
    {"outer_d64_c1024", launch_14, valid_14, 1},
    {"outer_d256_c1024", launch_15, valid_15, 0},
    {"outer_d256_c256", launch_16, valid_16, 1},
    {"outer_sync_d64", launch_17, valid_17, 1},
    {"outer_sync_d256", launch_18, valid_18, 0},
    {"outer_sync_d1024", launch_19, valid_19, 1},
    {"outer_sync_d256_c1024", launch_20, valid_20, 1},
    {"outer_wide_d128", launch_21, valid_21, 0},
    {"outer_wide_d256", launch_22, valid_22, 1},
    {"outer_wide_sync_d256", launch_23, valid_23, 1},
    {"inner_x8_d64", launch_24, valid_24, 1},
    {"inner_x8_d256", launch_25, valid_25, 1},
    {"inner_x8_d256_e65536", launch_26, valid_26, 1},
    {"inner_x8_d64_e262144", launch_27, valid_27, 1},
    {"outer_d256_c128", launch_28, valid_28, 0},
    {"outer_d128_c256", launch_29, valid_29, 0},
    {"outer_d256_c512", launch_30, valid_30, 0},
    {"outer_wide_d1024_c2048", launch_31, valid_31, 1},
    {"outer_wide_d1024_c1024", launch_32, valid_32, 0},
    {"outer_wide_d512_c1024", launch_33, valid_33, 0},
    {"outer_rows8_d1024_c1024", launch_34, valid_34, 1},
    {"outer_rows8_d1024_c512", launch_35, valid_35, 1},
    {"outer_rows8_d1024_c2048", launch_36, valid_36, 1},
    {"outer_rows8_d512_c1024", launch_37, valid_37, 1},
    {"rowwise_d64", launch_38, valid_38, 0},
};
_Static_assert(sizeof(candidates) / sizeof(candidates[0]) == GEOMETRY_COUNT, "one per geometry");
/* source_checksum: bump when the kernels change in ways that move the winner (1: rows8, 2:
   rowwise). */
static int reduce_output(const void *args, cubert_tune_output *out) {
  *out = ((const reduce_problem *)args)->result;
  return 1;
}

static const cubert_tune_set reduce_set = {"ops.reduce_axis", candidates, GEOMETRY_COUNT, 2,
                                           reduce_output};

const cubert_tune_set *cubert_ops_reduce_tune_set(void) {
  return &reduce_set;
}

static _Thread_local int forced = -1;

void cubert_ops_reduce_force_candidate(int index) {
  forced = index;
}

/* ---- checks and the entry point -------------------------------------------------------- */

static cubert_status check_out_shape(const cubert_tensor *in, uint32_t axis, int keep_dim,
                                     const cubert_tensor *out) {
  uint64_t want[CUBERT_MAX_RANK];
  uint32_t rank = 0;
  for (uint32_t d = 0; d < in->rank; ++d) {
    const bool reduced = axis == CUBERT_AXIS_ALL || d == axis;
    if (!reduced)
      want[rank++] = in->shape[d];
    else if (keep_dim)
      want[rank++] = 1;
  }
  char what[64];
  if (axis == CUBERT_AXIS_ALL)
    snprintf(what, sizeof what, "reducing every axis with keep_dim %d", keep_dim ? 1 : 0);
  else
    snprintf(what, sizeof what, "reducing axis %u with keep_dim %d", axis, keep_dim ? 1 : 0);
  if (out->rank != rank)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP ": out.rank is %u but %s of in (rank %u) gives rank %u", out->rank,
                              what, in->rank, rank);
  for (uint32_t d = 0; d < rank; ++d)
    if (out->shape[d] != want[d])
      return cubert_status_make(
          CUBERT_CODE_INVALID_ARGUMENT, OP ": out.shape[%u] is %llu but %s of in gives %llu", d,
          (unsigned long long)out->shape[d], what, (unsigned long long)want[d]);
  return NULL;
}

/* Gathers a view into a new contiguous row-major handle (cubert_op_copy: the copy kernels
   with their tuned cube dim, or the tiled transpose). */
static cubert_status gather(cubert_client *client, const cubert_tensor *in, uint64_t elems,
                            cubert_handle **out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_empty(client, elems * in->elem_size, out));
  cubert_tensor dense = *in;
  dense.handle = *out;
  dense.offset = 0;
  uint64_t stride = 1;
  for (uint32_t d = in->rank; d-- > 0;) {
    dense.strides[d] = stride;
    stride *= in->shape[d];
  }
  cubert_status st = cubert_op_copy(client, in, &dense);
  if (st) {
    cubert_handle_release(*out);
    *out = NULL;
  }
  return st;
}

/* The operands of cubert_op_reduce, checked, with their extents: op, in's dtype, out's dtype
   (i32 indices for argmax/argmin, f32 for mean, else in's), the axis and out's shape. */
static cubert_status check_operands(cubert_reduce_op op, const cubert_tensor *in, uint32_t axis,
                                    int keep_dim, const cubert_tensor *out,
                                    cubert_ops_extent *in_ext, cubert_ops_extent *out_ext) {
  if ((unsigned)op >= CUBERT_REDUCE_COUNT_)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP ": op is %d, not a cubert_reduce_op (0..%d)", (int)op,
                              (int)CUBERT_REDUCE_COUNT_ - 1);
  const uint32_t ints =
      CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_F32) | CUBERT_OPS_DTYPE_BIT(CUBERT_DTYPE_I32);
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(OP, "in", in, ints, false, in_ext));
  const bool arg = op == CUBERT_REDUCE_ARGMAX || op == CUBERT_REDUCE_ARGMIN;
  const cubert_dtype want = arg                        ? CUBERT_DTYPE_I32
                            : op == CUBERT_REDUCE_MEAN ? CUBERT_DTYPE_F32
                                                       : in->dtype;
  CUBERT_RETURN_IF_ERROR(
      cubert_ops_check_tensor(OP, "out", out, CUBERT_OPS_DTYPE_BIT(want), true, out_ext));
  if (axis != CUBERT_AXIS_ALL && axis >= in->rank)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP
                              ": axis is %u but in has rank %u (axes 0..%d, or "
                              "CUBERT_AXIS_ALL)",
                              axis, in->rank, (int)in->rank - 1);
  return check_out_shape(in, axis, keep_dim, out);
}

/* The reduced length R against the op: only sum and mean take an empty axis, and argmax/argmin
   index at most 2^31-1 elements. INVALID_ARGUMENT. */
static cubert_status check_length(cubert_reduce_op op, uint32_t axis, uint64_t R) {
  const char *name = op_names[op];
  char over[64];
  if (axis == CUBERT_AXIS_ALL)
    snprintf(over, sizeof over, "all of in (axis CUBERT_AXIS_ALL)");
  else
    snprintf(over, sizeof over, "axis %u of in (in.shape[%u])", axis, axis);
  if (R == 0 && op != CUBERT_REDUCE_SUM && op != CUBERT_REDUCE_MEAN)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP
                              ": %s over %s, 0 elements long, has no value (it needs at least "
                              "1; only sum and mean take an empty axis)",
                              name, over);
  if ((op == CUBERT_REDUCE_ARGMAX || op == CUBERT_REDUCE_ARGMIN) && R > INT32_MAX)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP
                              ": %s over %s, %llu elements long: its indices are i32, at most "
                              "2^31-1 elements",
                              name, over, (unsigned long long)R);
  return NULL;
}

/* Reducing every axis: in as one strided axis of p->R elements (p->sR), or, when its axes do not
   merge into one, a contiguous copy (*out_gathered, which the caller releases). */
static cubert_status flatten_all(cubert_client *client, const cubert_tensor *in, reduce_problem *p,
                                 cubert_handle **out_gathered) {
  uint32_t rank = in->rank;
  uint64_t shape[CUBERT_MAX_RANK], s1[1][CUBERT_MAX_RANK];
  for (uint32_t d = 0; d < CUBERT_MAX_RANK; ++d) {
    shape[d] = d < rank ? in->shape[d] : 1;
    s1[0][d] = d < rank ? in->strides[d] : 0;
  }
  if (p->R > 0) cubert_strided_collapse_axes(&rank, shape, s1, 1);
  if (p->R == 0 || rank == 0) {
    p->sR = 1;
  } else if (rank == 1) {
    p->sR = s1[0][0];
  } else {
    CUBERT_RETURN_IF_ERROR(gather(client, in, p->R, out_gathered));
    p->in = *out_gathered;
    p->in_off = 0;
    p->sR = 1;
  }
  return NULL;
}

/* Reducing one axis: the reduced axis's stride into *out_sR, and the kept axes (their shape and
   the strides of in and out) into shape/strides[0..1], *out_kr of them: ordered by input stride,
   largest first (a stable insertion sort), so the fastest one is last (the unit axis of
   reduce_outer), then merged where contiguous in both. */
static void kept_axes(const cubert_tensor *in, uint32_t axis, int keep_dim,
                      const cubert_tensor *out, uint64_t *shape,
                      uint64_t (*strides)[CUBERT_MAX_RANK], uint32_t *out_kr, uint64_t *out_sR) {
  uint32_t kr = 0, od = 0;
  *out_sR = in->strides[axis];
  for (uint32_t d = 0; d < in->rank; ++d) {
    if (d == axis) {
      od += keep_dim ? 1 : 0;
      continue;
    }
    shape[kr] = in->shape[d];
    strides[0][kr] = in->strides[d];
    strides[1][kr] = out->strides[od++];
    ++kr;
  }
  for (uint32_t i = 1; i < kr; ++i)
    for (uint32_t j = i; j > 0 && strides[0][j - 1] < strides[0][j]; --j) {
      uint64_t t = shape[j];
      shape[j] = shape[j - 1];
      shape[j - 1] = t;
      for (int k = 0; k < 2; ++k) {
        t = strides[k][j];
        strides[k][j] = strides[k][j - 1];
        strides[k][j - 1] = t;
      }
    }
  for (uint32_t d = kr; d < CUBERT_MAX_RANK; ++d) {
    shape[d] = 1;
    strides[0][d] = strides[1][d] = 0;
  }
  cubert_strided_collapse_axes(&kr, shape, strides, 2);
  *out_kr = kr;
}

/* The kept axes into `p` (none: one axis of length 1, a single output), its row count and
   whether the reduced axis moves fastest. */
static void problem_set_axes(reduce_problem *p, const uint64_t *shape,
                             uint64_t (*strides)[CUBERT_MAX_RANK], uint32_t kr) {
  p->kr = kr ? kr : 1;
  p->rows = 1;
  for (uint32_t d = 0; d < p->kr; ++d) {
    p->shape[d] = kr ? shape[d] : 1;
    p->in_strides[d] = kr ? strides[0][d] : 0;
    p->out_strides[d] = kr ? strides[1][d] : 0;
    p->rows *= p->shape[d];
  }
  const uint64_t sI = p->in_strides[p->kr - 1];
  p->inner_fav = p->shape[p->kr - 1] == 1 || p->R <= 1 || p->sR <= sI;
}

/* Launches the reduction: the forced candidate (cubert_ops_reduce_force_candidate) or the tuned
   one, keyed by op, dtype, layout class and the anchored rows, length and fastest kept axis. */
static cubert_status launch_tuned(cubert_client *client, cubert_reduce_op op, cubert_dtype dtype,
                                  const reduce_problem *p, bool in_read_only) {
  const uint64_t sI = p->in_strides[p->kr - 1];
  cubert_tune_key key = {0};
  cubert_status st =
      cubert_tune_key_add(&key, (uint64_t)op | (uint64_t)dtype << 4 | (uint64_t)p->inner_fav << 8 |
                                    (uint64_t)(p->sR == 1) << 9 | (uint64_t)(sI == 1) << 10 |
                                    (uint64_t)(p->rows == 1) << 11);
  if (!st) st = cubert_tune_key_add_anchored(&key, p->rows);
  if (!st) st = cubert_tune_key_add_anchored(&key, p->R);
  if (!st) st = cubert_tune_key_add_anchored(&key, p->shape[p->kr - 1]);
  if (st) return st;
  if (forced >= 0) return cubert_ops_run_forced(client, &reduce_set, &key, p, forced, OP);
  /* The candidates only read `in`: unless it shares its allocation with out, tuning needs no
     scratch copy of it (tune/scratch.h). */
  const cubert_tune_call call = {.known_good = cubert_ops_known_good,
                                 .read_only = &p->in,
                                 .read_only_count = in_read_only,
                                 .args_bytes = sizeof(*p)};
  return cubert_tune_execute_call(client, &reduce_set, &key, p, &call);
}

cubert_status(cubert_op_reduce)(cubert_client *client, cubert_reduce_op op, const cubert_tensor *in,
                                uint32_t axis, int keep_dim, const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, OP));
  cubert_ops_extent in_ext, out_ext;
  CUBERT_RETURN_IF_ERROR(check_operands(op, in, axis, keep_dim, out, &in_ext, &out_ext));
  const cubert_device_properties *props = cubert_client_properties(client);
  if (!props) return cubert_status_make(CUBERT_CODE_NOT_FOUND, OP ": the client is released");
  if (out_ext.elems == 0) return NULL; /* nothing to write */
  const uint64_t R = axis == CUBERT_AXIS_ALL ? in_ext.elems : in->shape[axis];
  CUBERT_RETURN_IF_ERROR(check_length(op, axis, R));

  reduce_problem p;
  memset(&p, 0, sizeof p);
  p.fam = family_for(client, op, in->dtype == CUBERT_DTYPE_I32);
  p.in = in->handle;
  p.out = out->handle;
  p.in_off = in->offset;
  p.out_off = out->offset;
  p.result = cubert_ops_tune_output(out, out->handle, 1e-3, 1e-9);
  p.compute_units = props->hardware.num_compute_units;
  p.max_units = props->hardware.max_units_per_cube < props->hardware.max_cube_dim[0]
                    ? props->hardware.max_units_per_cube
                    : props->hardware.max_cube_dim[0];
  p.R = R;
  p.divisor = R;

  uint64_t shape[CUBERT_MAX_RANK], strides[2][CUBERT_MAX_RANK];
  uint32_t kr = 0;
  cubert_handle *gathered = NULL;
  if (axis == CUBERT_AXIS_ALL)
    CUBERT_RETURN_IF_ERROR(flatten_all(client, in, &p, &gathered));
  else
    kept_axes(in, axis, keep_dim, out, shape, strides, &kr, &p.sR);
  problem_set_axes(&p, shape, strides, kr);
  cubert_status st =
      launch_tuned(client, op, in->dtype, &p, gathered || in_ext.memory != out_ext.memory);
  cubert_handle_release(gathered);
  return st;
}

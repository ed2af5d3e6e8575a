/* cubert_op_softmax: softmax along the last axis (cubert/ops.h), one cube per row
   (kernels/softmax_body.h), for any strides: the rows' coordinates are the other axes, merged
   where contiguous in both in and out (cubert_strided_collapse_axes). The cube dim is measured
   per device by autotune, keyed by dtype, layout class and the anchored row length and count.
   F64 runs softmax_f64, a kernel file of its own built only on fp64 devices (CUBE_NEEDS_FP64). */
#include "ops/softmax.h"

#include <stdbool.h>
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

/* The f32 kernel's AVX2 and AVX-512 builds (CMakeLists.txt: cubert_add_kernel_cpu_variants): the
   CPU server's softmax is bound by exp, which the wider builds evaluate 2-4x as many at once. */
#ifdef CUBERT_KERNEL_VARIANT_x86v3
extern const cubert_kernel_def cubert_kernel_x86v3_softmax_f32,
    cubert_kernel_x86v3_softmax_online_f32, cubert_kernel_x86v3_softmax_rows_f32,
    cubert_kernel_x86v3_softmax_units_f32;
#define SM_X86V3(name) (&cubert_kernel_x86v3_##name)
#else
#define SM_X86V3(name) NULL
#endif
#ifdef CUBERT_KERNEL_VARIANT_x86v4
extern const cubert_kernel_def cubert_kernel_x86v4_softmax_f32,
    cubert_kernel_x86v4_softmax_online_f32, cubert_kernel_x86v4_softmax_rows_f32,
    cubert_kernel_x86v4_softmax_units_f32;
#define SM_X86V4(name) (&cubert_kernel_x86v4_##name)
#else
#define SM_X86V4(name) NULL
#endif

#define OP "softmax"

typedef struct softmax_problem {
  /* [0] three passes over the row, [1] two (the running maximum and sum), [2] three passes over
     several rows per cube, pipelined (f32 only), [3] one unit per row (softmax_body.h). */
  const cubert_kernel_def *kernel[4];
  cubert_handle *in, *out;
  uint64_t info[CUBERT_KERNEL_SOFTMAX_INFO(CUBERT_MAX_RANK - 1)];
  uint32_t info_count, max_units;
  uint64_t rows;
  cubert_tune_output result; /* out's region (CUBERT_AUTOTUNE_CHECKS) */
} softmax_problem;

/* Launches kernel[form] with `units` per cube and `per` rows per cube (1 but for form 2; form
   3 takes one row per unit, so `units` rows per cube). */
static cubert_status run(cubert_client *client, const softmax_problem *p, uint32_t units, int form,
                         uint64_t per) {
  if (form == 3) per = units;
  const uint64_t cubes = p->rows / per + (p->rows % per != 0);
  if (cubes > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              OP ": %llu rows need %llu cubes, more than 2^32-1",
                              (unsigned long long)p->rows, (unsigned long long)cubes);
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
  cubert_handle *bufs[2] = {p->in, p->out};
  cubert_kernel_args args = {bufs, 2, p->info, p->info_count};
  return cubert_client_launch(client, p->kernel[form], sel.cube_count,
                              cubert_cube_dim_new_3d(units, 1, 1), &args);
}

static const uint32_t unit_choices[] = {32, 64, 128, 256};

/* A cube of `units` for one row, where the device allows it. Bounding the search: when half as
   many units already give every element of the row a unit of its own (units / 2 >= C), the
   larger cube only adds idle units and a step to the reduction tree, so it cannot beat the
   smaller one and is not measured (on PoCL each candidate costs a kernel compile, ~0.5 s).
   Units are powers of two, so the rule gives one answer for every C of a key anchored at the
   balanced level (a pruned candidate stays correct wherever it runs; it only is not measured). */
static int row_units_fit(const softmax_problem *p, uint32_t units) {
  const uint64_t C = p->info[1];
  return units <= p->max_units && (units == unit_choices[0] || units / 2 < C);
}

/* Candidate i: unit_choices[i % 4] units per cube, the two-pass kernel when i >= 4. */
#define CANDIDATE(i)                                                                             \
  static cubert_status launch_##i(cubert_client *client, const void *args) {                     \
    return run(client, args, unit_choices[(i) % 4], (i) / 4, 1);                                 \
  }                                                                                              \
  static int valid_##i(const cubert_client *client, const cubert_tune_key *key, const void *a) { \
    (void)client, (void)key;                                                                     \
    return row_units_fit(a, unit_choices[(i) % 4]);                                              \
  }
CANDIDATE(0)
CANDIDATE(1)
CANDIDATE(2)
CANDIDATE(3)
CANDIDATE(4)
CANDIDATE(5)
CANDIDATE(6)
CANDIDATE(7)

/* Candidate i >= 8: the pipelined kernel (f32), `units` per cube and `per` rows per cube. */
#define ROWS_CANDIDATE(i, units, per)                                                            \
  static cubert_status launch_##i(cubert_client *client, const void *args) {                     \
    return run(client, args, units, 2, per);                                                     \
  }                                                                                              \
  static int valid_##i(const cubert_client *client, const cubert_tune_key *key, const void *a) { \
    (void)client, (void)key;                                                                     \
    const softmax_problem *p = a;                                                                \
    return p->kernel[2] && (units) <= p->max_units;                                              \
  }
ROWS_CANDIDATE(8, 128, 16)
ROWS_CANDIDATE(9, 128, 32)
ROWS_CANDIDATE(10, 256, 32)

/* The longest row the units form takes: one unit reads it three times, and a longer row is
   faster shared among the units of a cube (bounding the search: the units form is not
   measured beyond it; forced, it is refused). */
#define UNITS_MAX_C 128

/* Candidate i >= 11: one unit per row, `units` rows per cube, for rows of up to UNITS_MAX_C. */
#define UNITS_CANDIDATE(i, units)                                                                \
  static cubert_status launch_##i(cubert_client *client, const void *args) {                     \
    return run(client, args, units, 3, 1);                                                       \
  }                                                                                              \
  static int valid_##i(const cubert_client *client, const cubert_tune_key *key, const void *a) { \
    (void)client, (void)key;                                                                     \
    const softmax_problem *p = a;                                                                \
    return p->info[1] <= UNITS_MAX_C && (units) <= p->max_units;                                 \
  }
UNITS_CANDIDATE(11, 64)

#define CANDIDATE_COUNT 12
static const cubert_tune_candidate candidates[CANDIDATE_COUNT] = {
    {"d32", launch_0, valid_0, 1},
    {"d64", launch_1, valid_1, 0},
    {"d128", launch_2, valid_2, 1},
    {"d256", launch_3, valid_3, 0},
    {"online_d32", launch_4, valid_4, 1},
    {"online_d64", launch_5, valid_5, 0},
    {"online_d128", launch_6, valid_6, 1},
    {"online_d256", launch_7, valid_7, 0},
    {"rows_d128_r16", launch_8, valid_8, 1},
    {"rows_d128_r32", launch_9, valid_9, 1},
    {"rows_d256_r32", launch_10, valid_10, 1},
    {"units_d64", launch_11, valid_11, 0},
};
/* source_checksum: bump when the kernels change in ways that move the winner (1: the rows form,
   2: the units form). */
/* The result the candidates wrote: out's region (read from its scratch copy while tuning). */
static int softmax_output(const void *args, cubert_tune_output *out) {
  *out = ((const softmax_problem *)args)->result;
  return out->handle != NULL;
}

static const cubert_tune_set softmax_set = {"ops.softmax", candidates, CANDIDATE_COUNT, 2,
                                            softmax_output};

const cubert_tune_set *cubert_ops_softmax_tune_set(void) {
  return &softmax_set;
}

static _Thread_local int forced = -1;

void cubert_ops_softmax_force_candidate(int index) {
  forced = index;
}

/* The operands of cubert_op_softmax, checked, with their extents and their memory relation
   (cubert_ops_memory_relation: 1 in place, 2 a partial overlap, refused). */
static cubert_status check_operands(cubert_client *client, const cubert_tensor *in,
                                    const cubert_tensor *out, cubert_ops_extent *in_ext,
                                    cubert_ops_extent *out_ext, int *out_relation) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(OP, "in", in, CUBERT_OPS_FLOATS, false, in_ext));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(OP, "out", out, CUBERT_OPS_FLOATS, true, out_ext));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(OP, "in", in, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_shape(OP, "in", in, "out", out));
  if (in->rank == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              OP ": in has rank 0; softmax runs along the last axis (rank 1..%d)",
                              CUBERT_MAX_RANK);
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_device_dtype(client, OP, "in", in->dtype));
  /* In place by memory, not by handle: two handles (views) may reach the same bytes. */
  *out_relation = cubert_ops_memory_relation(in, in_ext, out, out_ext);
  if (*out_relation == 2)
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT,
        OP
        ": out (bytes %llu..%llu of its allocation) overlaps in (bytes "
        "%llu..%llu of the same allocation); in place needs the very same view (the "
        "same first byte, shape and strides)",
        (unsigned long long)out_ext->first_byte, (unsigned long long)out_ext->end_byte,
        (unsigned long long)in_ext->first_byte, (unsigned long long)in_ext->end_byte);
  return NULL;
}

/* The kernels, unit limit, row count and info words of a softmax of `elems` elements. */
static void problem_fill(cubert_client *client, const cubert_device_properties *props,
                         const cubert_tensor *in, const cubert_tensor *out, uint64_t elems,
                         softmax_problem *p) {
  memset(p, 0, sizeof *p);
  if (in->dtype == CUBERT_DTYPE_F64) {
    p->kernel[0] = &cubert_kernel_softmax_f64;
    p->kernel[1] = &cubert_kernel_softmax_online_f64;
    p->kernel[3] = &cubert_kernel_softmax_units_f64;
  } else {
    p->kernel[0] = cubert_ops_cpu_pick(client, &cubert_kernel_softmax_f32, SM_X86V3(softmax_f32),
                                       SM_X86V4(softmax_f32));
    p->kernel[1] = cubert_ops_cpu_pick(client, &cubert_kernel_softmax_online_f32,
                                       SM_X86V3(softmax_online_f32), SM_X86V4(softmax_online_f32));
    p->kernel[2] = cubert_ops_cpu_pick(client, &cubert_kernel_softmax_rows_f32,
                                       SM_X86V3(softmax_rows_f32), SM_X86V4(softmax_rows_f32));
    p->kernel[3] = cubert_ops_cpu_pick(client, &cubert_kernel_softmax_units_f32,
                                       SM_X86V3(softmax_units_f32), SM_X86V4(softmax_units_f32));
  }
  p->in = in->handle;
  p->out = out->handle;
  p->max_units = props->hardware.max_units_per_cube < props->hardware.max_cube_dim[0]
                     ? props->hardware.max_units_per_cube
                     : props->hardware.max_cube_dim[0];
  if (p->max_units > CUBERT_KERNEL_SOFTMAX_MAX_UNITS)
    p->max_units = CUBERT_KERNEL_SOFTMAX_MAX_UNITS;
  const uint32_t last = in->rank - 1;
  uint32_t kr = last;
  uint64_t shape[CUBERT_MAX_RANK], strides[2][CUBERT_MAX_RANK];
  for (uint32_t d = 0; d < CUBERT_MAX_RANK; ++d) {
    shape[d] = d < last ? in->shape[d] : 1;
    strides[0][d] = d < last ? in->strides[d] : 0;
    strides[1][d] = d < last ? out->strides[d] : 0;
  }
  cubert_strided_collapse_axes(&kr, shape, strides, 2);
  const uint64_t C = in->shape[last];
  p->rows = elems / C;
  p->info[0] = kr;
  p->info[1] = C;
  p->info[2] = in->strides[last];
  p->info[3] = out->strides[last];
  p->info[4] = in->offset;
  p->info[5] = out->offset;
  p->info[6] = p->rows;
  for (uint32_t d = 0; d < kr; ++d) {
    p->info[7 + d] = shape[d];
    p->info[7 + kr + d] = strides[0][d];
    p->info[7 + 2 * kr + d] = strides[1][d];
  }
  p->info_count = CUBERT_KERNEL_SOFTMAX_INFO(kr);
}

cubert_status(cubert_op_softmax)(cubert_client *client, const cubert_tensor *in,
                                 const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, OP));
  cubert_ops_extent in_ext, out_ext;
  int relation = 0;
  CUBERT_RETURN_IF_ERROR(check_operands(client, in, out, &in_ext, &out_ext, &relation));
  const cubert_device_properties *props = cubert_client_properties(client);
  if (!props) return cubert_status_make(CUBERT_CODE_NOT_FOUND, OP ": the client is released");
  if (in_ext.elems == 0) return NULL;

  softmax_problem p;
  problem_fill(client, props, in, out, in_ext.elems, &p);
  const uint32_t last = in->rank - 1;
  cubert_tune_key key = {0};
  cubert_status st =
      cubert_tune_key_add(&key, (uint64_t)in->dtype | (uint64_t)(in->strides[last] == 1) << 8 |
                                    (uint64_t)(out->strides[last] == 1) << 9);
  if (!st) st = cubert_tune_key_add_anchored(&key, in->shape[last]);
  if (!st) st = cubert_tune_key_add_anchored(&key, p.rows);
  if (!st && forced >= 0) return cubert_ops_run_forced(client, &softmax_set, &key, &p, forced, OP);
  p.result = cubert_ops_tune_output(out, out->handle, 1e-5, 1e-12);
  /* Tuning runs the candidates on scratch copies of what they may write (tune/scratch.h): in
     place (out == in), on a copy of x, so the caller's buffer gets softmax(x) once, from the
     winner's launch. `in` is declared read-only only when out lies in another allocation. */
  const cubert_tune_call call = {.known_good = cubert_ops_known_good,
                                 .read_only = &p.in,
                                 .read_only_count = in_ext.memory != out_ext.memory,
                                 .args_bytes = sizeof(p)};
  if (!st) st = cubert_tune_execute_call(client, &softmax_set, &key, &p, &call);
  return st;
}

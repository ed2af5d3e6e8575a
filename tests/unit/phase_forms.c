/* The two CPU forms of every CUBE_KERNEL give the same bits (issue 37, deliverable 3).

   Each kernel file with a CUBE_KERNEL is built twice into this program (tests/CMakeLists.txt,
   cubert_add_kernel_forms): as cubert_add_kernels builds it by default, where the build's
   transform phases the CUBE_KERNELs (CUBERT_KERNEL_PHASES), and with FIBERS, its definitions
   prefixed fib_ (the fiber form: one fiber per unit, switched at each barrier). Every kernel of
   the table below runs in both forms on the CPU server, on pseudo-random cube dims (1-D and 3-D,
   powers of two or not, where the kernel allows) and cube counts, from the same pseudo-random
   buffer contents, and every buffer must come back byte for byte the same: a unit runs the same
   operations in the same order in both forms, so even float sums agree to the bit. A launch the
   server refuses must be refused by both forms with the same code.

   The table holds every CUBE_KERNEL of the repository, or names it among the excluded ones with
   the reason (the sanitizer's planted bugs, whose results are undefined). The CTest
   phase_forms_table (tests/phase_forms_table.sh) fails when a CUBE_KERNEL found in the sources
   is in neither list: a new kernel needs its entry here.

   CUBERT_PHASE_FORMS_SEED=<n> replays other geometries and inputs (default 37); a failure names
   the kernel, the geometry and the seed. Before the transform lands both copies are the fiber
   form, and the test checks only that the table runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/cubert.h"

#define MAX_BUFFERS 4
#define TRIALS 5

/* Sizes of a buffer in elements: per_unit * (all units) + per_cube * (cubes) + extra. */
typedef struct size_rule {
  uint64_t per_unit, per_cube, extra;
} size_rule;

/* One launch's shape. */
typedef struct geometry {
  cubert_cube_dim dim;
  cubert_cube_count count;
  uint64_t units; /* in all the cubes */
  uint64_t elems[MAX_BUFFERS];
  uint64_t info[4];
  uint32_t info_count;
  uint64_t dynamic_bytes; /* of the kernel's dynamic shared array, per cube */
} geometry;

typedef struct rng {
  uint64_t s;
} rng;

/* xorshift64*: the same sequence on every machine. */
static uint64_t next(rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}

/* Uniform in [lo, hi]. */
static uint32_t pick(rng *r, uint32_t lo, uint32_t hi) {
  return lo + (uint32_t)(next(r) % ((uint64_t)hi - lo + 1));
}

enum {
  ONE_D = 1,     /* 1-D cubes only (the kernel reads UNIT_POS_X) */
  ONE_CUBE = 2,  /* one cube (the result records the order of the cubes) */
  REFUSED = 4,   /* every launch is refused (more shared memory than any device has) */
  MIN_UNITS4 = 8 /* at least 4 units per cube */
};

typedef struct form_case {
  const char *name; /* the CUBE_KERNEL as written in its source */
  const cubert_kernel_def *natural, *fibers;
  uint32_t max_units;    /* random dims up to this many units per cube; 0: `fixed` */
  cubert_cube_dim fixed; /* the one dim the kernel takes */
  uint32_t flags;
  size_rule sizes[MAX_BUFFERS];
  uint64_t info0; /* info word 0 when `custom` is NULL (none when 0) */
  /* Sets the count, the sizes and the info words for g->dim (NULL: sizes from `sizes`). */
  void (*custom)(rng *r, geometry *g);
  uint32_t dynamic_per_unit; /* bytes of the dynamic shared array per unit of a cube */
} form_case;

#define FORMS(k) #k, &k, &fib_##k
#define DECLARE_FORMS(k) extern const cubert_kernel_def k, fib_##k;

/* The CUBE_KERNELs, file by file: examples/; tests/kernels/; tests/compile_rules/clean.cube.c;
   tests/sanitizer/bugs.cube.c (the correct ones); bench/natural_kernels.cube.c;
   tests/phase/rules.cube.c (those that write what they read); tests/sanitizer/cubes.cube.c;
   tests/kernels/lang_features.cube.c; tests/kernels/rodinia.cube.c. */
/* clang-format off */
#define KERNELS(X)                                                                                \
  X(sgemm_tiled_fibers) X(softmax_rows_fibers)                                                    \
  X(positions_fiber) X(shared_histogram) X(cube_sum_fiber) X(skips_barrier)                       \
  X(different_barriers) X(order_ticket_fiber) X(order_sum_fiber) X(helpers_fiber_f32)             \
  X(helpers_fiber_i32) X(helpers_fiber_u32) X(shared_atomics_fiber) X(macro_args_fiber)           \
  X(shared_over_a_failing_build) X(too_much_shared_memory)                                        \
  X(clean_cube) X(clean_no_shared)                                                                \
  X(ww_fiber_ok) X(rw_fiber_ok) X(atomic_fiber_ok) X(oob_fiber_ok) X(uninit_fiber_ok)             \
  X(return_fiber_ok) X(ww_buffer_fiber_ok) X(rw_buffer_fiber_ok) X(atomic_buffer_fiber_ok)        \
  X(wild_fiber) X(read_in_fiber) X(found_flag_fiber_ok) X(found_flags)                            \
  X(reduce_tree_natural) X(hotspot_natural) X(scan_natural) X(transpose_natural)                 \
  X(tiled) X(reduce) X(mixed_decl) X(below_x) X(versioned) X(versioned_return) X(unversioned) X(cubes_fiber)                                     \
  X(scalars_fiber) X(dynamic_reverse_fiber) X(dynamic_overflow) X(shared_atomics64)            \
  X(ported_backprop_forward) X(ported_nw)
/* clang-format on */
KERNELS(DECLARE_FORMS)

/* The sanitizer's planted bugs (tests/sanitizer/bugs.cube.c): races, out-of-range accesses,
   reads of what nobody wrote and divergent barriers, whose results are undefined, so the two
   forms need not agree. tests/sanitizer/sanitizer_bugs.c checks that validate mode reports
   each of them. The phase transform's fallback kernels (tests/phase/rules.cube.c) are there
   for the transform's notes (tests/phase/check_phase.py), not for their results: each stores
   sh->v[0], which no unit of it writes (the cube's shared memory holds what an earlier launch
   left there, on whichever thread runs the cube), and four of them take barriers that not every
   unit reaches. */
static const char *const excluded[] = {
    "ww_fiber", "rw_fiber", "war_fiber", "oob_index_fiber", "oob_ptr_fiber", "uninit_fiber",
    "return_fiber", "private_fiber", "ww_buffer_fiber", "rw_buffer_fiber", "found_flag_fiber",
    "found_diff_fiber", "return_read_fiber",
    /* bugs.cube.c: unit 6 reads a private variable never written (uninit_scalar_fiber_ok: its
       value never reaches the output, but the read is undefined behaviour all the same) */
    "uninit_scalar_fiber", "uninit_scalar_fiber_ok",
    /* bugs.cube.c: unit 7 of cube (0, 1, 0) reads element 16 of 16 (a planted bug) */
    "oob_buffer_fiber",
    /* rules.cube.c: reads sh->v[0], never written; a barrier only the odd units reach */
    "per_unit_if",
    /* rules.cube.c: reads sh->v[0], never written; each unit takes UNIT_POS barriers */
    "per_unit_loop",
    /* rules.cube.c: reads sh->v[0], never written; unit 0 returns before the barrier */
    "early_return",
    /* rules.cube.c: reads sh->v[0], never written; the barrier count follows the input */
    "break_across",
    /* rules.cube.c: reads sh->v[0], never written (unit 0 skips its store) */
    "with_goto",
    /* rules.cube.c: reads sh->v[0], never written */
    "escaping",
    /* rules.cube.c: reads sh->v[0], never written */
    "array_across"};

/* ---- geometries of the kernels that take sizes of their own ---- */

static void count_tiles(geometry *g, uint32_t width, uint32_t height, uint32_t tile_x,
                        uint32_t tile_y) {
  g->count =
      cubert_cube_count_new_3d((width + tile_x - 1) / tile_x, (height + tile_y - 1) / tile_y, 1);
}

/* SGEMM (examples/sgemm.cube.c): M, N, K, partial tiles included. */
static void sgemm_geometry(rng *r, geometry *g) {
  const uint32_t m = pick(r, 1, 70), n = pick(r, 1, 70), k = pick(r, 1, 70);
  count_tiles(g, n, m, 16, 16);
  g->elems[0] = (uint64_t)m * k;
  g->elems[1] = (uint64_t)k * n;
  g->elems[2] = (uint64_t)m * n;
  g->info[0] = m;
  g->info[1] = n;
  g->info[2] = k;
  g->info_count = 3;
}

/* Row softmax: one cube per row, and one extra cube (it does nothing). */
static void softmax_geometry(rng *r, geometry *g) {
  const uint32_t rows = pick(r, 1, 5), cols = pick(r, 1, 300);
  g->count = cubert_cube_count_new_3d(rows + 1, 1, 1);
  g->elems[0] = g->elems[1] = (uint64_t)rows * cols;
  g->info[0] = rows;
  g->info[1] = cols;
  g->info_count = 2;
}

/* One element per unit, n of them (the last cube partly past n). */
static void per_unit_geometry(rng *r, geometry *g, uint64_t out_elems_per_cube) {
  const uint32_t units = g->dim.x, cubes = pick(r, 1, 5);
  const uint64_t n = (uint64_t)units * (cubes - 1) + pick(r, 1, units);
  g->count = cubert_cube_count_new_3d(cubes, 1, 1);
  g->elems[0] = n;
  g->elems[1] = out_elems_per_cube ? out_elems_per_cube * cubes : n;
  g->info[0] = n;
  g->info_count = 1;
}

static void reduce_geometry(rng *r, geometry *g) {
  per_unit_geometry(r, g, 1);
}

static void scan_geometry(rng *r, geometry *g) {
  per_unit_geometry(r, g, 0);
}

/* A grid or matrix of width x height, tiles of tile_x x tile_y; `buffers` of it. */
static void grid_geometry(rng *r, geometry *g, uint32_t tile_x, uint32_t tile_y, uint32_t buffers) {
  const uint32_t width = pick(r, 1, 80), height = pick(r, 1, 80);
  count_tiles(g, width, height, tile_x, tile_y);
  for (uint32_t b = 0; b < buffers; ++b) g->elems[b] = (uint64_t)width * height;
  g->info[0] = width;
  g->info[1] = height;
  g->info_count = 2;
}

static void hotspot_geometry(rng *r, geometry *g) {
  grid_geometry(r, g, 16, 16, 3); /* info: nx, ny */
}

static void transpose_geometry(rng *r, geometry *g) {
  grid_geometry(r, g, 32, 32, 2); /* info: rows, cols (a cube moves a 32 x 32 tile) */
  const uint64_t rows = g->info[0], cols = g->info[1];
  g->count = cubert_cube_count_new_3d((uint32_t)(cols + 31) / 32, (uint32_t)(rows + 31) / 32, 1);
}

/* The random count of a kernel without sizes of its own; the units of all its cubes. */
static uint64_t random_count(rng *r, geometry *g) {
  g->count = cubert_cube_count_new_3d(pick(r, 1, 3), pick(r, 1, 2), pick(r, 1, 2));
  return (uint64_t)g->dim.x * g->dim.y * g->dim.z * g->count.x * g->count.y * g->count.z;
}

/* rules.cube.c's tiled: `in` holds n slices of one element per unit, n = info word 0. */
static void tiled_geometry(rng *r, geometry *g) {
  const uint64_t units = random_count(r, g), n = pick(r, 1, 4);
  g->elems[0] = n * units;
  g->elems[1] = units;
  g->info[0] = n;
  g->info_count = 1;
}

/* lang_features.cube.c's scalars_fiber: scalars base (int64_t, negative too) and step (uint8_t). */
static void scalars_geometry(rng *r, geometry *g) {
  g->elems[0] = random_count(r, g);
  g->info[0] = (uint64_t)(int64_t)((int32_t)pick(r, 0, 2000000) - 1000000);
  g->info[1] = pick(r, 0, 255);
  g->info_count = 2;
}

/* rodinia.cube.c's ported_backprop_forward: 16 x 16 cubes, `hid` hidden units (scalar 0) over
   count.x cubes, 16 inputs per row of cubes. */
static void backprop_geometry(rng *r, geometry *g) {
  const uint32_t hid = pick(r, 1, 40), rows = pick(r, 1, 3);
  g->count = cubert_cube_count_new_3d((hid + 15) / 16, rows, 1);
  g->elems[0] = 16ull * rows;
  g->elems[1] = 16ull * rows * hid;
  g->elems[2] = (uint64_t)rows * hid;
  g->info[0] = hid;
  g->info_count = 1;
}

/* rodinia.cube.c's ported_nw: cubes of 8 units, one per 8 x 8 tile of anti-diagonal `diag` of a
   (8 blocks + 1)^2 score matrix (scalars cols, penalty, diag, blocks). */
static void nw_geometry(rng *r, geometry *g) {
  const uint32_t blocks = pick(r, 1, 3), diag = pick(r, 0, 2 * blocks - 2);
  const uint32_t cols = blocks * 8 + 1;
  g->count = cubert_cube_count_new_3d(diag < blocks ? diag + 1 : 2 * blocks - 1 - diag, 1, 1);
  g->elems[0] = g->elems[1] = (uint64_t)cols * cols;
  g->info[0] = cols;
  g->info[1] = pick(r, 0, 10);
  g->info[2] = diag;
  g->info[3] = blocks;
  g->info_count = 4;
}

/* ---- the table ---- */

#define DIM(x, y) \
  { x, y, 1 }
#define UNITS(k) \
  { k, 0, 0 }
#define CUBES(k) \
  { 0, k, 0 }

static const form_case cases[] = {
    {FORMS(sgemm_tiled_fibers), 0, DIM(16, 16), 0, {{0}}, 0, sgemm_geometry, 0},
    {FORMS(softmax_rows_fibers), 1024, {0}, ONE_D, {{0}}, 0, softmax_geometry, 0},
    {FORMS(positions_fiber), 64, {0}, 0, {UNITS(16)}, 0, NULL, 0},
    {FORMS(shared_histogram), 256, {0}, MIN_UNITS4, {CUBES(4)}, 0, NULL, 0},
    {FORMS(cube_sum_fiber), 256, {0}, 0, {UNITS(1), CUBES(1)}, 0, NULL, 0},
    {FORMS(skips_barrier), 64, {0}, 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(different_barriers), 64, {0}, 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(order_ticket_fiber), 64, {0}, ONE_CUBE, {{0, 0, 1}, UNITS(1)}, 0, NULL, 0},
    {FORMS(order_sum_fiber), 64, {0}, 0, {UNITS(1), CUBES(1)}, 0, NULL, 0},
    {FORMS(helpers_fiber_f32), 256, {0}, 0, {UNITS(1), UNITS(5)}, 0, NULL, 0},
    {FORMS(helpers_fiber_i32), 256, {0}, 0, {UNITS(1), UNITS(5)}, 0, NULL, 0},
    {FORMS(helpers_fiber_u32), 256, {0}, 0, {UNITS(1), UNITS(5)}, 0, NULL, 0},
    {FORMS(shared_atomics_fiber), 128, {0}, 0, {UNITS(1), CUBES(3), {4, 1, 0}}, 0, NULL, 0},
    {FORMS(macro_args_fiber), 64, {0}, 0, {UNITS(1), {4, 4, 0}}, 0, NULL, 0},
    {FORMS(shared_over_a_failing_build), 8, {0}, REFUSED, {UNITS(1)}, 0, NULL, 0},
    {FORMS(too_much_shared_memory), 8, {0}, REFUSED, {UNITS(1)}, 0, NULL, 0},
    {FORMS(clean_cube), 128, {0}, 0, {UNITS(1), UNITS(1)}, 0, NULL, 0},
    {FORMS(clean_no_shared), 64, {0}, 0, {UNITS(1)}, 0, NULL, 0},
    /* bugs.cube.c's kernels are written for cubes of 8 units (shared8) */
    {FORMS(ww_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(rw_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(atomic_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(oob_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(uninit_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(return_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(ww_buffer_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(rw_buffer_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(atomic_buffer_fiber_ok), 0, DIM(8, 1), 0, {{0, 0, 1}}, 0, NULL, 0},
    {FORMS(wild_fiber), 0, DIM(8, 1), 0, {UNITS(1)}, 4 /* bit 2: the corrected twin */, NULL, 0},
    {FORMS(read_in_fiber), 0, DIM(8, 1), 0, {UNITS(1), UNITS(1)}, 0, NULL, 0},
    {FORMS(found_flag_fiber_ok), 0, DIM(8, 1), 0, {UNITS(1)}, 0, NULL, 0},
    /* language.cube.c: keys, then found[0] and one flag per cube */
    {FORMS(found_flags), 64, {0}, 0, {UNITS(1), {0, 1, 1}}, 0, NULL, 0},
    {FORMS(reduce_tree_natural), 1024, {0}, ONE_D, {{0}}, 0, reduce_geometry, 0},
    {FORMS(hotspot_natural), 0, DIM(16, 16), 0, {{0}}, 0, hotspot_geometry, 0},
    {FORMS(scan_natural), 1024, {0}, ONE_D, {{0}}, 0, scan_geometry, 0},
    {FORMS(transpose_natural), 0, DIM(32, 8), 0, {{0}}, 0, transpose_geometry, 0},
    /* rules.cube.c: rules_shared holds 64 elements per array, indexed by UNIT_POS */
    {FORMS(tiled), 64, {0}, 0, {{0}}, 0, tiled_geometry, 0},
    {FORMS(reduce), 64, {0}, 0, {UNITS(1), CUBES(1)}, 0, NULL, 0},
    {FORMS(mixed_decl), 64, {0}, 0, {UNITS(1), CUBES(1)}, 0, NULL, 0},
    {FORMS(below_x), 64, {0}, 0, {UNITS(1), CUBES(1)}, 0, NULL, 0},
    /* info n = 50: cubes inside take the version, those past n or the buffers the checked phase */
    {FORMS(versioned), 32, {0}, ONE_D, {UNITS(1), UNITS(1)}, 50, NULL, 0},
    {FORMS(versioned_return), 64, {0}, ONE_D, {UNITS(1), UNITS(1)}, 0, NULL, 0},
    {FORMS(unversioned), 64, {0}, 0, {UNITS(1), {0, 0, 64}}, 0, NULL, 0},
    /* cubes.cube.c: each unit reads the element of the next unit modulo 256 (CUBES_UNITS) */
    {FORMS(cubes_fiber), 0, DIM(256, 1), 0, {UNITS(1)}, 0, NULL, 0},
    {FORMS(scalars_fiber), 64, {0}, 0, {{0}}, 0, scalars_geometry, 0},
    /* one float / uint32_t of dynamic shared memory per unit */
    {FORMS(dynamic_reverse_fiber), 256, {0}, 0, {UNITS(1), UNITS(1)}, 0, NULL, 4},
    {FORMS(dynamic_overflow), 256, {0}, 0, {UNITS(1)}, 0, NULL, 4},
    /* nine values of the cube's 64-bit shared atomics per cube */
    {FORMS(shared_atomics64), 256, {0}, 0, {CUBES(9)}, 0, NULL, 0},
    {FORMS(ported_backprop_forward), 0, DIM(16, 16), 0, {{0}}, 0, backprop_geometry, 0},
    {FORMS(ported_nw), 0, DIM(8, 1), 0, {{0}}, 0, nw_geometry, 0},
};

/* ---- running both forms ---- */

/* Trial 0 takes the most units the kernel allows, the others random sizes, 3-D on odd trials
   where the kernel takes them. */
static cubert_cube_dim pick_dim(rng *r, const form_case *c, int trial) {
  if (!c->max_units) return c->fixed;
  if (trial == 0) return cubert_cube_dim_new_3d(c->max_units, 1, 1);
  const uint32_t x = pick(r, c->flags & MIN_UNITS4 ? 4 : 1, c->max_units);
  if ((c->flags & ONE_D) || trial % 2 == 0) return cubert_cube_dim_new_3d(x, 1, 1);
  const uint32_t y = pick(r, 1, c->max_units / x < 4 ? c->max_units / x : 4);
  const uint32_t z = pick(r, 1, c->max_units / (x * y) < 3 ? c->max_units / (x * y) : 3);
  return cubert_cube_dim_new_3d(x, y, z);
}

static void geometry_make(rng *r, const form_case *c, int trial, geometry *g) {
  memset(g, 0, sizeof(*g));
  g->dim = pick_dim(r, c, trial);
  if (c->custom) {
    c->custom(r, g);
  } else if (c->flags & ONE_CUBE) {
    g->count = cubert_cube_count_new_3d(1, 1, 1);
  } else {
    g->count = cubert_cube_count_new_3d(pick(r, 1, 3), pick(r, 1, 2), pick(r, 1, 2));
  }
  const uint64_t per_cube = (uint64_t)g->dim.x * g->dim.y * g->dim.z;
  g->dynamic_bytes = (uint64_t)c->dynamic_per_unit * per_cube;
  const uint64_t cubes = (uint64_t)g->count.x * g->count.y * g->count.z;
  g->units = per_cube * cubes;
  if (!c->custom) {
    for (int b = 0; b < MAX_BUFFERS; ++b)
      g->elems[b] =
          c->sizes[b].per_unit * g->units + c->sizes[b].per_cube * cubes + c->sizes[b].extra;
    g->info[0] = c->info0;
    g->info_count = c->info0 ? 1 : 0;
  }
}

/* Element i of a buffer of `type` (as declared, e.g. "const float"): small values, so that no
   integer sum overflows and float sums stay finite. */
static void fill_element(rng *r, const char *type, uint32_t bytes, uint8_t *at) {
  if (strstr(type, "float") && bytes == 4) {
    const float v = (float)((int32_t)pick(r, 0, 2000) - 1000) / 256.0f;
    memcpy(at, &v, 4);
  } else if (strstr(type, "double") && bytes == 8) {
    const double v = (double)((int32_t)pick(r, 0, 2000) - 1000) / 256.0;
    memcpy(at, &v, 8);
  } else if (strstr(type, "int32_t") && bytes == 4) {
    const int32_t v = (int32_t)pick(r, 0, 2000) - (strstr(type, "uint") ? 0 : 1000);
    memcpy(at, &v, 4);
  } else {
    for (uint32_t i = 0; i < bytes; ++i) at[i] = (uint8_t)next(r);
  }
}

typedef struct buffers {
  uint32_t count;
  size_t bytes[MAX_BUFFERS];
  uint8_t *init[MAX_BUFFERS], *natural[MAX_BUFFERS], *fibers[MAX_BUFFERS];
} buffers;

static void buffers_make(rng *r, const form_case *c, const geometry *g, buffers *b) {
  memset(b, 0, sizeof(*b));
  const cubert_kernel_signature *sig = c->natural->signature;
  b->count = sig->buffer_count;
  for (uint32_t i = 0; i < b->count; ++i) {
    const uint32_t elem = sig->buffers[i].elem_bytes;
    b->bytes[i] = g->elems[i] * elem;
    cr_assert_gt(b->bytes[i], 0, "%s: buffer %u has no element: its size rule is missing", c->name,
                 i);
    b->init[i] = malloc(b->bytes[i] + 1);
    b->natural[i] = malloc(b->bytes[i] + 1);
    b->fibers[i] = malloc(b->bytes[i] + 1);
    cr_assert(b->init[i] && b->natural[i] && b->fibers[i]);
    for (uint64_t e = 0; e < g->elems[i]; ++e)
      fill_element(r, sig->buffers[i].type, elem, b->init[i] + e * elem);
  }
}

static void buffers_free(buffers *b) {
  for (uint32_t i = 0; i < b->count; ++i) {
    free(b->init[i]);
    free(b->natural[i]);
    free(b->fibers[i]);
  }
}

/* Runs `def` from b->init; `out` receives every buffer. Returns the launch's or the sync's code
   (CUBERT_CODE_OK when both succeed). */
static cubert_code run_form(cubert_client *client, const cubert_kernel_def *def, const geometry *g,
                            const buffers *b, uint8_t *const *out) {
  cubert_handle *h[MAX_BUFFERS] = {NULL};
  for (uint32_t i = 0; i < b->count; ++i) {
    cubert_status s = cubert_client_create_buffer(client, b->init[i], b->bytes[i], &h[i]);
    cr_assert_null(s, "%s: buffer %u: %s", def->name, i, s ? cubert_status_message(s) : "");
  }
  const cubert_kernel_args args = {h, b->count, g->info, g->info_count};
  const cubert_launch_options options = {.dynamic_shared_bytes = g->dynamic_bytes};
  cubert_status s = g->dynamic_bytes
                        ? cubert_client_launch_with(client, def, g->count, g->dim, &args, &options)
                        : cubert_client_launch(client, def, g->count, g->dim, &args);
  if (!s) s = cubert_client_sync(client);
  const cubert_code code = s ? cubert_status_code(s) : CUBERT_CODE_OK;
  cubert_status_free(s);
  for (uint32_t i = 0; i < b->count; ++i) {
    if (!code) {
      s = cubert_client_read(client, h[i], out[i], b->bytes[i]);
      cr_assert_null(s, "%s: read: %s", def->name, s ? cubert_status_message(s) : "");
    }
    cubert_handle_release(h[i]);
  }
  return code;
}

/* ---- the test ---- */

static uint64_t seed_from_env(void) {
  const char *s = getenv("CUBERT_PHASE_FORMS_SEED");
  return s && *s ? strtoull(s, NULL, 10) : 37;
}

/* Element index of the first difference of two buffers of `elem`-byte elements, or -1. */
static int64_t first_difference(const uint8_t *a, const uint8_t *b, size_t bytes, uint32_t elem) {
  for (size_t i = 0; i < bytes; ++i)
    if (a[i] != b[i]) return (int64_t)(i / elem);
  return -1;
}

/* One trial of one kernel: both forms from the same buffers, then every buffer compared. */
static void check_trial(cubert_client *client, const form_case *c, rng *r, int trial,
                        uint64_t seed) {
  geometry g;
  geometry_make(r, c, trial, &g);
  buffers b;
  buffers_make(r, c, &g, &b);
  char where[200];
  snprintf(where, sizeof(where), "%s, cube dim (%u, %u, %u), cube count (%u, %u, %u), seed %llu",
           c->name, g.dim.x, g.dim.y, g.dim.z, g.count.x, g.count.y, g.count.z,
           (unsigned long long)seed);
  const cubert_code natural = run_form(client, c->natural, &g, &b, b.natural);
  const cubert_code fibers = run_form(client, c->fibers, &g, &b, b.fibers);
  cr_expect_eq(natural, fibers, "%s: the default build's launch gave code %d, FIBERS' %d", where,
               (int)natural, (int)fibers);
  if (c->flags & REFUSED)
    cr_expect_neq(natural, CUBERT_CODE_OK, "%s: the launch should have been refused", where);
  else
    cr_expect_eq(natural, CUBERT_CODE_OK, "%s: the launch failed with code %d", where,
                 (int)natural);
  const cubert_kernel_signature *sig = c->natural->signature;
  for (uint32_t i = 0; natural == CUBERT_CODE_OK && fibers == CUBERT_CODE_OK && i < b.count; ++i) {
    const uint32_t elem = sig->buffers[i].elem_bytes;
    const int64_t at = first_difference(b.natural[i], b.fibers[i], b.bytes[i], elem);
    cr_expect_eq(at, -1, "%s: buffer %s (%s) differs first at element %lld", where,
                 sig->buffers[i].name, sig->buffers[i].type, (long long)at);
  }
  buffers_free(&b);
}

/* The two copies are two different functions: a table entry that named the same definition
   twice would compare a kernel with itself. */
Test(phase_forms, each_entry_holds_two_builds_of_its_kernel) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const form_case *c = &cases[i];
    cr_expect_str_eq(c->natural->name, c->name);
    cr_expect_str_eq(c->fibers->name, c->name);
    cr_expect(c->natural->cpu != c->fibers->cpu, "%s: one CPU function for both copies", c->name);
    cr_expect_eq(c->fibers->flags & CUBERT_KERNEL_PHASED, 0, "%s: FIBERS built a phased copy",
                 c->name);
    cr_expect_not_null(c->natural->signature, "%s", c->name);
  }
}

/* A kernel is run or excluded, never both (tests/phase_forms_table.sh accepts either). */
Test(phase_forms, no_kernel_is_both_run_and_excluded) {
  for (size_t e = 0; e < sizeof(excluded) / sizeof(excluded[0]); ++e)
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
      cr_expect_str_neq(excluded[e], cases[i].name);
}

Test(phase_forms, every_cube_kernel_gives_the_same_bits_in_both_forms, .timeout = 120) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create("cpu", &client);
  cr_assert_null(s, "%s", s ? cubert_status_message(s) : "");
  const uint64_t seed = seed_from_env();
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    rng r = {seed * 1000003u + i + 1};
    for (int trial = 0; trial < TRIALS; ++trial) check_trial(client, &cases[i], &r, trial, seed);
  }
  cubert_client_release(client);
}

/* cubert_op_softmax (cubert/ops.h) against a double-precision host reference.
   Tolerance: f32 outputs within 4e-6 relative + 1e-9 absolute of the reference (exp within 3
   ulp, a sum of up to a few thousand terms in a tree, one division: a few 1e-7 in practice),
   f64 within 1e-12 relative + 1e-300 absolute. */
#include <math.h>
#include <string.h>

#include "cts.h"
#include "cubert/tune.h"
#include "ops/softmax.h"

TestSuite(ops_softmax, .init = cts_setup, .fini = cts_teardown);

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double rnd_unit(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static int has_fp64(void) {
  return (cubert_client_properties(cts_client)->features & CUBERT_FEATURE_FP64) != 0;
}

enum { ROW_MAJOR, COL_MAJOR, PITCHED, OFFSET, STRIDED, KIND_COUNT };

typedef struct view {
  cubert_tensor t;
  double *ref_in; /* the values, as doubles, at buffer positions */
  uint64_t elems;
} view;

static cubert_tensor layout(uint32_t rank, const uint64_t *shape, cubert_dtype dt, int kind,
                            uint64_t *elems) {
  cubert_tensor t;
  memset(&t, 0, sizeof t);
  t.rank = rank;
  t.dtype = dt;
  t.elem_size = cubert_dtype_size(dt);
  uint64_t step = 1, end = 0;
  if (kind == COL_MAJOR) {
    for (uint32_t d = 0; d < rank; ++d) {
      t.strides[d] = step;
      step *= shape[d] ? shape[d] : 1;
    }
  } else {
    step = kind == STRIDED ? 2 : 1;
    for (uint32_t d = rank; d-- > 0;) {
      t.strides[d] = step;
      step = step * (shape[d] ? shape[d] : 1) + (kind == PITCHED ? 3 : 0);
    }
  }
  for (uint32_t d = 0; d < rank; ++d) {
    t.shape[d] = shape[d];
    if (shape[d]) end += (shape[d] - 1) * t.strides[d];
  }
  t.offset = kind == OFFSET ? 5 : 0;
  *elems = t.offset + end + 1 + (kind == PITCHED ? 4 : 0);
  return t;
}

/* Runs softmax of random values times `scale` (plus `shift`) laid out as in_kind into out_kind
   (or in place when out_kind < 0), with candidate `candidate` (-1: tuned), and checks it. */
static int run_case(uint32_t rank, const uint64_t *shape, cubert_dtype dt, int in_kind,
                    int out_kind, double scale, double shift, int candidate) {
  uint64_t in_elems, out_elems;
  cubert_tensor in = layout(rank, shape, dt, in_kind, &in_elems);
  cubert_tensor out = out_kind < 0 ? in : layout(rank, shape, dt, out_kind, &out_elems);
  if (out_kind < 0) out_elems = in_elems;
  const size_t es = in.elem_size;
  double *vals = malloc(in_elems * sizeof(double));
  void *host = malloc(in_elems * es);
  for (uint64_t i = 0; i < in_elems; ++i) {
    double v = (rnd_unit() * 2 - 1) * scale + shift;
    if (dt == CUBERT_DTYPE_F32) {
      ((float *)host)[i] = (float)v;
      vals[i] = (float)v;
    } else {
      ((double *)host)[i] = v;
      vals[i] = v;
    }
  }
  in.handle = cts_buffer(host, in_elems * es);
  if (out_kind < 0) out.handle = in.handle;
  if (out_kind >= 0) {
    void *zero = calloc(out_elems, es);
    out.handle = cts_buffer(zero, out_elems * es);
    free(zero);
  }
  cubert_ops_softmax_force_candidate(candidate);
  cubert_status st = cubert_op_softmax(cts_client, &in, &out);
  cubert_ops_softmax_force_candidate(-1);
  int ran = 1;
  if (st && candidate >= 0 && cubert_status_code(st) == CUBERT_CODE_UNAVAILABLE) {
    cubert_status_free(st);
    ran = 0;
  } else {
    cr_assert(st == NULL, "softmax: %s", cubert_status_message(st));
    void *got = malloc(out_elems * es);
    cts_read(out.handle, got, out_elems * es);
    const uint32_t last = rank - 1;
    const uint64_t C = shape[last];
    uint64_t rows = 1;
    for (uint32_t d = 0; d < last; ++d) rows *= shape[d];
    for (uint64_t r = 0; r < rows && C > 0; ++r) {
      uint64_t bi = in.offset, bo = out.offset, rem = r;
      for (uint32_t d = last; d-- > 0;) {
        const uint64_t c = rem % shape[d];
        rem /= shape[d];
        bi += c * in.strides[d];
        bo += c * out.strides[d];
      }
      double mx = -INFINITY, sum = 0;
      for (uint64_t j = 0; j < C; ++j) mx = fmax(mx, vals[bi + j * in.strides[last]]);
      for (uint64_t j = 0; j < C; ++j) sum += exp(vals[bi + j * in.strides[last]] - mx);
      for (uint64_t j = 0; j < C; ++j) {
        const double want = exp(vals[bi + j * in.strides[last]] - mx) / sum;
        const uint64_t p = bo + j * out.strides[last];
        const double g = dt == CUBERT_DTYPE_F32 ? ((float *)got)[p] : ((double *)got)[p];
        const double tol = dt == CUBERT_DTYPE_F32 ? 4e-6 * want + 1e-9 : 1e-12 * want + 1e-300;
        if (!(fabs(g - want) <= tol))
          cr_assert_fail(
              "softmax %s rank %u C %llu kinds %d/%d candidate %d: row %llu col %llu "
              "is %.17g, expected %.17g",
              cubert_dtype_name(dt), rank, (unsigned long long)C, in_kind, out_kind, candidate,
              (unsigned long long)r, (unsigned long long)j, g, want);
      }
    }
    free(got);
  }
  cubert_handle_release(in.handle);
  if (out_kind >= 0) cubert_handle_release(out.handle);
  free(vals);
  free(host);
  return ran;
}

static int candidate_count(void) {
  return (int)((const cubert_tune_set *)cubert_ops_softmax_tune_set())->candidate_count;
}

static const uint64_t shapes[][3] = {{1, 1, 1},   {7, 1, 1},   {3, 5, 1},    {4, 1000, 1},
                                     {2, 3, 129}, {5, 1, 300}, {1, 4097, 1}, {17, 33, 1}};
static const uint32_t ranks[] = {1, 1, 2, 2, 3, 3, 2, 2};

static void sweep(cubert_dtype dt) {
  int counter = 0;
  for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s)
    for (int kind = 0; kind < KIND_COUNT; ++kind) {
      int ran = 0;
      for (int tries = 0; tries < candidate_count() && !ran; ++tries, ++counter)
        ran = run_case(ranks[s], shapes[s], dt, kind,
                       (counter / 4) % 3 == 2 ? -1 : (counter % KIND_COUNT), 5.0, 0.0,
                       counter % candidate_count());
      cr_assert(ran);
    }
  /* The tuned choice, a big row and many rows. */
  const uint64_t big[2] = {64, 5000};
  run_case(2, big, dt, ROW_MAJOR, ROW_MAJOR, 10.0, 0.0, -1);
  run_case(2, big, dt, COL_MAJOR, PITCHED, 10.0, 0.0, -1);
}

Test(ops_softmax, f32_rows_of_every_layout_and_geometry) {
  sweep(CUBERT_DTYPE_F32);
}

Test(ops_softmax, f64_where_the_device_has_it) {
  const uint64_t shape[2] = {3, 4};
  if (!has_fp64()) {
    cubert_tensor t = {
        .rank = 2, .shape = {3, 4}, .strides = {4, 1}, .elem_size = 8, .dtype = CUBERT_DTYPE_F64};
    t.handle = cts_buffer((double[12]){0}, 96);
    ASSERT_CODE(cubert_op_softmax(cts_client, &t, &t), CUBERT_CODE_UNAVAILABLE, "f64");
    cubert_handle_release(t.handle);
    (void)shape;
    return;
  }
  sweep(CUBERT_DTYPE_F64);
}

Test(ops_softmax, large_inputs_do_not_overflow_and_in_place_works) {
  /* Values near 1e4: exp(1e4) overflows f32 and f64 without the max subtracted. */
  const uint64_t shape[2] = {6, 777};
  for (int c = -1; c < candidate_count(); ++c) {
    run_case(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR, ROW_MAJOR, 30.0, 1e4, c);
    run_case(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR, -1, 30.0, -1e4, c); /* in place */
    run_case(2, shape, CUBERT_DTYPE_F32, PITCHED, -1, 3.0, 1e4, c);     /* in place, pitched */
    if (has_fp64()) run_case(2, shape, CUBERT_DTYPE_F64, STRIDED, -1, 700.0, 1e4, c);
  }
}

/* Many rows per candidate: the rows_* candidates (several rows per cube, each row's exps beside
   the next row's maximum) over row counts that are no multiple of their rows per cube, rows
   shorter and longer than a cube, with odd lengths, strided, column-major and in place. */
Test(ops_softmax, rows_candidates_over_many_rows) {
  static const uint64_t shapes[][2] = {{75, 130}, {41, 1000}, {100, 3}};
  for (int c = 0; c < candidate_count(); ++c)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
      run_case(2, shapes[s], CUBERT_DTYPE_F32, ROW_MAJOR, ROW_MAJOR, 8.0, 0.0, c);
      run_case(2, shapes[s], CUBERT_DTYPE_F32, COL_MAJOR, PITCHED, 8.0, 0.0, c);
      run_case(2, shapes[s], CUBERT_DTYPE_F32, STRIDED, -1, 8.0, 0.0, c); /* in place */
    }
}

Test(ops_softmax, special_rows_empty_shapes_and_errors) {
  /* A row of -inf gives NaN; a row with one +inf gives NaN too (inf - inf); size-1 rows give 1. */
  float x[6] = {-INFINITY, -INFINITY, -INFINITY, 1.0f, 2.0f, 3.0f};
  cubert_tensor t = {
      .rank = 2, .shape = {2, 3}, .strides = {3, 1}, .elem_size = 4, .dtype = CUBERT_DTYPE_F32};
  t.handle = cts_buffer(x, sizeof x);
  ASSERT_OK(cubert_op_softmax(cts_client, &t, &t));
  float y[6];
  cts_read(t.handle, y, sizeof y);
  cr_assert(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
  cr_assert_float_eq(y[3] + y[4] + y[5], 1.0f, 1e-6f);
  cr_assert_gt(y[5], y[4]);

  cubert_tensor e = t;
  e.shape[0] = 0; /* empty: a no-op */
  ASSERT_OK(cubert_op_softmax(cts_client, &e, &e));
  e = t;
  e.shape[1] = 0;
  ASSERT_OK(cubert_op_softmax(cts_client, &e, &e));

  cubert_tensor o = t;
  o.shape[1] = 2;
  ASSERT_CODE(cubert_op_softmax(cts_client, &t, &o), CUBERT_CODE_INVALID_ARGUMENT,
              "in.shape[1] is 3 but out.shape[1] is 2");
  o = t;
  o.dtype = CUBERT_DTYPE_I32;
  ASSERT_CODE(cubert_op_softmax(cts_client, &t, &o), CUBERT_CODE_INVALID_ARGUMENT,
              "out.dtype is i32");
  o = t;
  o.offset = 1;
  o.shape[1] = 2;
  cubert_tensor i2 = t;
  i2.shape[1] = 2;
  ASSERT_CODE(cubert_op_softmax(cts_client, &i2, &o), CUBERT_CODE_INVALID_ARGUMENT,
              "in place needs the very same view");
  o = t;
  o.rank = 0;
  cubert_tensor s = o;
  ASSERT_CODE(cubert_op_softmax(cts_client, &s, &o), CUBERT_CODE_INVALID_ARGUMENT, "rank 0");
  cubert_handle_release(t.handle);
}

/* Special values through every candidate that takes rows of C elements, the first `neg` of
   them -inf in row 0: a row that starts with -inf (exact: the two-pass kernel's running sum
   must not turn exp(-inf - -inf) into NaN), a row of -inf (NaN), a row with a NaN (NaN) and a
   row with +inf (NaN: inf - inf). Returns the candidates that ran, one bit each. */
static uint32_t special_values(int C, int neg) {
  enum { ROWS = 4 };
  float *x = malloc(sizeof(float) * C * ROWS), *y = malloc(sizeof(float) * C * ROWS);
  uint32_t ran = 0;
  for (int c = 0; c < candidate_count(); ++c) {
    for (int j = 0; j < C; ++j) {
      x[j] = j < neg ? -INFINITY : (float)((j * 37) % 101) / 17.0f - 3.0f;
      x[C + j] = -INFINITY;
      x[2 * C + j] = j == C - 7 ? NAN : (float)(j % 7);
      x[3 * C + j] = j == 3 ? INFINITY : (float)(j % 5);
    }
    cubert_tensor t = {.rank = 2,
                       .shape = {ROWS, (uint64_t)C},
                       .strides = {(uint64_t)C, 1},
                       .elem_size = 4,
                       .dtype = CUBERT_DTYPE_F32};
    t.handle = cts_buffer(x, sizeof(float) * C * ROWS);
    cubert_ops_softmax_force_candidate(c);
    cubert_status st = cubert_op_softmax(cts_client, &t, &t);
    cubert_ops_softmax_force_candidate(-1);
    if (st && cubert_status_code(st) == CUBERT_CODE_UNAVAILABLE) { /* does not fit here */
      cubert_status_free(st);
      cubert_handle_release(t.handle);
      continue;
    }
    cr_assert(st == NULL, "candidate %d: %s", c, cubert_status_message(st));
    ran |= 1u << c;
    cts_read(t.handle, y, sizeof(float) * C * ROWS);
    double mx = -INFINITY, sum = 0;
    for (int j = neg; j < C; ++j) mx = fmax(mx, x[j]);
    for (int j = neg; j < C; ++j) sum += exp(x[j] - mx);
    for (int j = 0; j < C; ++j) {
      const double want = j < neg ? 0.0 : exp(x[j] - mx) / sum;
      cr_assert(fabs(y[j] - want) <= 4e-6 * want + 1e-9,
                "C %d candidate %d, row 0 col %d: %.9g, expected %.9g", C, c, j, y[j], want);
      cr_assert(isnan(y[C + j]), "C %d candidate %d, row of -inf col %d: %g", C, c, j, y[C + j]);
      cr_assert(isnan(y[2 * C + j]), "C %d candidate %d, row with NaN col %d: %g", C, c, j,
                y[2 * C + j]);
      cr_assert(isnan(y[3 * C + j]), "C %d candidate %d, row with +inf col %d: %g", C, c, j,
                y[3 * C + j]);
    }
    cubert_handle_release(t.handle);
  }
  free(x);
  free(y);
  return ran;
}

/* The units form's bit in a candidate mask. */
static uint32_t units_forms(void) {
  const cubert_tune_set *set = cubert_ops_softmax_tune_set();
  uint32_t units = 0;
  for (uint32_t c = 0; c < set->candidate_count; ++c)
    if (strncmp(set->candidates[c].name, "units_", 6) == 0) units |= 1u << c;
  cr_assert_neq(units, 0, "the set has a units form");
  return units;
}

/* The units form in every layout, in place and not, f32 and (where the device has it) f64,
   with a row count that is no multiple of its 64 rows per cube. */
Test(ops_softmax, units_form_in_every_layout) {
  const uint32_t units = units_forms();
  const uint64_t shape[2] = {97, 17};
  for (int c = 0; c < candidate_count(); ++c) {
    if (!(units & 1u << c)) continue;
    for (int kind = 0; kind < KIND_COUNT; ++kind) {
      cr_assert(run_case(2, shape, CUBERT_DTYPE_F32, kind, (kind + 1) % KIND_COUNT, 6.0, 0.0, c));
      cr_assert(run_case(2, shape, CUBERT_DTYPE_F32, kind, -1, 6.0, 0.0, c)); /* in place */
      if (has_fp64()) cr_assert(run_case(2, shape, CUBERT_DTYPE_F64, kind, kind, 6.0, 1e3, c));
    }
  }
}

/* Long rows: every cube form's four-block loops; too long for the units form. */
Test(ops_softmax, special_values_in_long_rows) {
  const uint32_t ran = special_values(1500, 1100);
  cr_expect_eq(ran & units_forms(), 0, "rows of 1500 are too long for the units form");
  cr_expect_geq(__builtin_popcount(ran), 6, "the cube forms (%#x)", ran);
}

/* Short rows: the units form and the cube forms that fit. */
Test(ops_softmax, special_values_in_short_rows) {
  const uint32_t ran = special_values(40, 25);
  cr_expect_eq(ran & units_forms(), units_forms(), "the units form ran (%#x)", ran);
  cr_expect_geq(__builtin_popcount(ran), 6, "the cube forms too (%#x)", ran);
}

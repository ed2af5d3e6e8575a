/* cubert_op_reduce (cubert/ops.h) against a host reference: every op x dtype x axis of random
   tensors of rank 1-4 at odd sizes, size-1 and empty dimensions, non-contiguous views
   (transposed, offset, pitched, strided) on both sides, keep_dim both ways, full reductions,
   every geometry of the autotune set (forced one by one) as well as the tuned choice, argmax
   ties and NaN, exact i32 means, and error messages. */
#include <math.h>

#include "cts.h"
#include "cubert/tune.h"
#include "ops/reduce.h"

TestSuite(ops_reduce, .init = cts_setup, .fini = cts_teardown);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

enum { ROW_MAJOR, COL_MAJOR, PITCHED, OFFSET, STRIDED, KIND_COUNT };
static const char *const kind_names[] = {"row-major", "transposed", "pitched", "offset", "strided"};

typedef struct view {
  cubert_tensor t;
  void *host;
  uint64_t elems; /* of the buffer */
} view;

/* A view of `shape` laid out as `kind` in a buffer of its own. The buffer is filled by fill(). */
static view make_view(uint32_t rank, const uint64_t *shape, cubert_dtype dt, int kind) {
  view v;
  memset(&v, 0, sizeof v);
  v.t.rank = rank;
  v.t.dtype = dt;
  v.t.elem_size = cubert_dtype_size(dt);
  uint64_t step = 1;
  if (kind == COL_MAJOR) {
    for (uint32_t d = 0; d < rank; ++d) {
      v.t.strides[d] = step;
      step *= shape[d] ? shape[d] : 1;
    }
  } else {
    step = kind == STRIDED ? 2 : 1;
    for (uint32_t d = rank; d-- > 0;) {
      v.t.strides[d] = step;
      step = step * (shape[d] ? shape[d] : 1) + (kind == PITCHED ? 3 : 0);
    }
  }
  uint64_t end = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    v.t.shape[d] = shape[d];
    if (shape[d]) end += (shape[d] - 1) * v.t.strides[d];
  }
  v.t.offset = kind == OFFSET ? 7 : 0;
  v.elems = v.t.offset + end + 1 + (kind == PITCHED ? 5 : 0);
  v.host = calloc(v.elems, v.t.elem_size);
  return v;
}

/* values: 0 wide random, 1 small integers (many ties), 2 full-range i32 (sums wrap). */
static void fill(view *v, int values) {
  for (uint64_t i = 0; i < v->elems; ++i) {
    if (v->t.dtype == CUBERT_DTYPE_F32) {
      float x = values == 1 ? (float)(rnd() % 4) : (float)((int)(rnd() % 20001) - 10000) / 997.0f;
      ((float *)v->host)[i] = x;
    } else {
      int32_t x = values == 1   ? (int32_t)(rnd() % 4)
                  : values == 2 ? (int32_t)(rnd() * 65536u + rnd())
                                : (int32_t)(rnd() % 2001) - 1000;
      ((int32_t *)v->host)[i] = x;
    }
  }
}

static void upload(view *v) {
  v->t.handle = cts_buffer(v->host, v->elems * v->t.elem_size);
}

static void drop(view *v) {
  cubert_handle_release(v->t.handle);
  free(v->host);
}

static uint64_t elems_of(uint32_t rank, const uint64_t *shape) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

/* The reference of one output: reduce in over `axis` (or all) at the output whose kept
   coordinates are `kept` (in's coordinates with the reduced one ignored). */
typedef struct ref {
  double sum, abs_sum, mean;
  int64_t isum;
  uint32_t wrap;
  double best[2]; /* max, min (NaN propagates) */
  int64_t arg[2]; /* argmax, argmin */
  uint64_t count;
} ref;

static double value_at(const view *v, uint64_t idx) {
  return v->t.dtype == CUBERT_DTYPE_F32 ? (double)((const float *)v->host)[idx]
                                        : (double)((const int32_t *)v->host)[idx];
}

static ref reference(const view *v, uint32_t axis, const uint64_t *coord) {
  ref r;
  memset(&r, 0, sizeof r);
  r.best[0] = -INFINITY;
  r.best[1] = INFINITY;
  r.arg[0] = r.arg[1] = -1;
  const uint32_t rank = v->t.rank;
  const uint64_t n = axis == CUBERT_AXIS_ALL ? elems_of(rank, v->t.shape) : v->t.shape[axis];
  for (uint64_t j = 0; j < n; ++j) {
    uint64_t c[CUBERT_MAX_RANK];
    memcpy(c, coord, sizeof c);
    if (axis == CUBERT_AXIS_ALL) {
      uint64_t rem = j;
      for (uint32_t d = rank; d-- > 0;) {
        c[d] = rem % v->t.shape[d];
        rem /= v->t.shape[d];
      }
    } else {
      c[axis] = j;
    }
    uint64_t idx = v->t.offset;
    for (uint32_t d = 0; d < rank; ++d) idx += c[d] * v->t.strides[d];
    const double x = value_at(v, idx);
    r.sum += x;
    r.abs_sum += fabs(x);
    if (v->t.dtype == CUBERT_DTYPE_I32) {
      r.isum += (int32_t)x;
      r.wrap += (uint32_t)(int32_t)x;
    }
    for (int k = 0; k < 2; ++k) {
      const int better = k == 0 ? x > r.best[k] : x < r.best[k];
      if (isnan(r.best[k])) continue;
      if (isnan(x) || better || r.arg[k] < 0) {
        r.best[k] = x;
        r.arg[k] = (int64_t)j;
      }
    }
  }
  r.count = n;
  r.mean = v->t.dtype == CUBERT_DTYPE_I32 ? (double)r.isum / (double)n : r.sum / (double)n;
  return r;
}

/* Runs op over axis of `in` (with the forced candidate, -1: tuned) and checks every output
   against the reference. out_kind lays the output out. Returns 0 when the candidate does not
   fit the problem. */
static int check_case(cubert_reduce_op op, view *in, uint32_t axis, int keep_dim, int out_kind,
                      int candidate) {
  uint64_t oshape[CUBERT_MAX_RANK];
  uint32_t orank = 0;
  for (uint32_t d = 0; d < in->t.rank; ++d) {
    const int reduced = axis == CUBERT_AXIS_ALL || d == axis;
    if (!reduced)
      oshape[orank++] = in->t.shape[d];
    else if (keep_dim)
      oshape[orank++] = 1;
  }
  const cubert_dtype odt = op == CUBERT_REDUCE_ARGMAX || op == CUBERT_REDUCE_ARGMIN
                               ? CUBERT_DTYPE_I32
                           : op == CUBERT_REDUCE_MEAN ? CUBERT_DTYPE_F32
                                                      : in->t.dtype;
  view out = make_view(orank, oshape, odt, out_kind);
  for (uint64_t i = 0; i < out.elems; ++i) ((uint32_t *)out.host)[i] = 0xdeadbeefu;
  upload(&out);
  cubert_ops_reduce_force_candidate(candidate);
  cubert_status st = cubert_op_reduce(cts_client, op, &in->t, axis, keep_dim, &out.t);
  cubert_ops_reduce_force_candidate(-1);
  if (st && cubert_status_code(st) == CUBERT_CODE_UNAVAILABLE && candidate >= 0) {
    cubert_status_free(st);
    drop(&out);
    return 0;
  }
  cr_assert(st == NULL, "reduce op %d axis %d: %s", (int)op, (int)axis, cubert_status_message(st));
  ASSERT_OK(cubert_client_sync(cts_client));
  void *got = malloc(out.elems * 4);
  cts_read(out.t.handle, got, out.elems * 4);
  const uint64_t n_out = elems_of(orank, oshape);
  for (uint64_t k = 0; k < n_out; ++k) {
    /* k over out's shape, row-major; the matching coordinates of in. */
    uint64_t oc[CUBERT_MAX_RANK] = {0}, ic[CUBERT_MAX_RANK] = {0}, rem = k;
    for (uint32_t d = orank; d-- > 0;) {
      oc[d] = rem % oshape[d];
      rem /= oshape[d];
    }
    uint64_t pos = out.t.offset;
    for (uint32_t d = 0; d < orank; ++d) pos += oc[d] * out.t.strides[d];
    if (axis != CUBERT_AXIS_ALL) {
      uint32_t od = 0;
      for (uint32_t d = 0; d < in->t.rank; ++d) {
        if (d == axis) {
          od += keep_dim ? 1 : 0;
          continue;
        }
        ic[d] = oc[od++];
      }
    }
    const ref r = reference(in, axis, ic);
    const char *what = "?";
    int ok = 1;
    double g = 0, want = 0;
    if (odt == CUBERT_DTYPE_I32) {
      g = ((int32_t *)got)[pos];
    } else {
      g = ((float *)got)[pos];
    }
    switch (op) {
      case CUBERT_REDUCE_SUM:
        what = "sum";
        if (in->t.dtype == CUBERT_DTYPE_I32) {
          want = (int32_t)r.wrap;
          ok = g == want;
        } else {
          want = r.sum;
          ok = isnan(want) ? isnan(g) != 0 : fabs(g - want) <= 2e-6 * r.abs_sum + 1e-6;
        }
        break;
      case CUBERT_REDUCE_MEAN:
        what = "mean";
        want = r.mean;
        if (r.count == 0 || isnan(want))
          ok = isnan(g) != 0;
        else if (in->t.dtype == CUBERT_DTYPE_I32)
          ok = fabs(g - want) <= fabs(want) * 3e-7 + 1e-30; /* within about one f32 rounding */
        else
          ok = fabs(g - want) <= (2e-6 * r.abs_sum + 1e-6) / (double)r.count;
        break;
      case CUBERT_REDUCE_MAX:
      case CUBERT_REDUCE_MIN:
        what = op == CUBERT_REDUCE_MAX ? "max" : "min";
        want = r.best[op == CUBERT_REDUCE_MIN];
        ok = (isnan(want) && isnan(g)) || g == want;
        break;
      default:
        what = op == CUBERT_REDUCE_ARGMAX ? "argmax" : "argmin";
        want = (double)r.arg[op == CUBERT_REDUCE_ARGMIN];
        ok = g == want;
        break;
    }
    if (!ok)
      cr_assert_fail(
          "%s %s rank %u shape (%llu %llu %llu %llu) axis %d keep %d in-layout %s out-layout %s "
          "candidate %d: output %llu is %.9g, expected %.9g",
          what, cubert_dtype_name(in->t.dtype), in->t.rank, (unsigned long long)in->t.shape[0],
          (unsigned long long)in->t.shape[1], (unsigned long long)in->t.shape[2],
          (unsigned long long)in->t.shape[3], (int)axis, keep_dim, kind_names[0],
          kind_names[out_kind], candidate, (unsigned long long)k, g, want);
  }
  free(got);
  drop(&out);
  return 1;
}

static uint32_t candidate_count(void) {
  return ((const cubert_tune_set *)cubert_ops_reduce_tune_set())->candidate_count;
}

Test(ops_reduce, every_op_dtype_axis_and_layout_of_random_tensors) {
  static const uint64_t shapes[][4] = {
      {37, 1, 1, 1}, {1000, 1, 1, 1}, {5, 3, 1, 1}, {1, 130, 1, 1}, {17, 33, 1, 1},
      {3, 1, 7, 1},  {4, 5, 6, 1},    {2, 3, 5, 7}, {3, 1, 9, 2},   {70, 3, 1, 300},
  };
  static const uint32_t ranks[] = {1, 1, 2, 2, 2, 3, 3, 4, 4, 4};
  int cases = 0, counter = 0;
  for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s) {
    for (int kind = 0; kind < KIND_COUNT; ++kind) {
      for (int dti = 0; dti < 2; ++dti) {
        const cubert_dtype dt = dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32;
        view in = make_view(ranks[s], shapes[s], dt, kind);
        fill(&in, (int)(rnd() % 2));
        upload(&in);
        for (uint32_t a = 0; a <= ranks[s]; ++a) {
          const uint32_t axis = a == ranks[s] ? CUBERT_AXIS_ALL : a;
          for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op) {
            /* Each case runs one geometry, in turn, skipping those that do not fit. */
            int ran = 0;
            for (uint32_t tries = 0; tries < candidate_count() && !ran; ++tries, ++counter)
              ran = check_case((cubert_reduce_op)op, &in, axis, counter % 2,
                               (counter / 2) % KIND_COUNT, (int)(counter % candidate_count()));
            cr_assert(ran, "no candidate fits");
            ++cases;
          }
        }
        drop(&in);
      }
    }
  }
  cr_assert_gt(cases, 1000);
}

Test(ops_reduce, tuned_choice_on_tensors_of_every_kind) {
  static const uint64_t shape[3] = {9, 40, 23};
  for (int kind = 0; kind < KIND_COUNT; ++kind)
    for (int dti = 0; dti < 2; ++dti) {
      view in = make_view(3, shape, dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, kind);
      fill(&in, 0);
      upload(&in);
      for (uint32_t a = 0; a <= 3; ++a)
        for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op)
          check_case((cubert_reduce_op)op, &in, a == 3 ? CUBERT_AXIS_ALL : a, (int)(a % 2), PITCHED,
                     -1);
      drop(&in);
    }
}

/* Long axes with few outputs (the split paths) and many outputs, every geometry that fits. */
Test(ops_reduce, large_reductions_in_every_geometry) {
  static const uint64_t shapes[][2] = {{3, 50001}, {5001, 100}, {1, 1000003}, {300, 301}};
  static const uint32_t axes[] = {1, 0, CUBERT_AXIS_ALL, 0};
  for (size_t s = 0; s < 4; ++s)
    for (int dti = 0; dti < 2; ++dti) {
      view in = make_view(2, shapes[s], dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, ROW_MAJOR);
      fill(&in, dti ? 2 : 1);
      upload(&in);
      int ran = 0;
      for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op)
        for (uint32_t c = 0; c < candidate_count(); ++c)
          ran += check_case((cubert_reduce_op)op, &in, axes[s], 0, ROW_MAJOR, (int)c);
      cr_assert_geq(ran, 2 * CUBERT_REDUCE_COUNT_, "shape %zu ran %d geometries", s, ran);
      drop(&in);
    }
}

/* The eight-rows-per-step candidates (outer_rows8_*): their fast path needs a full block of
   8 * units contiguous columns, which the shapes above are too narrow for. 4100 columns: one full
   block of 4096 (d512) and a block cut short (the clamped path); 2503 rows: splits of 512, 1024
   and 2048 rows whose last one is no multiple of eight. Sums (f32, i32) and argmax (index
   order across the eight rows of a step). */
Test(ops_reduce, rows8_candidates_on_a_full_block) {
  const uint64_t shape[2] = {2503, 4100};
  const cubert_tune_set *set = cubert_ops_reduce_tune_set();
  for (int dti = 0; dti < 2; ++dti) {
    view in = make_view(2, shape, dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, ROW_MAJOR);
    fill(&in, 1);
    upload(&in);
    int ran = 0;
    for (uint32_t c = 0; c < candidate_count(); ++c) {
      if (strncmp(set->candidates[c].name, "outer_rows8_", 12) != 0) continue;
      ran += check_case(CUBERT_REDUCE_SUM, &in, 0, 0, ROW_MAJOR, (int)c);
      ran += check_case(CUBERT_REDUCE_ARGMAX, &in, 0, 0, ROW_MAJOR, (int)c);
    }
    /* GPUs may refuse 512 and 1024 units per cube for this kernel (its unit limit from the
       driver's register count: 256 on an H200), so none of these runs there; elsewhere they
       must. */
    if (cubert_client_properties(cts_client)->type != CUBERT_DEVICE_TYPE_OPENCL_GPU)
      cr_assert_geq(ran, 2, "%d runs", ran);
    drop(&in);
  }
}

Test(ops_reduce, argmax_ties_and_nan_resolve_to_the_lowest_index) {
  const uint64_t n = 300007;
  const uint64_t shape[1] = {n};
  view in = make_view(1, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  float *x = in.host;
  for (uint64_t i = 0; i < n; ++i) x[i] = 1.0f; /* all equal: index 0 */
  x[200000] = x[250000] = 2.0f;                 /* two maxima: the first */
  x[100001] = x[299999] = -5.0f;                /* two minima */
  upload(&in);
  for (uint32_t c = 0; c < candidate_count(); ++c) {
    for (int op = CUBERT_REDUCE_ARGMAX; op <= CUBERT_REDUCE_ARGMIN; ++op) {
      view out = make_view(0, shape, CUBERT_DTYPE_I32, ROW_MAJOR);
      upload(&out);
      cubert_ops_reduce_force_candidate((int)c);
      cubert_status st = cubert_op_reduce(cts_client, (cubert_reduce_op)op, &in.t, 0, 0, &out.t);
      cubert_ops_reduce_force_candidate(-1);
      if (st) {
        cr_assert_eq(cubert_status_code(st), CUBERT_CODE_UNAVAILABLE, "%s",
                     cubert_status_message(st));
        cubert_status_free(st);
      } else {
        int32_t got = -1;
        cts_read(out.t.handle, &got, 4);
        cr_assert_eq(got, op == CUBERT_REDUCE_ARGMAX ? 200000 : 100001, "candidate %u: %d", c, got);
      }
      drop(&out);
    }
  }
  drop(&in);
  /* NaN: the first NaN wins both argmax and argmin; max and min are NaN. */
  view nan_in = make_view(1, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  x = nan_in.host;
  for (uint64_t i = 0; i < n; ++i) x[i] = (float)(i % 1000);
  x[123457] = NAN;
  x[200001] = NAN;
  upload(&nan_in);
  for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op)
    for (uint32_t c = 0; c < candidate_count(); ++c)
      check_case((cubert_reduce_op)op, &nan_in, 0, 1, ROW_MAJOR, (int)c);
  drop(&nan_in);
}

/* A classifier's argmax: 61 rows of 10, reduced along the contiguous axis, through every
   candidate that fits; the rowwise form (a unit per row) must be one of them. Ties give the
   lowest index, the first NaN wins. */
Test(ops_reduce, short_rows_argmax_on_every_candidate) {
  enum { ROWS = 61, C = 10 };
  const uint64_t shape[2] = {ROWS, C};
  const cubert_tune_set *set = cubert_ops_reduce_tune_set();
  view in = make_view(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  float *x = in.host;
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < C; ++j) x[r * C + j] = (float)((r * 7 + j * 3) % C);
  x[4 * C + 2] = x[4 * C + 8] = 50.0f; /* row 4: a tie, argmax 2 */
  x[9 * C + 6] = NAN;                  /* row 9: NaN wins, 6 */
  x[9 * C + 7] = NAN;
  upload(&in);
  int rowwise_ran = 0;
  for (uint32_t c = 0; c < candidate_count(); ++c) {
    const uint64_t oshape[1] = {ROWS};
    view out = make_view(1, oshape, CUBERT_DTYPE_I32, ROW_MAJOR);
    upload(&out);
    cubert_ops_reduce_force_candidate((int)c);
    cubert_status st = cubert_op_reduce(cts_client, CUBERT_REDUCE_ARGMAX, &in.t, 1, 0, &out.t);
    cubert_ops_reduce_force_candidate(-1);
    if (st) {
      cr_assert_eq(cubert_status_code(st), CUBERT_CODE_UNAVAILABLE, "%s",
                   cubert_status_message(st));
      cubert_status_free(st);
      drop(&out);
      continue;
    }
    rowwise_ran += strncmp(set->candidates[c].name, "rowwise_", 8) == 0;
    int32_t got[ROWS];
    cts_read(out.t.handle, got, sizeof got);
    for (int r = 0; r < ROWS; ++r) {
      int32_t want = 0;
      for (int j = 1; j < C; ++j)
        if (!isnan(x[r * C + want]) && (isnan(x[r * C + j]) || x[r * C + j] > x[r * C + want]))
          want = j;
      cr_assert_eq(got[r], want, "candidate %s, row %d: %d, expected %d", set->candidates[c].name,
                   r, got[r], want);
    }
    cr_assert_eq(got[4], 2, "the tie");
    cr_assert_eq(got[9], 6, "the first NaN");
    drop(&out);
  }
  cr_assert_eq(rowwise_ran, 1, "the rowwise form ran");
  drop(&in);
}

/* The rowwise form for every op, f32 and i32 (ties, wrapping sums), in the layouts that keep
   the reduced axis the fastest moving one (the transposed one does not: not its key), with
   61 rows (no multiple of its 64 units) and rows of 1, 10 and 128 elements (its limit). */
Test(ops_reduce, rowwise_form_for_every_op_and_layout) {
  const cubert_tune_set *set = cubert_ops_reduce_tune_set();
  int rowwise = -1;
  for (uint32_t c = 0; c < candidate_count(); ++c)
    if (strncmp(set->candidates[c].name, "rowwise_", 8) == 0) rowwise = (int)c;
  cr_assert_geq(rowwise, 0, "the set has a rowwise form");
  static const uint64_t lengths[] = {1, 10, 128};
  static const int kinds[] = {ROW_MAJOR, PITCHED, OFFSET, STRIDED};
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l)
    for (int dti = 0; dti < 2; ++dti)
      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        const uint64_t shape[2] = {61, lengths[l]};
        view in = make_view(2, shape, dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, kinds[k]);
        fill(&in, dti ? 2 : 1);
        upload(&in);
        for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op)
          cr_assert(check_case((cubert_reduce_op)op, &in, 1, 0, ROW_MAJOR, rowwise),
                    "%s, op %d, rows of %llu: the rowwise form ran", kind_names[kinds[k]], op,
                    (unsigned long long)lengths[l]);
        drop(&in);
      }
}

Test(ops_reduce, nan_in_rows_and_columns) {
  const uint64_t shape[2] = {33, 65};
  view in = make_view(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  fill(&in, 1);
  float *x = in.host;
  x[5 * 65 + 7] = NAN;
  x[5 * 65 + 3] = NAN;
  x[20 * 65 + 64] = NAN;
  upload(&in);
  for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op)
    for (uint32_t axis = 0; axis < 2; ++axis)
      for (uint32_t c = 0; c < candidate_count(); ++c)
        check_case((cubert_reduce_op)op, &in, axis, 0, ROW_MAJOR, (int)c);
  drop(&in);
}

Test(ops_reduce, mean_of_i32_is_exact_and_does_not_overflow) {
  const uint64_t shape[2] = {4, 1000};
  view in = make_view(2, shape, CUBERT_DTYPE_I32, ROW_MAJOR);
  int32_t *x = in.host;
  for (uint64_t i = 0; i < 4000; ++i) x[i] = INT32_MAX - (int32_t)(i % 2); /* sums pass 2^31 */
  for (uint64_t i = 0; i < 1000; ++i) x[i] = (int32_t)i * 3;               /* mean 1498.5 */
  upload(&in);
  for (uint32_t c = 0; c < candidate_count(); ++c) {
    const uint64_t oshape[1] = {4};
    view out = make_view(1, oshape, CUBERT_DTYPE_F32, ROW_MAJOR);
    upload(&out);
    cubert_ops_reduce_force_candidate((int)c);
    cubert_status st = cubert_op_reduce(cts_client, CUBERT_REDUCE_MEAN, &in.t, 1, 0, &out.t);
    cubert_ops_reduce_force_candidate(-1);
    if (st) {
      cubert_status_free(st);
    } else {
      float got[4];
      cts_read(out.t.handle, got, sizeof got);
      cr_assert_eq(got[0], 1498.5f, "candidate %u: %.9g", c, (double)got[0]);
      for (int r = 1; r < 4; ++r)
        cr_assert_eq(got[r], (float)(INT32_MAX - 0.5), "candidate %u row %d: %.9g", c, r,
                     (double)got[r]);
    }
    drop(&out);
  }
  drop(&in);
}

Test(ops_reduce, empty_and_size_one_dimensions) {
  /* Reducing an empty axis: sum 0, mean NaN, the others an error naming the axis. */
  const uint64_t shape[2] = {3, 0};
  view in = make_view(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  upload(&in);
  check_case(CUBERT_REDUCE_SUM, &in, 1, 0, ROW_MAJOR, -1);
  check_case(CUBERT_REDUCE_MEAN, &in, 1, 1, ROW_MAJOR, -1);
  check_case(CUBERT_REDUCE_SUM, &in, CUBERT_AXIS_ALL, 0, ROW_MAJOR, -1);
  check_case(CUBERT_REDUCE_MEAN, &in, CUBERT_AXIS_ALL, 1, ROW_MAJOR, -1);
  check_case(CUBERT_REDUCE_MAX, &in, 0, 0, ROW_MAJOR, -1); /* output empty: a no-op */
  const uint64_t oshape[1] = {3};
  view out = make_view(1, oshape, CUBERT_DTYPE_F32, ROW_MAJOR);
  upload(&out);
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_MAX, &in.t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "max over axis 1 of in (in.shape[1]), 0 elements long");
  out.t.dtype = CUBERT_DTYPE_I32;
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_ARGMIN, &in.t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT,
              "argmin over axis 1 of in (in.shape[1]), 0 elements long");
  drop(&out);
  drop(&in);
  /* Rank 0 and all-ones shapes. */
  const uint64_t ones[3] = {1, 1, 1};
  for (int dti = 0; dti < 2; ++dti) {
    view s = make_view(0, ones, dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, ROW_MAJOR);
    fill(&s, 0);
    upload(&s);
    view o = make_view(3, ones, dti ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32, OFFSET);
    fill(&o, 0);
    upload(&o);
    for (int op = 0; op < CUBERT_REDUCE_COUNT_; ++op) {
      check_case((cubert_reduce_op)op, &s, CUBERT_AXIS_ALL, 0, ROW_MAJOR, -1);
      for (uint32_t a = 0; a < 3; ++a) check_case((cubert_reduce_op)op, &o, a, a % 2, OFFSET, -1);
    }
    drop(&s);
    drop(&o);
  }
}

Test(ops_reduce, errors_name_the_operand_axis_and_mismatch) {
  const uint64_t shape[2] = {4, 6}, oshape[1] = {4}, bad[1] = {6};
  view in = make_view(2, shape, CUBERT_DTYPE_F32, ROW_MAJOR);
  view out = make_view(1, oshape, CUBERT_DTYPE_F32, ROW_MAJOR);
  view wrong = make_view(1, bad, CUBERT_DTYPE_F32, ROW_MAJOR);
  upload(&in);
  upload(&out);
  upload(&wrong);
  ASSERT_OK(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 1, 0, &out.t));
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 1, 0, &wrong.t),
              CUBERT_CODE_INVALID_ARGUMENT, "out.shape[0] is 6 but reducing axis 1");
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 1, 1, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "out.rank is 1 but reducing axis 1 with keep_dim 1");
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 2, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "axis is 2 but in has rank 2");
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_ARGMAX, &in.t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "out.dtype is f32; this operation takes i32");
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, CUBERT_AXIS_ALL, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "out.rank is 1 but reducing every axis");
  ASSERT_CODE(cubert_op_reduce(cts_client, (cubert_reduce_op)17, &in.t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "not a cubert_reduce_op");
  cubert_tensor t = in.t;
  t.dtype = CUBERT_DTYPE_F64;
  t.elem_size = 8;
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "in.dtype is f64");
  t = in.t;
  t.offset = 1; /* reaches past the buffer */
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &t, 1, 0, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "in reaches byte");
  cubert_tensor o = out.t;
  o.strides[0] = 0;
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 1, 0, &o),
              CUBERT_CODE_INVALID_ARGUMENT, "out.strides[0] is 0");
  o = out.t;
  o.dtype = CUBERT_DTYPE_I32; /* sum keeps in's dtype */
  ASSERT_CODE(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &in.t, 1, 0, &o),
              CUBERT_CODE_INVALID_ARGUMENT, "out.dtype is i32; this operation takes f32");
  drop(&in);
  drop(&out);
  drop(&wrong);
}

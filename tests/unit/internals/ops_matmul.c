/* cubert_op_matmul (cubert/ops.h) against a double-precision host product: odd, prime and
   larger sizes, K = 0, empty M or N, row-major, column-major, transposed and pitched views with
   offsets, batches with a shared (stride 0 or size 1) operand, alpha and beta, f64, argument
   errors, and every tuning candidate (each kernel launched directly) against the op. */
#include <math.h>

#include "cts.h"
#include "ops/matmul.h"

TestSuite(ops_matmul, .init = cts_setup, .fini = cts_teardown);

typedef enum { ROW = 0, COL = 1 } mm_layout;

/* One operand: a view of logical shape (batch, rows, cols) (batch 0: rank 2) over a buffer of
   `elems` elements, with `pad` extra elements per row (row-major) or column (column-major), a
   leading offset, and optionally a shared batch (stride 0, or shape 1 with share_one). */
typedef struct mm_operand {
  cubert_tensor t;
  uint64_t elems;
  void *host; /* elems elements of the dtype */
} mm_operand;

static uint64_t mm_rng = 0x9e3779b97f4a7c15ull;
static double mm_rand(void) {
  mm_rng = mm_rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(mm_rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static void mm_make(mm_operand *o, cubert_dtype dtype, uint64_t batch, uint64_t rows, uint64_t cols,
                    mm_layout layout, uint64_t pad, uint64_t offset, int share) {
  memset(o, 0, sizeof *o);
  const uint64_t es = cubert_dtype_size(dtype);
  cubert_tensor *t = &o->t;
  t->dtype = dtype;
  t->elem_size = es;
  t->offset = offset;
  t->rank = batch ? 3 : 2;
  const uint32_t r = t->rank - 2;
  t->shape[r] = rows;
  t->shape[r + 1] = cols;
  uint64_t matrix;
  if (layout == ROW) {
    t->strides[r] = cols + pad;
    t->strides[r + 1] = 1;
    matrix = rows * (cols + pad);
  } else {
    t->strides[r] = 1;
    t->strides[r + 1] = rows + pad;
    matrix = cols * (rows + pad);
  }
  if (batch) {
    t->shape[0] = share == 2 ? 1 : batch;
    t->strides[0] = share ? 0 : matrix + 3;
  }
  const uint64_t copies = batch && !share ? batch : 1;
  o->elems = offset + copies * (matrix + 3) + 1;
  o->host = malloc(o->elems * es);
  cr_assert_not_null(o->host);
  for (uint64_t i = 0; i < o->elems; ++i) {
    const double v = mm_rand();
    if (dtype == CUBERT_DTYPE_F64)
      ((double *)o->host)[i] = v;
    else
      ((float *)o->host)[i] = (float)v;
  }
  t->handle = cts_buffer(o->host, o->elems * es);
}

static double mm_get(const mm_operand *o, const void *data, uint64_t bt, uint64_t i, uint64_t j) {
  const cubert_tensor *t = &o->t;
  const uint32_t r = t->rank - 2;
  uint64_t at = t->offset + i * t->strides[r] + j * t->strides[r + 1];
  if (t->rank == 3 && t->shape[0] > 1) at += bt * t->strides[0];
  return t->dtype == CUBERT_DTYPE_F64 ? ((const double *)data)[at] : ((const float *)data)[at];
}

static void mm_free(mm_operand *o) {
  cubert_handle_release(o->t.handle);
  free(o->host);
}

/* Checks c (read back) against alpha * a b + beta * c0 within the bound of cubert/ops.h, and
   that every element of c's buffer outside the view kept its value. */
static void mm_check(const mm_operand *a, const mm_operand *b, const mm_operand *c, const void *got,
                     double alpha, double beta, const char *what) {
  const cubert_tensor *ct = &c->t;
  const uint32_t rc = ct->rank - 2;
  const uint64_t batches = ct->rank == 3 ? ct->shape[0] : 1, m = ct->shape[rc],
                 n = ct->shape[rc + 1], k = a->t.shape[a->t.rank - 1];
  const int f64 = ct->dtype == CUBERT_DTYPE_F64;
  const double eps = f64 ? ldexp(1.0, -50) : ldexp(1.0, -22);
  const uint64_t es = cubert_dtype_size(ct->dtype);
  unsigned char *inside = calloc(c->elems, 1);
  for (uint64_t bt = 0; bt < batches; ++bt)
    for (uint64_t i = 0; i < m; ++i)
      for (uint64_t j = 0; j < n; ++j) {
        double exact = 0, mag = 0;
        for (uint64_t kk = 0; kk < k; ++kk) {
          const double p = mm_get(a, a->host, bt, i, kk) * mm_get(b, b->host, bt, kk, j);
          exact += p;
          mag += fabs(p);
        }
        const double c0 = beta != 0 ? mm_get(c, c->host, bt, i, j) : 0;
        const double want = alpha * exact + beta * c0;
        const double bound =
            (double)(k + 2) * eps * (fabs(alpha) * mag + fabs(beta * c0)) + (f64 ? 1e-300 : 1e-30);
        const double v = mm_get(c, got, bt, i, j);
        cr_assert(fabs(v - want) <= bound,
                  "%s: c[%llu][%llu][%llu] is %.9g, expected %.9g (bound %.3g, M %llu N %llu K "
                  "%llu)",
                  what, (unsigned long long)bt, (unsigned long long)i, (unsigned long long)j, v,
                  want, bound, (unsigned long long)m, (unsigned long long)n, (unsigned long long)k);
        uint64_t at = ct->offset + i * ct->strides[rc] + j * ct->strides[rc + 1] +
                      (ct->rank == 3 ? bt * ct->strides[0] : 0);
        inside[at] = 1;
      }
  for (uint64_t e = 0; e < c->elems; ++e)
    if (!inside[e])
      cr_assert(memcmp((const char *)got + e * es, (const char *)c->host + e * es, es) == 0,
                "%s: element %llu of c's buffer, outside the view, changed", what,
                (unsigned long long)e);
  free(inside);
}

typedef struct mm_case {
  uint64_t batch, m, n, k;
  mm_layout la, lb, lc;
  uint64_t pad, offset;
  int share_a, share_b; /* 1: batch stride 0; 2: batch of 1; 3 (b only): rank 2 */
  double alpha, beta;
  cubert_dtype dtype;
} mm_case;

/* Set while a test forces one tuning candidate: mm_run then skips products the candidate does
   not fit (UNAVAILABLE) and counts the ones it ran in mm_ran. */
static int mm_forced = 0;
static int mm_ran = 0;

static void mm_run(const mm_case *cs) {
  char what[160];
  snprintf(what, sizeof what,
           "%s batch %llu M %llu N %llu K %llu layouts %d%d%d pad %llu share %d%d alpha %g "
           "beta %g",
           cubert_dtype_name(cs->dtype), (unsigned long long)cs->batch, (unsigned long long)cs->m,
           (unsigned long long)cs->n, (unsigned long long)cs->k, cs->la, cs->lb, cs->lc,
           (unsigned long long)cs->pad, cs->share_a, cs->share_b, cs->alpha, cs->beta);
  mm_operand a, b, c;
  mm_make(&a, cs->dtype, cs->batch, cs->m, cs->k, cs->la, cs->pad, cs->offset, cs->share_a);
  mm_make(&b, cs->dtype, cs->share_b == 3 ? 0 : cs->batch, cs->k, cs->n, cs->lb, cs->pad + 1,
          cs->offset * 2, cs->share_b == 3 ? 0 : cs->share_b);
  mm_make(&c, cs->dtype, cs->batch, cs->m, cs->n, cs->lc, cs->pad + 2, cs->offset + 1, 0);
  if (cs->beta == 0) {
    /* beta == 0 must not read c: NaN there must not reach the result. */
    for (uint64_t e = 0; e < c.elems; ++e) {
      if (cs->dtype == CUBERT_DTYPE_F64)
        ((double *)c.host)[e] = NAN;
      else
        ((float *)c.host)[e] = NAN;
    }
    const size_t bytes = c.elems * c.t.elem_size;
    ASSERT_OK(cubert_client_write(cts_client, c.t.handle, 0, c.host, bytes));
  }
  cubert_status st = cubert_op_matmul(cts_client, cs->alpha, &a.t, &b.t, cs->beta, &c.t);
  if (mm_forced && st && cubert_status_code(st) == CUBERT_CODE_UNAVAILABLE) {
    /* The forced candidate does not fit this product (cubert_ops_matmul_force_candidate). */
    cubert_status_free(st);
    mm_free(&a);
    mm_free(&b);
    mm_free(&c);
    return;
  }
  cr_assert(st == NULL, "%s: %s", what, cubert_status_message(st));
  ++mm_ran;
  void *got = malloc(c.elems * c.t.elem_size);
  cts_read(c.t.handle, got, c.elems * c.t.elem_size);
  mm_check(&a, &b, &c, got, cs->alpha, cs->beta, what);
  free(got);
  mm_free(&a);
  mm_free(&b);
  mm_free(&c);
}

static const uint64_t mm_sizes[][3] = {
    {1, 1, 1},     {7, 13, 5},   {2, 3, 1},    {67, 129, 31}, {16, 16, 16},   {33, 65, 17},
    {130, 70, 37}, {1, 200, 19}, {150, 1, 23}, {64, 64, 64},  {129, 67, 300},
};

Test(ops_matmul, sizes_and_layouts_f32) {
  for (size_t s = 0; s < sizeof mm_sizes / sizeof mm_sizes[0]; ++s)
    for (int layouts = 0; layouts < 8; ++layouts) {
      const mm_case cs = {.m = mm_sizes[s][0],
                          .n = mm_sizes[s][1],
                          .k = mm_sizes[s][2],
                          .la = (mm_layout)(layouts & 1),
                          .lb = (mm_layout)((layouts >> 1) & 1),
                          .lc = (mm_layout)((layouts >> 2) & 1),
                          .pad = (uint64_t)(s % 3) * 3,
                          .offset = (uint64_t)s,
                          .alpha = 1.0,
                          .dtype = CUBERT_DTYPE_F32};
      mm_run(&cs);
    }
}

Test(ops_matmul, large_square_and_transposed) {
  for (int layouts = 0; layouts < 4; ++layouts) {
    const mm_case cs = {.m = 256,
                        .n = 256,
                        .k = 256,
                        .la = (mm_layout)(layouts & 1),
                        .lb = (mm_layout)(layouts >> 1),
                        .alpha = 1.0,
                        .dtype = CUBERT_DTYPE_F32};
    mm_run(&cs);
  }
  const mm_case odd = {.m = 257,
                       .n = 255,
                       .k = 131,
                       .pad = 5,
                       .offset = 9,
                       .alpha = 0.5,
                       .beta = -2.0,
                       .dtype = CUBERT_DTYPE_F32};
  mm_run(&odd);
}

Test(ops_matmul, alpha_beta_and_nan_in_c) {
  const double ab[][2] = {{1.0, 0.0}, {-1.5, 0.0}, {2.0, 1.0}, {0.5, -0.25}, {0.0, 3.0}};
  for (size_t i = 0; i < sizeof ab / sizeof ab[0]; ++i) {
    const mm_case cs = {.m = 37,
                        .n = 70,
                        .k = 45,
                        .pad = 1,
                        .offset = 3,
                        .alpha = ab[i][0],
                        .beta = ab[i][1],
                        .dtype = CUBERT_DTYPE_F32};
    mm_run(&cs);
    const mm_case tiny = {
        .m = 3, .n = 2, .k = 5, .alpha = ab[i][0], .beta = ab[i][1], .dtype = CUBERT_DTYPE_F32};
    mm_run(&tiny);
  }
}

Test(ops_matmul, k_zero_and_empty) {
  /* K == 0: c = beta * c (and 0 with beta == 0, whatever c held). */
  const mm_case k0 = {.m = 5, .n = 7, .k = 0, .alpha = 1, .beta = 2, .dtype = CUBERT_DTYPE_F32};
  mm_run(&k0);
  const mm_case k0z = {.m = 5, .n = 7, .k = 0, .alpha = 1, .beta = 0, .dtype = CUBERT_DTYPE_F32};
  mm_run(&k0z);
  const mm_case k0b = {
      .batch = 2, .m = 3, .n = 4, .k = 0, .alpha = 1, .beta = -1, .dtype = CUBERT_DTYPE_F32};
  mm_run(&k0b);
  /* M, N or the batch 0: nothing is written (c's buffer keeps every value). */
  const uint64_t empty[][4] = {{0, 0, 5, 3}, {0, 4, 0, 3}, {2, 0, 0, 0}};
  for (int i = 0; i < 3; ++i) {
    const mm_case cs = {.batch = empty[i][0],
                        .m = empty[i][1],
                        .n = empty[i][2],
                        .k = empty[i][3],
                        .alpha = 1,
                        .beta = 0.5,
                        .dtype = CUBERT_DTYPE_F32};
    mm_run(&cs);
  }
}

Test(ops_matmul, batched_with_shared_operands) {
  const mm_case cases[] = {
      {.batch = 3, .m = 19, .n = 23, .k = 11, .alpha = 1, .dtype = CUBERT_DTYPE_F32},
      {.batch = 4,
       .m = 70,
       .n = 33,
       .k = 40,
       .share_a = 1,
       .lb = COL,
       .pad = 2,
       .alpha = 1,
       .beta = 1,
       .dtype = CUBERT_DTYPE_F32},
      {.batch = 2,
       .m = 65,
       .n = 130,
       .k = 17,
       .share_b = 2,
       .la = COL,
       .offset = 5,
       .alpha = 2,
       .dtype = CUBERT_DTYPE_F32},
      {.batch = 5,
       .m = 8,
       .n = 9,
       .k = 70,
       .share_b = 3,
       .lc = COL,
       .alpha = 1,
       .beta = 0.5,
       .dtype = CUBERT_DTYPE_F32},
      {.batch = 1, .m = 31, .n = 17, .k = 9, .share_a = 2, .alpha = 1, .dtype = CUBERT_DTYPE_F32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) mm_run(&cases[i]);
}

Test(ops_matmul, f64_where_the_device_has_it) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  if (!(p->features & CUBERT_FEATURE_FP64)) {
    mm_operand a, b, c;
    mm_make(&a, CUBERT_DTYPE_F64, 0, 2, 2, ROW, 0, 0, 0);
    mm_make(&b, CUBERT_DTYPE_F64, 0, 2, 2, ROW, 0, 0, 0);
    mm_make(&c, CUBERT_DTYPE_F64, 0, 2, 2, ROW, 0, 0, 0);
    ASSERT_CODE(cubert_op_matmul(cts_client, 1, &a.t, &b.t, 0, &c.t), CUBERT_CODE_UNAVAILABLE,
                "f64");
    mm_free(&a);
    mm_free(&b);
    mm_free(&c);
    cr_skip_test("the device has no fp64 (UNAVAILABLE checked)");
  }
  const mm_case cases[] = {
      {.m = 7, .n = 13, .k = 5, .alpha = 1, .dtype = CUBERT_DTYPE_F64},
      {.m = 67, .n = 129, .k = 31, .la = COL, .pad = 1, .alpha = 1, .dtype = CUBERT_DTYPE_F64},
      {.m = 150,
       .n = 140,
       .k = 100,
       .lb = COL,
       .alpha = -1,
       .beta = 0.5,
       .dtype = CUBERT_DTYPE_F64},
      {.batch = 3, .m = 20, .n = 30, .k = 0, .alpha = 1, .beta = 3, .dtype = CUBERT_DTYPE_F64},
      {.batch = 3, .m = 40, .n = 33, .k = 21, .share_a = 1, .alpha = 1, .dtype = CUBERT_DTYPE_F64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) mm_run(&cases[i]);
}

Test(ops_matmul, argument_errors_name_operand_and_axis) {
  mm_operand a, b, c, c3, ai;
  mm_make(&a, CUBERT_DTYPE_F32, 0, 4, 7, ROW, 0, 0, 0);
  mm_make(&b, CUBERT_DTYPE_F32, 0, 8, 5, ROW, 0, 0, 0);
  mm_make(&c, CUBERT_DTYPE_F32, 0, 4, 5, ROW, 0, 0, 0);
  mm_make(&c3, CUBERT_DTYPE_F32, 2, 4, 5, ROW, 0, 0, 0);
  mm_make(&ai, CUBERT_DTYPE_F32, 0, 4, 8, ROW, 0, 0, 0);
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &a.t, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a.shape[1] is 7 but b.shape[0] is 8");
  /* rank-2 a and b with a batched c: both shared by every batch (valid) */
  ASSERT_OK(cubert_op_matmul(cts_client, 1, &ai.t, &b.t, 0, &c3.t));
  cubert_tensor bad = c.t;
  bad.shape[0] = 3;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, &b.t, 0, &bad), CUBERT_CODE_INVALID_ARGUMENT,
              "c.shape[0] is 3 but a.shape[0] is 4");
  bad = c.t;
  bad.shape[1] = 4;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, &b.t, 0, &bad), CUBERT_CODE_INVALID_ARGUMENT,
              "c.shape[1] is 4 but b.shape[1] is 5");
  bad = ai.t;
  bad.rank = 1;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &bad, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a has rank 1");
  bad = ai.t;
  bad.rank = 4;
  bad.shape[2] = 1;
  bad.shape[3] = 1;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &bad, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a has rank 4");
  bad = ai.t;
  bad.dtype = CUBERT_DTYPE_I32;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &bad, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a.dtype is i32");
  bad = ai.t;
  bad.dtype = CUBERT_DTYPE_NONE;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &bad, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a.dtype");
  /* a batched a with a rank-2 c */
  mm_operand a3;
  mm_make(&a3, CUBERT_DTYPE_F32, 2, 4, 8, ROW, 0, 0, 0);
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &a3.t, &b.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a has rank 3 (batched) but c has rank 2");
  /* batch mismatch */
  mm_operand c4;
  mm_make(&c4, CUBERT_DTYPE_F32, 3, 4, 5, ROW, 0, 0, 0);
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &a3.t, &b.t, 0, &c4.t), CUBERT_CODE_INVALID_ARGUMENT,
              "a.shape[0] is 2 but c.shape[0] is 3");
  /* an output that broadcasts */
  bad = c.t;
  bad.strides[0] = 0;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, &b.t, 0, &bad), CUBERT_CODE_INVALID_ARGUMENT,
              "c.strides[0] is 0");
  /* a view past its handle */
  bad = b.t;
  bad.offset = 10;
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, &bad, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "b reaches byte");
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, NULL, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "b is NULL");
  /* mixed dtypes */
  mm_operand b64;
  mm_make(&b64, CUBERT_DTYPE_F64, 0, 8, 5, ROW, 0, 0, 0);
  ASSERT_CODE(cubert_op_matmul(cts_client, 1, &ai.t, &b64.t, 0, &c.t), CUBERT_CODE_INVALID_ARGUMENT,
              "b is f64 but c is f32");
  mm_free(&a);
  mm_free(&b);
  mm_free(&c);
  mm_free(&c3);
  mm_free(&ai);
  mm_free(&a3);
  mm_free(&c4);
  mm_free(&b64);
}

/* Every candidate the tuner may pick, launched directly with the documented info words
   (kernels/matmul.cube.c), gives the op's result within the bound: whichever the tuner picks
   on a device, the result is the same up to rounding. */
static void mm_candidates_agree(cubert_dtype dtype, uint64_t m, uint64_t n, uint64_t k,
                                mm_layout la, mm_layout lb) {
  mm_operand a, b, c;
  mm_make(&a, dtype, 0, m, k, la, 1, 2, 0);
  mm_make(&b, dtype, 0, k, n, lb, 2, 1, 0);
  mm_make(&c, dtype, 0, m, n, ROW, 3, 4, 0);
  const uint64_t es = cubert_dtype_size(dtype);
  const size_t bytes = c.elems * es;
  const double alpha = 1.25;
  ASSERT_OK(cubert_op_matmul(cts_client, alpha, &a.t, &b.t, 0, &c.t));
  void *tuned = malloc(bytes), *got = malloc(bytes);
  cts_read(c.t.handle, tuned, bytes);
  mm_check(&a, &b, &c, tuned, alpha, 0, "tuned");
  const int f64 = dtype == CUBERT_DTYPE_F64;
  const cubert_kernel_def *defs[] = {
      f64 ? &cubert_kernel_matmul_simple_f64 : &cubert_kernel_matmul_simple_f32,
      f64 ? &cubert_kernel_matmul_tile32x32_f64 : &cubert_kernel_matmul_tile32x32_f32,
      f64 ? &cubert_kernel_matmul_tile64x64_f64 : &cubert_kernel_matmul_tile64x64_f32,
      f64 ? &cubert_kernel_matmul_tile128x64_f64 : &cubert_kernel_matmul_tile128x64_f32,
      f64 ? &cubert_kernel_matmul_tile128x256c_f64 : &cubert_kernel_matmul_tile128x256c_f32,
      f64 ? NULL : &cubert_kernel_matmul_vec8x32_f32,
      f64 ? NULL : &cubert_kernel_matmul_big128k8_f32,
      f64 ? NULL : &cubert_kernel_matmul_big128k16_f32,
      f64 ? NULL : &cubert_kernel_matmul_big128k16mn_f32};
  const uint32_t tm[] = {0, 32, 64, 128, 128, 0, 128, 128, 128},
                 tn[] = {0, 32, 64, 64, 256, 0, 128, 128, 128};
  uint64_t info[20] = {m,
                       n,
                       k,
                       1,
                       a.t.offset,
                       0,
                       a.t.strides[0],
                       a.t.strides[1],
                       b.t.offset,
                       0,
                       b.t.strides[0],
                       b.t.strides[1],
                       c.t.offset,
                       0,
                       c.t.strides[0],
                       c.t.strides[1],
                       0};
  if (f64) {
    memcpy(&info[17], &alpha, 8);
  } else {
    info[17] = cubert_kernel_info_f32((float)alpha);
  }
  cubert_handle *bufs[3] = {a.t.handle, b.t.handle, c.t.handle};
  const cubert_kernel_args args = {
      .buffers = bufs, .buffer_count = 3, .info = info, .info_count = 20};
  for (int i = 0; i < 9; ++i) {
    if (!defs[i]) continue;
    ASSERT_OK(cubert_client_write(cts_client, c.t.handle, 0, c.host, bytes));
    if (i == 0)
      ASSERT_OK(cubert_client_launch(cts_client, defs[i], cts_cubes(m * n, cts_dim()),
                                     cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args));
    else if (i == 5) /* one unit per 8 x 32 block */
      ASSERT_OK(cubert_client_launch(cts_client, defs[i],
                                     cts_cubes((m + 7) / 8 * ((n + 31) / 32), cts_dim()),
                                     cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args));
    else {
      cubert_status st =
          cubert_client_launch(cts_client, defs[i],
                               cubert_cube_count_new_3d((uint32_t)((n + tn[i] - 1) / tn[i]),
                                                        (uint32_t)((m + tm[i] - 1) / tm[i]), 1),
                               cubert_cube_dim_new_3d(16, 16, 1), &args);
      /* A tile beyond this device's shared memory or the kernel's unit limit (the f64 128x256
         tile needs 50 KB; NVIDIA gives 48) is refused before anything runs, as autotune's
         validity check refuses it: nothing to compare. */
      if (st && (cubert_status_code(st) == CUBERT_CODE_SHARED_MEMORY ||
                 cubert_status_code(st) == CUBERT_CODE_UNITS)) {
        cubert_status_free(st);
        continue;
      }
      cr_assert(st == NULL, "%s: %s", defs[i]->name, cubert_status_message(st));
    }
    cts_read(c.t.handle, got, bytes);
    mm_check(&a, &b, &c, got, alpha, 0, defs[i]->name);
  }
  free(tuned);
  free(got);
  mm_free(&a);
  mm_free(&b);
  mm_free(&c);
}

/* Every tuning candidate forced through cubert_op_matmul (cubert_ops_matmul_force_candidate):
   edges of every block shape (odd and prime sizes), transposed and column-major operands, a
   column-major C (strided stores), pitched views with offsets, batches with a shared operand,
   and beta (the scratch + beta pass). Each candidate that is valid on every device must run
   some of them, and vec8x32 must on a CPU behind OpenCL (where the tuner may pick it). */
Test(ops_matmul, every_candidate_forced_through_the_op) {
  static const mm_case cases[] = {
      {.m = 67, .n = 129, .k = 31, .alpha = 1.0},
      {.m = 130, .n = 70, .k = 37, .la = COL, .lb = COL, .pad = 3, .offset = 5, .alpha = 0.5},
      {.m = 64, .n = 96, .k = 64, .alpha = 1.0},
      {.m = 41, .n = 100, .k = 29, .la = COL, .lc = COL, .alpha = 2.0, .beta = 0.5},
      {.batch = 3,
       .m = 33,
       .n = 65,
       .k = 17,
       .lb = COL,
       .pad = 1,
       .offset = 2,
       .share_a = 1,
       .alpha = 1.0},
      {.batch = 2, .m = 24, .n = 64, .k = 40, .share_b = 2, .alpha = -1.0, .beta = 2.0},
      {.m = 8, .n = 32, .k = 1, .alpha = 1.0},
      {.m = 9, .n = 33, .k = 300, .pad = 2, .alpha = 1.0},
  };
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  for (int cand = 0; cand < 10; ++cand) {
    mm_forced = 1;
    mm_ran = 0;
    cubert_ops_matmul_force_candidate(cand);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
      mm_case cs = cases[i];
      cs.dtype = CUBERT_DTYPE_F32;
      mm_run(&cs);
    }
    cubert_ops_matmul_force_candidate(-1);
    mm_forced = 0;
    if (cand == 0 || cand == 3 || cand == 4 || cand >= 6 ||
        (cand == 5 && p->type == CUBERT_DEVICE_TYPE_OPENCL_CPU))
      cr_assert(mm_ran > 0, "candidate %d ran none of the products", cand);
  }
}

Test(ops_matmul, every_candidate_agrees_with_the_tuned_choice) {
  mm_candidates_agree(CUBERT_DTYPE_F32, 150, 97, 70, ROW, ROW);
  mm_candidates_agree(CUBERT_DTYPE_F32, 128, 128, 64, COL, COL);
  mm_candidates_agree(CUBERT_DTYPE_F32, 131, 67, 33, ROW, COL);
  mm_candidates_agree(CUBERT_DTYPE_F32, 256, 256, 40, ROW, ROW);
  if (cubert_client_properties(cts_client)->features & CUBERT_FEATURE_FP64)
    mm_candidates_agree(CUBERT_DTYPE_F64, 70, 130, 50, COL, ROW);
}

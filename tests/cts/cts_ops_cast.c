/* cubert_op_cast against a host reference: every pair of f32, f64, i32, u32 and f16, random
   values and the edges (NaN, infinities, -0.0, the integer limits and just past them, f16
   overflow, subnormals and round-to-even ties), dense and strided views, and errors. */
#include "cts_ops_util.h"

TestSuite(ops_cast, .init = cts_setup, .fini = cts_teardown);

static const cubert_dtype cast_types[5] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_F64, CUBERT_DTYPE_I32,
                                           CUBERT_DTYPE_U32, CUBERT_DTYPE_F16};

/* ---- host reference -------------------------------------------------------------------------- */

/* f16 bits -> double, exactly. */
static double f16_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp(m, -24);
  else
    v = ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
/* double -> f16 bits, rounding once to nearest even (a reference independent of the kernels':
   it searches the f16 values instead of shifting bits). */
static uint16_t double_to_f16(double x) {
  if (isnan(x)) return 0x7e00;
  const uint16_t sign = signbit(x) ? 0x8000 : 0;
  const double a = fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;
  /* Largest magnitude code whose value is <= a (codes are ordered like their values). */
  uint16_t lo = 0, hi = 0x7bff;
  while (lo < hi) {
    const uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
    if (f16_to_double(mid) <= a)
      lo = mid;
    else
      hi = (uint16_t)(mid - 1);
  }
  uint16_t r = lo;
  if (lo < 0x7bff) {
    const double below = f16_to_double(lo), above = f16_to_double((uint16_t)(lo + 1));
    if (a - below > above - a || (a - below == above - a && (lo & 1))) r = (uint16_t)(lo + 1);
  } else if (a > 65504.0) {
    r = 0x7bff; /* [65504, 65520) rounds down */
  }
  return sign | r;
}
static int64_t sat_rtz(double x, int64_t lo, int64_t hi) {
  if (isnan(x)) return 0;
  if (x <= (double)lo) return lo;
  if (x >= (double)hi) return hi;
  return (int64_t)trunc(x);
}

/* Value of element p of `t`-typed data as a double, and whether it is an integer type. */
static double load_as_double(cubert_dtype t, const uint8_t *p) {
  switch (t) {
    case CUBERT_DTYPE_F32: {
      float v;
      memcpy(&v, p, 4);
      return v;
    }
    case CUBERT_DTYPE_F64: {
      double v;
      memcpy(&v, p, 8);
      return v;
    }
    case CUBERT_DTYPE_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case CUBERT_DTYPE_U32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint16_t v;
      memcpy(&v, p, 2);
      return f16_to_double(v);
    }
  }
}

/* Writes the expected bits of casting element `src` (of type from) to `to` into want. */
static void reference(cubert_dtype from, cubert_dtype to, const uint8_t *src, uint8_t *want) {
  if ((from == CUBERT_DTYPE_I32 || from == CUBERT_DTYPE_U32) &&
      (to == CUBERT_DTYPE_I32 || to == CUBERT_DTYPE_U32)) {
    memcpy(want, src, 4); /* the bits, modulo 2^32 */
    return;
  }
  const double x = load_as_double(from, src); /* exact for every source type */
  switch (to) {
    case CUBERT_DTYPE_F32: {
      const float v = (float)x; /* one rounding: x is exact, and integers fit a double */
      memcpy(want, &v, 4);
      break;
    }
    case CUBERT_DTYPE_F64:
      memcpy(want, &x, 8);
      break;
    case CUBERT_DTYPE_I32: {
      const int32_t v = (int32_t)sat_rtz(x, INT32_MIN, INT32_MAX);
      memcpy(want, &v, 4);
      break;
    }
    case CUBERT_DTYPE_U32: {
      const uint32_t v = (uint32_t)sat_rtz(x, 0, UINT32_MAX);
      memcpy(want, &v, 4);
      break;
    }
    default: {
      const uint16_t v = double_to_f16(x);
      memcpy(want, &v, 2);
      break;
    }
  }
}

static int same_bits_or_nans(cubert_dtype t, const uint8_t *got, const uint8_t *want) {
  const uint64_t e = cubert_dtype_size(t);
  if (memcmp(got, want, e) == 0) return 1;
  if (t == CUBERT_DTYPE_I32 || t == CUBERT_DTYPE_U32) return 0;
  return isnan(load_as_double(t, got)) && isnan(load_as_double(t, want));
}

static void run_cast(ctv *in, ctv *out) {
  ASSERT_OK(cubert_op_cast(cts_client, &in->t, &out->t));
  uint8_t *got = ctv_download(out);
  const uint64_t n = ctv_count(&out->t), ei = in->t.elem_size, eo = out->t.elem_size;
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t want[8];
    const uint8_t *src = in->host + ctv_pos(&in->t, i) * ei;
    reference(in->t.dtype, out->t.dtype, src, want);
    const uint8_t *g = got + ctv_pos(&out->t, i) * eo;
    cr_assert(same_bits_or_nans(out->t.dtype, g, want),
              "cast %s -> %s element %llu: input %.17g gave %.17g, expected %.17g",
              cubert_dtype_name(in->t.dtype), cubert_dtype_name(out->t.dtype),
              (unsigned long long)i, load_as_double(in->t.dtype, src),
              load_as_double(out->t.dtype, g), load_as_double(out->t.dtype, want));
  }
  ctv_check_untouched(out, got);
  free(got);
}

/* Edge values of each source type, written over the start of the host copy. */
static void put_edges(ctv *v) {
  static const double fl[] = {NAN,
                              INFINITY,
                              -INFINITY,
                              -0.0,
                              0.0,
                              0.5,
                              -0.5,
                              -1.5,
                              2.5,
                              2147483520.0,
                              2147483647.0,
                              2147483648.0,
                              -2147483648.0,
                              -2147483904.0,
                              -2147483649.0,
                              4294967040.0,
                              4294967295.0,
                              4294967296.0,
                              1e20,
                              -1e20,
                              65504.0,
                              65519.0,
                              65520.0,
                              65536.0,
                              6.103515625e-05,         /* 2^-14, the smallest normal f16 */
                              6.0975551605224609e-05,  /* just below it: a subnormal */
                              5.9604644775390625e-08,  /* 2^-24, the smallest subnormal */
                              2.98023223876953125e-08, /* 2^-25: a tie, rounds to 0 */
                              2.9802322387695313e-08 * 1.5,
                              8.940696716308594e-08,    /* 1.5 * 2^-24: a tie, rounds to 2^-23 */
                              1.00048828125,            /* 1 + 2^-11: a tie, rounds to 1 */
                              1.00146484375,            /* 1 + 3 * 2^-11: a tie, rounds up */
                              1.0 + 1.0 / 2048 + 1e-12, /* just past a tie (f64 only) */
                              -3.4028234663852886e38,
                              1e-40};
  static const int64_t ints[] = {0,        1,          -1,         2147483647, -2147483647 - 1,
                                 16777217, 16777216,   -16777217,  65504,      65520,
                                 -65536,   2147483520, 2147483584, 123456789,  -987654321};
  const cubert_dtype t = v->t.dtype;
  const size_t nf = sizeof fl / sizeof fl[0], ni = sizeof ints / sizeof ints[0];
  for (uint64_t i = 0; i < v->cap; ++i) {
    uint8_t *p = v->host + i * v->t.elem_size;
    if (t == CUBERT_DTYPE_F32 && i < nf) {
      const float f = (float)fl[i];
      memcpy(p, &f, 4);
    } else if (t == CUBERT_DTYPE_F64 && i < nf) {
      memcpy(p, &fl[i], 8);
    } else if ((t == CUBERT_DTYPE_I32 || t == CUBERT_DTYPE_U32) && i < ni) {
      const uint32_t u = (uint32_t)ints[i];
      memcpy(p, &u, 4);
    } else if (t == CUBERT_DTYPE_F16 && i < 0x10000 / 7) {
      const uint16_t h = (uint16_t)(i * 7); /* every 7th code: NaNs, infinities, subnormals */
      memcpy(p, &h, 2);
    } else if (t == CUBERT_DTYPE_F32 && (i & 1)) {
      const float f = (float)ctv_uniform(-80000, 80000) * (float)(i % 5 == 0 ? 1e-9 : 1);
      memcpy(p, &f, 4);
    } else if (t == CUBERT_DTYPE_F64 && (i & 1)) {
      const double f = ctv_uniform(-5e9, 5e9) * (i % 5 == 0 ? 1e-14 : 1);
      memcpy(p, &f, 8);
    }
  }
  ctv_upload(v);
}

Test(ops_cast, every_pair_dense_with_edges_and_random_values) {
  static const uint64_t sizes[] = {1, 7, 100003};
  for (int f = 0; f < 5; ++f)
    for (int t = 0; t < 5; ++t) {
      const cubert_dtype from = cast_types[f], to = cast_types[t];
      if ((from == CUBERT_DTYPE_F64 || to == CUBERT_DTYPE_F64) && !cts_has_fp64()) continue;
      for (size_t s = 0; s < 3; ++s) {
        const uint64_t shape[1] = {sizes[s]};
        ctv in = ctv_new(from, 1, shape, NULL, 0, -1e10, 1e10);
        ctv out = ctv_new(to, 1, shape, NULL, s, 0, 1);
        put_edges(&in);
        run_cast(&in, &out);
        ctv_free(&in);
        ctv_free(&out);
      }
    }
}

Test(ops_cast, strided_views_broadcast_and_empty) {
  const uint64_t shape[2] = {23, 41}, transposed[2] = {1, 23}, pitched[2] = {48, 1};
  const uint64_t bshape[2] = {23, 41}, bstrides[2] = {1, 0}; /* a column broadcast along rows */
  const uint64_t empty[2] = {0, 41};
  for (int f = 0; f < 5; ++f)
    for (int t = 0; t < 5; ++t) {
      const cubert_dtype from = cast_types[f], to = cast_types[t];
      if ((from == CUBERT_DTYPE_F64 || to == CUBERT_DTYPE_F64) && !cts_has_fp64()) continue;
      ctv in = ctv_new(from, 2, shape, transposed, 2, -1e5, 1e5);
      ctv out = ctv_new(to, 2, shape, pitched, 1, 0, 1);
      put_edges(&in);
      run_cast(&in, &out);
      ctv_free(&in);
      ctv_free(&out);
      in = ctv_new(from, 2, bshape, bstrides, 0, -1e5, 1e5);
      out = ctv_new(to, 2, shape, NULL, 0, 0, 1);
      run_cast(&in, &out);
      ctv_free(&in);
      ctv_free(&out);
      in = ctv_new(from, 2, empty, NULL, 0, 0, 1);
      out = ctv_new(to, 2, empty, NULL, 0, 0, 1);
      run_cast(&in, &out);
      ctv_free(&in);
      ctv_free(&out);
    }
}

Test(ops_cast, errors) {
  const uint64_t s3[1] = {3}, s4[1] = {4};
  ctv a = ctv_new(CUBERT_DTYPE_F32, 1, s3, NULL, 0, 0, 1);
  ctv b = ctv_new(CUBERT_DTYPE_I32, 1, s4, NULL, 0, 0, 1);
  ASSERT_CODE(cubert_op_cast(cts_client, &a.t, &b.t), CUBERT_CODE_INVALID_ARGUMENT,
              "cast: in.shape[0] is 3 but out.shape[0] is 4");
  cubert_tensor untyped = b.t;
  untyped.dtype = CUBERT_DTYPE_NONE;
  ASSERT_CODE(cubert_op_cast(cts_client, &a.t, &untyped), CUBERT_CODE_INVALID_ARGUMENT,
              "out.dtype is none");
  cubert_tensor zero = b.t;
  zero.strides[0] = 0;
  ASSERT_CODE(cubert_op_cast(cts_client, &b.t, &zero), CUBERT_CODE_INVALID_ARGUMENT,
              "out.strides[0] is 0");
  cubert_tensor past = a.t;
  past.shape[0] = 7;
  cubert_tensor past_out = b.t;
  past_out.shape[0] = 7;
  ASSERT_CODE(cubert_op_cast(cts_client, &past, &past_out), CUBERT_CODE_INVALID_ARGUMENT,
              "in reaches byte 28");
  ctv_free(&a);
  ctv_free(&b);
}

/* cubert_op_unary and cubert_op_binary against a host reference: every operation and dtype,
   dense and strided views, broadcasting in every form, in place, and the error messages. */
#include "cts_ops_util.h"

TestSuite(ops_elementwise, .init = cts_setup, .fini = cts_teardown);

static const cubert_dtype all_types[4] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_F64, CUBERT_DTYPE_I32,
                                          CUBERT_DTYPE_U32};
/* Bounds in ulps: OpenCL 1.2's (div 2.5 in f32, sqrt/exp/log 3, tanh 5, pow 16); the rest is
   exact. */
static const uint64_t binary_ulps[CUBERT_BINARY_COUNT_] = {0, 0, 0, 3, 0, 0, 16};
static const uint64_t unary_ulps[CUBERT_UNARY_COUNT_] = {3, 3, 3, 0, 0, 0, 5};

static int binary_takes(cubert_binary_op op, cubert_dtype t) {
  return op != CUBERT_BINARY_POW || t == CUBERT_DTYPE_F32 || t == CUBERT_DTYPE_F64;
}
static int unary_takes(cubert_unary_op op, cubert_dtype t) {
  if (t == CUBERT_DTYPE_F32 || t == CUBERT_DTYPE_F64) return 1;
  return t == CUBERT_DTYPE_I32 &&
         (op == CUBERT_UNARY_ABS || op == CUBERT_UNARY_NEG || op == CUBERT_UNARY_RELU);
}
static int type_usable(cubert_dtype t) {
  return t != CUBERT_DTYPE_F64 || cts_has_fp64();
}

static float bin_f32(int op, float a, float b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    case 4:
      return fminf(a, b);
    case 5:
      return fmaxf(a, b);
    default:
      return powf(a, b);
  }
}
static double bin_f64(int op, double a, double b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    case 4:
      return fmin(a, b);
    case 5:
      return fmax(a, b);
    default:
      return pow(a, b);
  }
}
static int32_t bin_i32(int op, int32_t a, int32_t b) {
  switch (op) {
    case 0:
      return (int32_t)((uint32_t)a + (uint32_t)b);
    case 1:
      return (int32_t)((uint32_t)a - (uint32_t)b);
    case 2:
      return (int32_t)((uint32_t)a * (uint32_t)b);
    case 3:
      if (b == 0) return 0;
      if (a == INT32_MIN && b == -1) return INT32_MIN;
      return a / b;
    case 4:
      return a < b ? a : b;
    default:
      return a > b ? a : b;
  }
}
static uint32_t bin_u32(int op, uint32_t a, uint32_t b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return b ? a / b : 0;
    case 4:
      return a < b ? a : b;
    default:
      return a > b ? a : b;
  }
}
static float un_f32(int op, float x) {
  switch (op) {
    case 0:
      return expf(x);
    case 1:
      return logf(x);
    case 2:
      return sqrtf(x);
    case 3:
      return fabsf(x);
    case 4:
      return -x;
    case 5:
      return x < 0 ? 0.0f : x;
    default:
      return tanhf(x);
  }
}
static double un_f64(int op, double x) {
  switch (op) {
    case 0:
      return exp(x);
    case 1:
      return log(x);
    case 2:
      return sqrt(x);
    case 3:
      return fabs(x);
    case 4:
      return -x;
    case 5:
      return x < 0 ? 0.0 : x;
    default:
      return tanh(x);
  }
}
static int32_t un_i32(int op, int32_t x) {
  if (op == CUBERT_UNARY_ABS) return x < 0 ? (int32_t)(0u - (uint32_t)x) : x;
  if (op == CUBERT_UNARY_NEG) return (int32_t)(0u - (uint32_t)x);
  return x < 0 ? 0 : x;
}

/* Element of `in` (broadcast to out's shape, NumPy-aligned) that out's row-major index i
   reads. */
static uint64_t bcast_pos(const cubert_tensor *in, const cubert_tensor *out, uint64_t i) {
  uint64_t p = in->offset;
  const uint32_t lead = out->rank - in->rank;
  for (uint32_t d = out->rank; d-- > 0;) {
    const uint64_t c = i % out->shape[d];
    i /= out->shape[d];
    if (d >= lead && in->shape[d - lead] != 1) p += c * in->strides[d - lead];
  }
  return p;
}

/* Compares element i of out (at got + pos) with the reference from a (and b). */
static void check_one(cubert_dtype t, int binary, int op, const uint8_t *ga, const uint8_t *gb,
                      const uint8_t *got, uint64_t i) {
  switch (t) {
    case CUBERT_DTYPE_F32: {
      float a, b = 0, g;
      memcpy(&a, ga, 4);
      if (binary) memcpy(&b, gb, 4);
      memcpy(&g, got, 4);
      const float w = binary ? bin_f32(op, a, b) : un_f32(op, a);
      cr_assert_leq(ctv_ulps32(g, w), binary ? binary_ulps[op] : unary_ulps[op],
                    "%s op %d f32 element %llu: a=%.9g b=%.9g got %.9g, host %.9g",
                    binary ? "binary" : "unary", op, (unsigned long long)i, (double)a, (double)b,
                    (double)g, (double)w);
      break;
    }
    case CUBERT_DTYPE_F64: {
      double a, b = 0, g;
      memcpy(&a, ga, 8);
      if (binary) memcpy(&b, gb, 8);
      memcpy(&g, got, 8);
      const double w = binary ? bin_f64(op, a, b) : un_f64(op, a);
      cr_assert_leq(ctv_ulps64(g, w), binary ? binary_ulps[op] : unary_ulps[op],
                    "%s op %d f64 element %llu: a=%.17g b=%.17g got %.17g, host %.17g",
                    binary ? "binary" : "unary", op, (unsigned long long)i, a, b, g, w);
      break;
    }
    case CUBERT_DTYPE_I32: {
      int32_t a, b = 0, g;
      memcpy(&a, ga, 4);
      if (binary) memcpy(&b, gb, 4);
      memcpy(&g, got, 4);
      const int32_t w = binary ? bin_i32(op, a, b) : un_i32(op, a);
      cr_assert_eq(g, w, "%s op %d i32 element %llu: a=%d b=%d got %d, host %d",
                   binary ? "binary" : "unary", op, (unsigned long long)i, a, b, g, w);
      break;
    }
    default: {
      uint32_t a, b = 0, g;
      memcpy(&a, ga, 4);
      if (binary) memcpy(&b, gb, 4);
      memcpy(&g, got, 4);
      const uint32_t w = bin_u32(op, a, b);
      cr_assert_eq(g, w, "binary op %d u32 element %llu: a=%u b=%u got %u, host %u", op,
                   (unsigned long long)i, a, b, g, w);
      break;
    }
  }
}

/* Runs out = a op b (b NULL: unary) and checks every element and the untouched rest. */
static void run_check(int binary, int op, ctv *a, ctv *b, ctv *out) {
  if (binary)
    ASSERT_OK(cubert_op_binary(cts_client, (cubert_binary_op)op, &a->t, &b->t, &out->t));
  else
    ASSERT_OK(cubert_op_unary(cts_client, (cubert_unary_op)op, &a->t, &out->t));
  uint8_t *got = ctv_download(out);
  const uint64_t e = out->t.elem_size, n = ctv_count(&out->t);
  for (uint64_t i = 0; i < n; ++i)
    check_one(out->t.dtype, binary, op, a->host + bcast_pos(&a->t, &out->t, i) * e,
              binary ? b->host + bcast_pos(&b->t, &out->t, i) * e : NULL,
              got + ctv_pos(&out->t, i) * e, i);
  ctv_check_untouched(out, got);
  free(got);
}

/* Makes integer inputs hit the special cases: divisors 0 and -1, INT32_MIN. */
static void spice_ints(ctv *a, ctv *b) {
  if (a->t.dtype != CUBERT_DTYPE_I32 && a->t.dtype != CUBERT_DTYPE_U32) return;
  uint32_t *pa = (uint32_t *)a->host, *pb = b ? (uint32_t *)b->host : NULL;
  for (uint64_t i = 0; i < a->cap; i += 11) pa[i] = 0x80000000u;
  if (pb) {
    for (uint64_t i = 0; i < b->cap; i += 5) pb[i] = 0;
    for (uint64_t i = 3; i < b->cap; i += 7) pb[i] = 0xffffffffu;
    for (uint64_t i = 2; i < b->cap; i += 13) pb[i] = (uint32_t)(ctv_rand() % 9);
    ctv_upload(b);
  }
  ctv_upload(a);
}

Test(ops_elementwise, binary_dense_every_op_and_dtype) {
  static const uint64_t sizes[] = {1, 7, 1000003};
  for (int ti = 0; ti < 4; ++ti) {
    const cubert_dtype t = all_types[ti];
    if (!type_usable(t)) continue;
    for (int op = 0; op < CUBERT_BINARY_COUNT_; ++op) {
      if (!binary_takes((cubert_binary_op)op, t)) continue;
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const uint64_t shape[1] = {sizes[s]};
        ctv a = ctv_new(t, 1, shape, NULL, 0, -4, 4), b = ctv_new(t, 1, shape, NULL, 0, -4, 4);
        ctv out = ctv_new(t, 1, shape, NULL, s, -1, 1); /* an offset output */
        spice_ints(&a, &b);
        run_check(1, op, &a, &b, &out);
        ctv_free(&a);
        ctv_free(&b);
        ctv_free(&out);
      }
    }
  }
}

Test(ops_elementwise, unary_dense_and_strided_every_op_and_dtype) {
  for (int ti = 0; ti < 4; ++ti) {
    const cubert_dtype t = all_types[ti];
    if (!type_usable(t)) continue;
    for (int op = 0; op < CUBERT_UNARY_COUNT_; ++op) {
      if (!unary_takes((cubert_unary_op)op, t)) continue;
      /* dense 1000003, dense 7 with offsets, a transposed 37 x 29 input into a pitched output */
      const uint64_t big[1] = {1000003}, small[1] = {7}, shape[2] = {37, 29};
      const uint64_t transposed[2] = {1, 37}, pitched[2] = {32, 1};
      ctv a = ctv_new(t, 1, big, NULL, 0, -4, 4), out = ctv_new(t, 1, big, NULL, 0, 0, 1);
      spice_ints(&a, NULL);
      run_check(0, op, &a, NULL, &out);
      ctv_free(&a);
      ctv_free(&out);
      a = ctv_new(t, 1, small, NULL, 5, -4, 4);
      out = ctv_new(t, 1, small, NULL, 2, 0, 1);
      run_check(0, op, &a, NULL, &out);
      ctv_free(&a);
      ctv_free(&out);
      /* a row broadcast to pitched rows (the rows kernel) */
      const uint64_t row[1] = {300}, rows[2] = {20, 300}, pitch[2] = {333, 1};
      a = ctv_new(t, 1, row, NULL, 1, -4, 4);
      out = ctv_new(t, 2, rows, pitch, 4, 0, 1);
      run_check(0, op, &a, NULL, &out);
      ctv_free(&a);
      ctv_free(&out);
      a = ctv_new(t, 2, shape, transposed, 3, -4, 4);
      out = ctv_new(t, 2, shape, pitched, 1, 0, 1);
      spice_ints(&a, NULL);
      run_check(0, op, &a, NULL, &out);
      ctv_free(&a);
      ctv_free(&out);
    }
  }
}

/* One broadcasting case: shapes of a, b and out (rank given by each), optional strides. */
typedef struct bcase {
  const char *what;
  uint32_t ra, rb, ro;
  uint64_t sa[4], sb[4], so[4];
  uint64_t ta[4], tb[4], to[4]; /* strides; all 0: row-major */
  uint64_t oa, ob, oo;          /* offsets */
} bcase;

static const uint64_t *strides_or_null(const uint64_t *s, uint32_t r) {
  for (uint32_t d = 0; d < r; ++d)
    if (s[d]) return s;
  return NULL;
}

Test(ops_elementwise, binary_broadcasts_in_every_form_over_strided_views) {
  static const bcase cases[] = {
      {"scalar b", 2, 0, 2, {33, 65}, {0}, {33, 65}, {0}, {0}, {0}, 0, 4, 0},
      {"row b", 2, 1, 2, {129, 257}, {257}, {129, 257}, {0}, {0}, {0}, 0, 0, 0},
      {"column b", 2, 2, 2, {129, 257}, {129, 1}, {129, 257}, {0}, {0}, {0}, 0, 0, 0},
      {"rank extension", 1, 3, 3, {17}, {3, 5, 17}, {3, 5, 17}, {0}, {0}, {0}, 1, 0, 0},
      {"both broadcast", 2, 2, 2, {61, 1}, {1, 67}, {61, 67}, {0}, {0}, {0}, 0, 0, 0},
      {"size-1 dims", 3, 3, 3, {1, 9, 1}, {1, 9, 11}, {1, 9, 11}, {0}, {0}, {0}, 0, 0, 0},
      {"transposed a", 2, 2, 2, {45, 38}, {45, 38}, {45, 38}, {1, 45}, {0}, {0}, 0, 0, 0},
      {"pitched, sliced, offset",
       2,
       2,
       2,
       {20, 30},
       {20, 30},
       {20, 30},
       {40, 1},
       {60, 2},
       {31, 1},
       7,
       3,
       5},
      {"reversed-order 3-D out", 3, 1, 3, {4, 5, 6}, {6}, {4, 5, 6}, {0}, {0}, {1, 4, 20}, 0, 0, 0},
      {"empty", 2, 1, 2, {0, 5}, {5}, {0, 5}, {0}, {0}, {0}, 0, 0, 0},
      {"large row broadcast", 2, 1, 2, {1000, 1003}, {1003}, {1000, 1003}, {0}, {0}, {0}, 0, 0, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const bcase *k = &cases[c];
    for (int ti = 0; ti < 4; ++ti) {
      const cubert_dtype t = all_types[ti];
      if (!type_usable(t)) continue;
      for (int op = 0; op < CUBERT_BINARY_COUNT_; ++op) {
        if (!binary_takes((cubert_binary_op)op, t)) continue;
        if (c == sizeof cases / sizeof cases[0] - 1 && op != CUBERT_BINARY_ADD) continue;
        ctv a = ctv_new(t, k->ra, k->sa, strides_or_null(k->ta, k->ra), k->oa, -4, 4);
        ctv b = ctv_new(t, k->rb, k->sb, strides_or_null(k->tb, k->rb), k->ob, -4, 4);
        ctv out = ctv_new(t, k->ro, k->so, strides_or_null(k->to, k->ro), k->oo, 0, 1);
        spice_ints(&a, &b);
        cr_log_info("case %s, dtype %s, op %d", k->what, cubert_dtype_name(t), op);
        run_check(1, op, &a, &b, &out);
        ctv_free(&a);
        ctv_free(&b);
        ctv_free(&out);
      }
    }
  }
}

Test(ops_elementwise, in_place_updates) {
  /* out == a (same handle, strides and offset), dense and strided; unary in place too. */
  const uint64_t shape[2] = {31, 47}, pitched[2] = {50, 1};
  for (int strided = 0; strided <= 1; ++strided) {
    ctv a = ctv_new(CUBERT_DTYPE_F32, 2, shape, strided ? pitched : NULL, 2, -4, 4);
    const uint64_t row[1] = {47};
    ctv b = ctv_new(CUBERT_DTYPE_F32, strided ? 1 : 2, strided ? row : shape, NULL, 0, -4, 4);
    run_check(1, CUBERT_BINARY_MUL, &a, &b, &a);
    ctv_free(&a);
    ctv_free(&b);
    a = ctv_new(CUBERT_DTYPE_I32, 2, shape, strided ? pitched : NULL, 1, 0, 0);
    run_check(0, CUBERT_UNARY_NEG, &a, NULL, &a);
    ctv_free(&a);
  }
}

Test(ops_elementwise, errors_name_the_operand_and_axis) {
  const uint64_t s34[2] = {3, 4}, s5[1] = {5}, s4[1] = {4};
  ctv a = ctv_new(CUBERT_DTYPE_F32, 2, s34, NULL, 0, 0, 1);
  ctv b = ctv_new(CUBERT_DTYPE_F32, 1, s5, NULL, 0, 0, 1);
  ctv out = ctv_new(CUBERT_DTYPE_F32, 2, s34, NULL, 0, 0, 1);
  ctv i32 = ctv_new(CUBERT_DTYPE_I32, 2, s34, NULL, 0, 0, 1);
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &a.t, &b.t, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "b.shape[0] is 5");
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &out.t, &b.t, &b.t),
              CUBERT_CODE_INVALID_ARGUMENT, "a has rank 2, more than the output's 1");
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &a.t, &i32.t, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "b is i32 but out is f32");
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_POW, &i32.t, &i32.t, &i32.t),
              CUBERT_CODE_INVALID_ARGUMENT, "a.dtype is i32; this operation takes f32, f64");
  ASSERT_CODE(cubert_op_unary(cts_client, CUBERT_UNARY_EXP, &i32.t, &i32.t),
              CUBERT_CODE_INVALID_ARGUMENT, "unary exp: in.dtype is i32");
  cubert_tensor zero = out.t;
  zero.strides[0] = 0;
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &a.t, &a.t, &zero),
              CUBERT_CODE_INVALID_ARGUMENT, "out.strides[0] is 0");
  cubert_tensor past = a.t;
  past.offset = 4;
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &past, &a.t, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "a reaches byte");
  cubert_tensor untyped = a.t;
  untyped.dtype = CUBERT_DTYPE_NONE;
  ASSERT_CODE(cubert_op_unary(cts_client, CUBERT_UNARY_NEG, &untyped, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "set the tensor's dtype");
  ASSERT_CODE(cubert_op_binary(cts_client, (cubert_binary_op)99, &a.t, &a.t, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "not a cubert_binary_op");
  ASSERT_CODE(cubert_op_unary(cts_client, CUBERT_UNARY_NEG, NULL, &out.t),
              CUBERT_CODE_INVALID_ARGUMENT, "in is NULL");
  /* An output of another shape than the broadcast one. */
  ctv o4 = ctv_new(CUBERT_DTYPE_F32, 1, s4, NULL, 0, 0, 1);
  ASSERT_CODE(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &o4.t, &b.t, &o4.t),
              CUBERT_CODE_INVALID_ARGUMENT, "b.shape[0] is 5");
  /* Nothing was written by the failed calls. */
  uint8_t *got = ctv_download(&out);
  cr_assert(memcmp(got, out.host, out.cap * 4) == 0, "a failed call wrote its output");
  free(got);
  ctv_free(&a);
  ctv_free(&b);
  ctv_free(&out);
  ctv_free(&i32);
  ctv_free(&o4);
}

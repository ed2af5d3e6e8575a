/* cubert_op_copy and cubert_op_permute against the host: any strides on both sides, every
   element size (typed words and odd untyped sizes), the tiled 2-D transpose, broadcast inputs,
   empty and size-1 dimensions, and errors. */
#include "cts_ops_util.h"

TestSuite(ops_copy, .init = cts_setup, .fini = cts_teardown);

/* Copies with cubert_op_copy (axes NULL) or cubert_op_permute and checks every element and
   that nothing outside out's view changed. */
static void run_copy(ctv *in, ctv *out, const uint32_t *axes) {
  cubert_tensor src = in->t;
  if (axes) {
    ASSERT_OK(cubert_op_permute(cts_client, &in->t, axes, &out->t));
    ASSERT_OK(cubert_tensor_permute(&in->t, axes, &src));
  } else {
    ASSERT_OK(cubert_op_copy(cts_client, &in->t, &out->t));
  }
  uint8_t *got = ctv_download(out);
  const uint64_t n = ctv_count(&out->t), e = out->t.elem_size;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t ps = ctv_pos(&src, i), po = ctv_pos(&out->t, i);
    cr_assert(memcmp(got + po * e, in->host + ps * e, e) == 0,
              "element %llu (out element %llu, in element %llu) differs", (unsigned long long)i,
              (unsigned long long)po, (unsigned long long)ps);
  }
  ctv_check_untouched(out, got);
  free(got);
}

typedef struct ccase {
  const char *what;
  uint32_t rank;
  uint64_t shape[4];
  uint64_t ti[4], to[4]; /* strides; all 0: row-major */
  uint64_t oi, oo;
} ccase;

static const uint64_t *strides_or_null(const uint64_t *s, uint32_t r) {
  for (uint32_t d = 0; d < r; ++d)
    if (s[d]) return s;
  return NULL;
}

Test(ops_copy, any_strides_every_element_size) {
  static const ccase cases[] = {
      {"dense 1", 1, {1}, {0}, {0}, 0, 0},
      {"dense 7, offsets", 1, {7}, {0}, {0}, 3, 5},
      {"dense 1000003", 1, {1000003}, {0}, {0}, 0, 0},
      {"transposed in (tiled)", 2, {67, 45}, {1, 67}, {0}, 1, 2},
      {"transposed in, pitched out", 2, {33, 65}, {1, 40}, {70, 1}, 0, 3},
      {"transposed out", 2, {45, 67}, {0}, {1, 45}, 0, 0},
      {"sliced both", 2, {20, 30}, {90, 3}, {31, 1}, 4, 0},
      {"broadcast in (stride 0)", 2, {9, 13}, {1, 0}, {0}, 0, 0},
      {"3-D permuted", 3, {5, 6, 7}, {1, 35, 5}, {0}, 0, 0},
      {"4-D with size-1 dims", 4, {3, 1, 4, 1}, {0}, {1, 12, 3, 9}, 0, 0},
      {"empty", 2, {0, 7}, {0}, {0}, 0, 0},
      {"pitched rows", 2, {70, 300}, {310, 1}, {0}, 2, 0},
      {"broadcast row", 2, {50, 200}, {0, 1}, {0}, 0, 0},
      {"sliced long rows", 2, {40, 150}, {400, 2}, {160, 1}, 0, 1},
      {"large transpose", 2, {1000, 1003}, {1, 1000}, {0}, 0, 0},
  };
  static const uint64_t elem_sizes[] = {1, 2, 4, 8, 3, 12, 6};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    for (size_t s = 0; s < sizeof elem_sizes / sizeof elem_sizes[0]; ++s) {
      const ccase *k = &cases[c];
      const uint64_t e = elem_sizes[s];
      const cubert_dtype t = e == 4   ? CUBERT_DTYPE_F32
                             : e == 8 ? CUBERT_DTYPE_F64
                             : e == 2 ? CUBERT_DTYPE_F16
                                      : CUBERT_DTYPE_NONE;
      cr_log_info("case %s, %llu-byte elements", k->what, (unsigned long long)e);
      ctv in = ctv_new_sized(CUBERT_DTYPE_NONE, e, k->rank, k->shape,
                             strides_or_null(k->ti, k->rank), k->oi, 0, 0);
      ctv out = ctv_new_sized(CUBERT_DTYPE_NONE, e, k->rank, k->shape,
                              strides_or_null(k->to, k->rank), k->oo, 0, 0);
      in.t.dtype = out.t.dtype = t; /* the bytes are random either way */
      run_copy(&in, &out, NULL);
      ctv_free(&in);
      ctv_free(&out);
    }
}

Test(ops_copy, permute_materialises_the_view) {
  const uint64_t shape[3] = {7, 50, 33};
  ctv in = ctv_new(CUBERT_DTYPE_F32, 3, shape, NULL, 0, -1, 1);
  static const uint32_t perms[][3] = {{0, 2, 1}, {2, 1, 0}, {1, 0, 2}, {0, 1, 2}, {2, 0, 1}};
  for (size_t p = 0; p < sizeof perms / sizeof perms[0]; ++p) {
    const uint64_t oshape[3] = {shape[perms[p][0]], shape[perms[p][1]], shape[perms[p][2]]};
    ctv out = ctv_new(CUBERT_DTYPE_F32, 3, oshape, NULL, 0, 0, 1);
    run_copy(&in, &out, perms[p]);
    ctv_free(&out);
  }
  /* A plain 2-D transpose of f64 and u32 data (the tiled kernel), odd sizes. */
  const uint64_t s2[2] = {129, 95}, t2[2] = {95, 129};
  const uint32_t swap[2] = {1, 0};
  static const cubert_dtype types[3] = {CUBERT_DTYPE_F64, CUBERT_DTYPE_U32, CUBERT_DTYPE_F16};
  for (int t = 0; t < 3; ++t) {
    ctv a = ctv_new(types[t], 2, s2, NULL, 1, -1, 1);
    ctv b = ctv_new(types[t], 2, t2, NULL, 2, 0, 1);
    run_copy(&a, &b, swap);
    ctv_free(&a);
    ctv_free(&b);
  }
  ctv_free(&in);
}

Test(ops_copy, errors) {
  const uint64_t s34[2] = {3, 4}, s43[2] = {4, 3};
  ctv a = ctv_new(CUBERT_DTYPE_F32, 2, s34, NULL, 0, 0, 1);
  ctv b = ctv_new(CUBERT_DTYPE_F32, 2, s43, NULL, 0, 0, 1);
  ctv i = ctv_new(CUBERT_DTYPE_I32, 2, s34, NULL, 0, 0, 1);
  ASSERT_CODE(cubert_op_copy(cts_client, &a.t, &b.t), CUBERT_CODE_INVALID_ARGUMENT,
              "copy: in.shape[0] is 3 but out.shape[0] is 4");
  ASSERT_CODE(cubert_op_copy(cts_client, &a.t, &i.t), CUBERT_CODE_INVALID_ARGUMENT,
              "copy: in is f32 but out is i32");
  const uint32_t same[2] = {0, 1}, bad[2] = {0, 0};
  ASSERT_CODE(cubert_op_permute(cts_client, &a.t, same, &b.t), CUBERT_CODE_INVALID_ARGUMENT,
              "permute: in.shape[0] is 3 but out.shape[0] is 4");
  ASSERT_CODE(cubert_op_permute(cts_client, &a.t, bad, &b.t), CUBERT_CODE_INVALID_ARGUMENT,
              "axes[1] is 0");
  cubert_tensor zero = b.t;
  zero.strides[1] = 0;
  const uint32_t swap[2] = {1, 0};
  ASSERT_CODE(cubert_op_permute(cts_client, &a.t, swap, &zero), CUBERT_CODE_INVALID_ARGUMENT,
              "out.strides[1] is 0");
  cubert_tensor past = b.t;
  past.strides[0] = 5;
  ASSERT_CODE(cubert_op_copy(cts_client, &past, &b.t), CUBERT_CODE_INVALID_ARGUMENT,
              "copy: in reaches byte");
  cubert_tensor wide = a.t;
  wide.dtype = CUBERT_DTYPE_NONE;
  wide.elem_size = 2;
  cubert_tensor narrow = wide;
  narrow.elem_size = 4;
  ASSERT_CODE(cubert_op_copy(cts_client, &wide, &narrow), CUBERT_CODE_INVALID_ARGUMENT,
              "in.elem_size is 2 but out.elem_size is 4");
  ctv_free(&a);
  ctv_free(&b);
  ctv_free(&i);
}

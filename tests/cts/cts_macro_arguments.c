/* The function-like macros of the public headers take every expression a function call takes:
   compound literals with commas inside (`(uint32_t[2]){1, 0}`), which the preprocessor splits
   at the comma, reached the type-check macros of cubert/ops.h and cubert/client.h as extra
   arguments ("macro passed 4 arguments, but takes just 3"). Each macro is called here with such
   an argument, so a macro that splits them again fails the build; the results are checked. */
#include <math.h>

#include "cts.h"

TestSuite(macro_arguments, .init = cts_setup, .fini = cts_teardown);

/* A 2 x 2 tensor of `dtype` holding `data` (row-major), made with write_tensor's macro. */
static cubert_tensor tensor_2x2(cubert_dtype dtype, const void *data) {
  cubert_layout_desc desc = {.rank = 2, .shape = {2, 2}, .dtype = dtype};
  cubert_tensor t;
  ASSERT_OK(cubert_client_empty_tensor(cts_client, &desc, &t));
  if (data) ASSERT_OK(cubert_client_write_tensor(cts_client, &t, data, 16));
  return t;
}

/* The tensor's 4 elements, read with read_tensor's macro and a literal size argument. */
static void read4(const cubert_tensor *t, void *back) {
  ASSERT_OK(cubert_client_read_tensor(cts_client, t, back, (size_t[2]){16, 0}[0]));
}

static cubert_status permute_twice(const cubert_tensor *a, cubert_tensor *out) {
  cubert_tensor once;
  CUBERT_RETURN_IF_ERROR(cubert_tensor_permute(a, (uint32_t[2]){1, 0}, &once));
  CUBERT_RETURN_IF_ERROR((cubert_status[2]){NULL, NULL}[0]);
  return cubert_tensor_permute(&once, (const uint32_t[2]){1, 0}, out);
}

Test(macro_arguments, views_and_descriptors_take_compound_literals) {
  cubert_tensor a = tensor_2x2(CUBERT_DTYPE_F32, NULL);
  ASSERT_OK(cubert_client_write_tensor(cts_client, &a, (float[4]){1, 2, 3, 4}, 16));
  cubert_tensor p;
  ASSERT_OK(cubert_tensor_permute(&a, (uint32_t[2]){1, 0}, &p));
  cr_assert_eq(p.strides[0], 1);
  cr_assert_eq(p.strides[1], 2);
  cubert_tensor back_again;
  ASSERT_OK(permute_twice(&a, &back_again));
  cr_assert_eq(back_again.strides[0], 2);
  cubert_copy_desc d;
  ASSERT_OK(cubert_copy_desc_from_tensor(&(cubert_tensor){.handle = a.handle,
                                                          .rank = 1,
                                                          .shape = {2},
                                                          .strides = {2},
                                                          .elem_size = 4,
                                                          .dtype = CUBERT_DTYPE_F32,
                                                          .offset = 1},
                                         &d));
  cr_assert_eq(d.handle, a.handle);
  cr_assert_eq(d.shape[0], 2);
  cr_assert_eq(d.strides[0], 2);
  cr_assert_eq(d.offset, 1);
  float col[2] = {0};
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, col, (size_t[2]){8, 0}[0]));
  cr_assert(col[0] == 2 && col[1] == 4, "column 1 is %g %g", col[0], col[1]);
  ASSERT_OK(cubert_client_write_tensor(cts_client, &d, (float[2]){20, 40}, 8));
  float got[4];
  read4(&a, got);
  cr_assert(got[0] == 1 && got[1] == 20 && got[2] == 3 && got[3] == 40, "%g %g %g %g", got[0],
            got[1], got[2], got[3]);
  cr_assert_eq(CUBERT_KERNEL_REDUCE_AXIS_INFO((uint32_t[2]){2, 3}[0]), 16);
  cr_assert_eq(CUBERT_KERNEL_SOFTMAX_INFO((uint32_t[2]){2, 3}[1]), 16);
  cubert_tensor_release(&a);
}

Test(macro_arguments, operations_take_compound_literals) {
  cubert_tensor a = tensor_2x2(CUBERT_DTYPE_F32, (float[4]){1, 2, 3, 4});
  cubert_tensor o = tensor_2x2(CUBERT_DTYPE_F32, NULL);
  float got[4];
  ASSERT_OK(cubert_op_permute(cts_client, &a, (uint32_t[2]){1, 0}, &o));
  read4(&o, got);
  cr_assert(got[0] == 1 && got[1] == 3 && got[2] == 2 && got[3] == 4, "transpose: %g %g %g %g",
            got[0], got[1], got[2], got[3]);
  /* a's transpose as a literal view. */
  ASSERT_OK(cubert_op_copy(cts_client,
                           &(cubert_tensor){.handle = a.handle,
                                            .rank = 2,
                                            .shape = {2, 2},
                                            .strides = {1, 2},
                                            .elem_size = 4,
                                            .dtype = CUBERT_DTYPE_F32},
                           &o));
  read4(&o, got);
  cr_assert(got[1] == 3 && got[2] == 2, "copy of the transposed view: %g %g", got[1], got[2]);
  ASSERT_OK(cubert_op_unary(cts_client, (cubert_unary_op[2]){CUBERT_UNARY_NEG, 0}[0], &a, &o));
  read4(&o, got);
  cr_assert(got[0] == -1 && got[3] == -4, "neg: %g %g", got[0], got[3]);
  ASSERT_OK(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &a,
                             &(cubert_tensor){.handle = a.handle,
                                              .rank = 2,
                                              .shape = {2, 2},
                                              .strides = {2, 1},
                                              .elem_size = 4,
                                              .dtype = CUBERT_DTYPE_F32},
                             &o));
  read4(&o, got);
  cr_assert(got[0] == 2 && got[3] == 8, "a + a: %g %g", got[0], got[3]);
  ASSERT_OK(cubert_op_matmul(cts_client, (double[2]){1.0, 2.0}[1], &a, &a, 0.0, &o));
  read4(&o, got);
  cr_assert(got[0] == 14 && got[1] == 20 && got[2] == 30 && got[3] == 44, "2 a.a: %g %g %g %g",
            got[0], got[1], got[2], got[3]);
  ASSERT_OK(cubert_op_softmax(cts_client, &a, &o));
  read4(&o, got);
  cr_assert(fabsf(got[0] - 0.26894142f) < 1e-6f && fabsf(got[1] - 0.73105858f) < 1e-6f,
            "softmax of (1, 2): %g %g", got[0], got[1]);

  cubert_layout_desc row = {.rank = 1, .shape = {2}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor sums;
  ASSERT_OK(cubert_client_empty_tensor(cts_client, &row, &sums));
  ASSERT_OK(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &a, (uint32_t[2]){1, 0}[0], 0, &sums));
  float s[2];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &sums, s, sizeof s));
  cr_assert(s[0] == 3 && s[1] == 7, "row sums: %g %g", s[0], s[1]);

  cubert_tensor i = tensor_2x2(CUBERT_DTYPE_I32, NULL);
  ASSERT_OK(cubert_op_cast(cts_client, &a,
                           &(cubert_tensor){.handle = i.handle,
                                            .rank = 2,
                                            .shape = {2, 2},
                                            .strides = {2, 1},
                                            .elem_size = 4,
                                            .dtype = CUBERT_DTYPE_I32}));
  int32_t ints[4];
  read4(&i, ints);
  cr_assert(ints[0] == 1 && ints[3] == 4, "cast: %d %d", ints[0], ints[3]);
  cubert_tensor_release(&i);
  cubert_tensor_release(&sums);
  cubert_tensor_release(&o);
  cubert_tensor_release(&a);
}

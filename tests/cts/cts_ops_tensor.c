/* Typed tensors and views (cubert/layout.h dtypes, cubert/ops.h cubert_tensor_permute). */
#include "cts.h"

TestSuite(ops_tensor, .init = cts_setup, .fini = cts_teardown);

Test(ops_tensor, dtype_sets_elem_size_and_travels_to_the_tensor) {
  cr_assert_eq(cubert_dtype_size(CUBERT_DTYPE_F64), 8);
  cr_assert_eq(cubert_dtype_size(CUBERT_DTYPE_F16), 2);
  cr_assert_eq(cubert_dtype_size(CUBERT_DTYPE_NONE), 0);
  cr_assert_str_eq(cubert_dtype_name(CUBERT_DTYPE_I32), "i32");
  cr_assert_str_eq(cubert_dtype_name((cubert_dtype)99), "invalid");
  cubert_layout_desc desc = {.rank = 2, .shape = {3, 5}, .dtype = CUBERT_DTYPE_F64};
  cr_assert_eq(cubert_layout_elem_size(&desc), 8);
  double data[15];
  for (int i = 0; i < 15; ++i) data[i] = i * 0.5;
  cubert_tensor t;
  ASSERT_OK(cubert_client_create_tensor(cts_client, data, &desc, &t));
  cr_assert_eq(t.dtype, CUBERT_DTYPE_F64);
  cr_assert_eq(t.elem_size, 8);
  cr_assert_eq(t.offset, 0);
  cr_assert_eq(t.strides[0], 5);
  double back[15];
  cts_read(t.handle, back, sizeof back);
  cr_assert_arr_eq(back, data, sizeof back);
  cubert_tensor_release(&t);

  desc.elem_size = 4; /* disagrees with F64 */
  ASSERT_CODE(cubert_client_empty_tensor(cts_client, &desc, &t), CUBERT_CODE_INVALID_ARGUMENT,
              "has 8-byte elements");
  desc.elem_size = 0;
  desc.dtype = CUBERT_DTYPE_NONE;
  ASSERT_CODE(cubert_client_empty_tensor(cts_client, &desc, &t), CUBERT_CODE_INVALID_ARGUMENT,
              "no dtype");
  desc.dtype = (cubert_dtype)42;
  ASSERT_CODE(cubert_client_empty_tensor(cts_client, &desc, &t), CUBERT_CODE_INVALID_ARGUMENT,
              "not a cubert_dtype");
}

Test(ops_tensor, permute_is_a_view_and_checks_its_axes) {
  cubert_tensor t = {.handle = NULL,
                     .rank = 3,
                     .shape = {2, 3, 4},
                     .strides = {12, 4, 1},
                     .elem_size = 4,
                     .dtype = CUBERT_DTYPE_F32,
                     .offset = 7};
  cubert_tensor v;
  const uint32_t axes[3] = {2, 0, 1};
  ASSERT_OK(cubert_tensor_permute(&t, axes, &v));
  cr_assert_eq(v.shape[0], 4);
  cr_assert_eq(v.shape[1], 2);
  cr_assert_eq(v.shape[2], 3);
  cr_assert_eq(v.strides[0], 1);
  cr_assert_eq(v.strides[1], 12);
  cr_assert_eq(v.strides[2], 4);
  cr_assert_eq(v.offset, 7);
  cr_assert_eq(v.dtype, CUBERT_DTYPE_F32);
  const uint32_t repeated[3] = {0, 0, 1}, outside[3] = {0, 1, 3};
  ASSERT_CODE(cubert_tensor_permute(&t, repeated, &v), CUBERT_CODE_INVALID_ARGUMENT, "axes[1]");
  ASSERT_CODE(cubert_tensor_permute(&t, outside, &v), CUBERT_CODE_INVALID_ARGUMENT, "axes[2] is 3");
}

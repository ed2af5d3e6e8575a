/* read_tensor's descriptor checks (issue 10, item 2): stride arithmetic is overflow-checked
   and reported as INVALID_ARGUMENT naming the dimension, the furthest byte likewise, and a
   zero stride (a broadcast, which a copy cannot express) is UNSUPPORTED_STRIDES. On the old
   code these wrapped around and the copy kernel read far outside the buffer, or broadcast. */
#include <stdint.h>

#include "cts.h"

TestSuite(tensor_read, .init = cts_setup, .fini = cts_teardown);

static cubert_handle *matrix(void) {
  float m[16];
  for (int i = 0; i < 16; ++i) m[i] = (float)i;
  return cts_buffer(m, sizeof m);
}

Test(tensor_read, stride_sum_overflow_names_the_dimension) {
  cubert_handle *h = matrix();
  /* each (d-1)*stride fits in 64 bits; their sum wraps to 0 */
  cubert_copy_desc d = {
      .handle = h, .rank = 2, .shape = {2, 2}, .strides = {1ull << 63, 1ull << 63}, .elem_size = 4};
  float out[4] = {0};
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &d, out, sizeof out),
              CUBERT_CODE_INVALID_ARGUMENT, "strides[1]");
  /* one product overflows */
  cubert_copy_desc e = {
      .handle = h, .rank = 2, .shape = {3, 2}, .strides = {1ull << 63, 1}, .elem_size = 4};
  float out6[6];
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &e, out6, sizeof out6),
              CUBERT_CODE_INVALID_ARGUMENT, "strides[0]");
  for (int i = 0; i < 4; ++i) cr_assert_eq(out[i], 0.0f, "dst was written");
  cubert_handle_release(h);
}

Test(tensor_read, furthest_byte_overflow_is_invalid_argument) {
  cubert_handle *h = matrix();
  /* last element 2^62: (last + 1) * 8 bytes wraps to a small number */
  cubert_copy_desc d = {
      .handle = h, .rank = 1, .shape = {2}, .strides = {1ull << 62}, .elem_size = 8};
  uint64_t out[2] = {0};
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &d, out, sizeof out),
              CUBERT_CODE_INVALID_ARGUMENT, "overflows 64 bits");
  cr_assert_eq(out[1], 0);
  cubert_handle_release(h);
}

Test(tensor_read, zero_stride_is_unsupported_strides) {
  cubert_handle *h = matrix();
  cubert_copy_desc d = {.handle = h, .rank = 2, .shape = {4, 3}, .strides = {0, 1}, .elem_size = 4};
  float out[12] = {0};
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &d, out, sizeof out),
              CUBERT_CODE_UNSUPPORTED_STRIDES, "strides[0]");
  /* a zero stride on a dimension of one element is no broadcast: allowed */
  cubert_copy_desc one = {
      .handle = h, .rank = 2, .shape = {1, 3}, .strides = {0, 2}, .elem_size = 4};
  float row[3];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &one, row, sizeof row));
  cr_assert_eq(row[0], 0.0f);
  cr_assert_eq(row[1], 2.0f);
  cr_assert_eq(row[2], 4.0f);
  /* the client is still usable */
  cubert_copy_desc t = {.handle = h, .rank = 2, .shape = {4, 4}, .strides = {1, 4}, .elem_size = 4};
  float tr[16];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &t, tr, sizeof tr));
  cr_assert_eq(tr[1], 4.0f);
  cr_assert_eq(tr[4], 1.0f);
  cubert_handle_release(h);
}

/* The tensor form (issue 20, item 3): cubert_client_read_tensor/write_tensor take a tensor view
   as they take a descriptor, with the same result; a permuted view at an offset reads as its own
   row-major data, and the write puts values back through the same view. */
Test(tensor_read, tensor_view_form_matches_the_descriptor_form) {
  cubert_handle *h = matrix(); /* 0..15: a 4x4 row-major matrix */
  cubert_tensor t = {.handle = h,
                     .rank = 2,
                     .shape = {3, 2}, /* the transpose of rows 1..2, columns 1..3 */
                     .strides = {1, 4},
                     .elem_size = 4,
                     .dtype = CUBERT_DTYPE_F32,
                     .offset = 5};
  float by_tensor[6] = {0}, by_desc[6] = {0};
  ASSERT_OK(cubert_client_read_tensor(cts_client, &t, by_tensor, sizeof by_tensor));
  cubert_copy_desc d;
  ASSERT_OK(cubert_copy_desc_from_tensor(&t, &d));
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, by_desc, sizeof by_desc));
  const float expect[6] = {5, 9, 6, 10, 7, 11};
  for (int i = 0; i < 6; ++i) {
    cr_assert_eq(by_tensor[i], expect[i], "tensor form [%d]: %g, expected %g", i,
                 (double)by_tensor[i], (double)expect[i]);
    cr_assert_eq(by_desc[i], expect[i], "descriptor form [%d]", i);
  }
  /* write through the view: the 6 elements change, the other 10 keep their values */
  const float neg[6] = {-1, -2, -3, -4, -5, -6};
  ASSERT_OK(cubert_client_write_tensor(cts_client, &t, neg, sizeof neg));
  float all[16];
  ASSERT_OK(cubert_client_read(cts_client, h, all, sizeof all));
  const float after[16] = {0, 1, 2, 3, 4, -1, -3, -5, 8, -2, -4, -6, 12, 13, 14, 15};
  for (int i = 0; i < 16; ++i)
    cr_assert_eq(all[i], after[i], "element %d: %g, expected %g", i, (double)all[i],
                 (double)after[i]);
  /* a wrong size names the argument in either form */
  ASSERT_CODE(cubert_client_read_tensor(cts_client, &t, by_tensor, sizeof by_tensor - 4),
              CUBERT_CODE_INVALID_ARGUMENT, "dst_size");
  ASSERT_CODE(cubert_client_read_tensor(cts_client, (const cubert_tensor *)NULL, by_tensor, 4),
              CUBERT_CODE_INVALID_ARGUMENT, "tensor");
  cubert_handle_release(h);
}

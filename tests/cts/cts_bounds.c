/* Regression tests for issue 10 item 1: library kernels given info words larger than their
   buffers, or bad info words, stay inside the buffers (views included) on every server in
   checked and validate modes, and a 0-byte buffer does not crash a kernel. Before the kernel
   language these launches overwrote memory beyond a view or crashed PoCL. */
#include "cts.h"

TestSuite(bounds, .init = cts_setup, .fini = cts_teardown);

/* A 256-word buffer whose middle 64 words are a view; the kernel is told n = 200. */
Test(bounds, fill_on_a_view_with_a_far_size_stays_in_the_view) {
  uint32_t words[256];
  for (int i = 0; i < 256; ++i) words[i] = 0xA0000000u + (uint32_t)i;
  cubert_handle *whole = cts_buffer(words, sizeof words), *view = NULL;
  /* The view starts at a multiple of the device's base address alignment. */
  const uint64_t align = cubert_client_properties(cts_client)->memory.alignment;
  const uint64_t offset = align > 256 ? 0 : 256;
  ASSERT_OK(cubert_handle_view(whole, offset, 64 * 4, &view));
  cubert_execution_mode modes[2] = {CUBERT_EXECUTION_CHECKED, CUBERT_EXECUTION_VALIDATE};
  for (int m = 0; m < 2; ++m) {
    const uint64_t info[2] = {200, 7u + (uint32_t)m};
    cubert_kernel_args a = {&view, 1, info, 2};
    ASSERT_OK(cubert_client_launch_mode(cts_client, &cubert_kernel_fill_u32, cts_cubes(200, 64),
                                        cubert_cube_dim_new_3d(64, 1, 1), &a, modes[m]));
    cubert_status s = cubert_client_sync(cts_client);
    if (modes[m] == CUBERT_EXECUTION_VALIDATE) {
      cr_assert_not_null(s, "validate mode reports n = 200 against a 64-word view");
      cr_assert(strstr(cubert_status_message(s), "which holds 64 elements") != NULL, "%s",
                cubert_status_message(s));
      cubert_status_free(s);
    } else {
      cr_assert_null(s, "%s", cubert_status_message(s));
    }
    uint32_t got[256];
    cts_read(whole, got, sizeof got);
    const uint64_t first = offset / 4;
    for (uint64_t i = 0; i < 256; ++i) {
      const int inside = i >= first && i < first + 64;
      cr_assert_eq(got[i], inside ? 7u + (uint32_t)m : 0xA0000000u + (uint32_t)i,
                   "mode %d word %llu", m, (unsigned long long)i);
    }
  }
  cubert_handle_release(view);
  cubert_handle_release(whole);
}

Test(bounds, add_with_a_far_size_writes_only_its_output) {
  float a[100], b[100], out[100];
  for (int i = 0; i < 100; ++i) a[i] = (float)i, b[i] = 1.0f, out[i] = -1.0f;
  cubert_handle *h[3] = {cts_buffer(a, sizeof a), cts_buffer(b, sizeof b),
                         cts_buffer(out, sizeof out)};
  cubert_handle *guard = cts_buffer(out, sizeof out);
  const uint64_t info[1] = {1u << 30}; /* a billion units against 100-element buffers */
  cubert_kernel_args args = {h, 3, info, 1};
  ASSERT_OK(cubert_client_launch(cts_client, &cubert_kernel_add_f32, cts_cubes(1u << 20, 256),
                                 cubert_cube_dim_new_3d(256, 1, 1), &args));
  ASSERT_OK(cubert_client_sync(cts_client));
  cts_read(h[2], out, sizeof out);
  for (int i = 0; i < 100; ++i) cr_assert_eq(out[i], (float)i + 1.0f, "element %d", i);
  cts_read(guard, out, sizeof out);
  for (int i = 0; i < 100; ++i) cr_assert_eq(out[i], -1.0f, "guard element %d", i);
  for (int i = 0; i < 3; ++i) cubert_handle_release(h[i]);
  cubert_handle_release(guard);
}

Test(bounds, copy_strided_with_bad_info_words_stays_inside) {
  uint8_t src[64], dst[64];
  for (int i = 0; i < 64; ++i) src[i] = (uint8_t)i, dst[i] = 0xEE;
  cubert_handle *h[2] = {cts_buffer(src, sizeof src), cts_buffer(dst, sizeof dst)};
  cubert_handle *guard = cts_buffer(dst, sizeof dst);
  /* strides far past the source; rank 100; a shape whose product is not n */
  uint64_t far[7] = {2, 4, 16, 4, 4, 1u << 20, 1};
  uint64_t rank100[3 + 200] = {100, 4, 16};
  uint64_t bad_n[7] = {2, 4, 16, 2, 2, 2, 1};
  uint64_t *infos[3] = {far, rank100, bad_n};
  const uint32_t counts[3] = {7, 203, 7};
  for (int k = 0; k < 3; ++k) {
    cubert_kernel_args a = {h, 2, infos[k], counts[k]};
    ASSERT_OK(cubert_client_launch_mode(
        cts_client, &cubert_kernel_copy_strided_portable, cubert_cube_count_new_3d(1, 1, 1),
        cubert_cube_dim_new_3d(16, 1, 1), &a, CUBERT_EXECUTION_CHECKED));
    ASSERT_OK(cubert_client_sync(cts_client));
  }
  uint8_t got[64];
  cts_read(guard, got, sizeof got);
  for (int i = 0; i < 64; ++i) cr_assert_eq(got[i], 0xEE, "guard byte %d", i);
  for (int i = 0; i < 2; ++i) cubert_handle_release(h[i]);
  cubert_handle_release(guard);
}

/* A 0-byte buffer (bound as a NULL cl_mem on OpenCL) with a nonzero n: nothing is touched. */
Test(bounds, zero_byte_buffer_is_never_dereferenced) {
  cubert_handle *empty = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 0, &empty));
  const uint64_t info[2] = {1000, 5};
  cubert_kernel_args a = {&empty, 1, info, 2};
  ASSERT_OK(cubert_client_launch(cts_client, &cubert_kernel_fill_u32, cts_cubes(1000, 64),
                                 cubert_cube_dim_new_3d(64, 1, 1), &a));
  ASSERT_OK(cubert_client_sync(cts_client));
  cubert_handle_release(empty);
}

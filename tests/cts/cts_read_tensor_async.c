/* Asynchronous strided reads (issue 25, item 2; seed-client.rs.txt `read_tensor_async`,
   `read_one_tensor_async`, and `read_async` of a byte range): pitched, permuted and offset
   regions read through a future that is pending while the stream is held, the scratch buffer
   of a gathered region freed at completion, several regions in one future, byte ranges of a
   handle without a view, and the argument errors (nothing queued, nothing written). */
#include <stdint.h>

#include "cts.h"
#include "cts_gate.h"

TestSuite(read_tensor_async, .init = cts_setup, .fini = cts_teardown);

enum { ROWS = 6, COLS = 5, PITCH = 8 }; /* a 6x5 f32 matrix in rows of 8 */

/* 64 floats: element i holds i * 0.25 - 3. */
static cubert_handle *pitched_source(void) {
  float m[ROWS * PITCH];
  for (int i = 0; i < ROWS * PITCH; ++i) m[i] = (float)i * 0.25f - 3.0f;
  return cts_buffer(m, sizeof m);
}

static float at(uint64_t i) {
  return (float)i * 0.25f - 3.0f;
}

static cubert_copy_desc pitched(cubert_handle *h) {
  return (cubert_copy_desc){
      .handle = h, .rank = 2, .shape = {ROWS, COLS}, .strides = {PITCH, 1}, .elem_size = 4};
}

/* The transpose of the pitched matrix: element (c, r) at r * PITCH + c, from element offset 1. */
static cubert_copy_desc permuted(cubert_handle *h) {
  return (cubert_copy_desc){.handle = h,
                            .rank = 2,
                            .shape = {COLS - 1, ROWS},
                            .strides = {1, PITCH},
                            .elem_size = 4,
                            .offset = 1};
}

static void expect_pitched(const float *v) {
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c)
      cr_assert_eq(v[r * COLS + c], at((uint64_t)(r * PITCH + c)), "pitched (%d, %d)", r, c);
}

static void expect_permuted(const float *v) {
  for (int c = 0; c < COLS - 1; ++c)
    for (int r = 0; r < ROWS; ++r)
      cr_assert_eq(v[c * ROWS + r], at((uint64_t)(r * PITCH + c + 1)), "permuted (%d, %d)", c, r);
}

Test(read_tensor_async, pitched_and_permuted_reads_are_pending_until_the_stream_runs) {
  cubert_handle *h = pitched_source();
  cubert_copy_desc p = pitched(h), t = permuted(h);
  float vp[ROWS * COLS], vt[(COLS - 1) * ROWS];
  /* Blocking reads first: the gather's launch is tuned once per shape, which runs the stream. */
  ASSERT_OK(cubert_client_read_tensor(cts_client, &p, vp, sizeof vp));
  ASSERT_OK(cubert_client_read_tensor(cts_client, &t, vt, sizeof vt));
  memset(vp, 0, sizeof vp);
  memset(vt, 0, sizeof vt);
  cts_gate gate;
  cts_gate_close(&gate);
  cubert_future *fp = NULL, *ft = NULL;
  double t0 = cts_gate_now_s();
  ASSERT_OK(cubert_client_read_tensor_async(cts_client, &p, vp, sizeof vp, &fp));
  ASSERT_OK(cubert_client_read_tensor_async(cts_client, &t, vt, sizeof vt, &ft));
  cr_assert_lt(cts_gate_now_s() - t0, 10.0, "read_tensor_async blocked");
  int ready = 1;
  ASSERT_OK(cubert_future_poll(fp, &ready));
  cr_assert_eq(ready, 0, "the pitched read completed behind a closed gate");
  ASSERT_OK(cubert_future_poll(ft, &ready));
  cr_assert_eq(ready, 0, "the permuted read completed behind a closed gate");
  cubert_handle_release(h); /* the queued gathers keep the memory */
  cts_gate_open(&gate);
  ASSERT_OK(cubert_future_wait(fp));
  ASSERT_OK(cubert_future_wait(ft));
  cubert_future_release(fp);
  cubert_future_release(ft);
  expect_pitched(vp);
  expect_permuted(vt);
}

/* The gathered region's scratch buffer is in use while the future is pending and given back
   once it completed. */
Test(read_tensor_async, the_scratch_buffer_is_freed_at_completion) {
  cubert_handle *h = pitched_source();
  cubert_copy_desc p = pitched(h);
  float v[ROWS * COLS];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &p, v, sizeof v)); /* tuned, see above */
  ASSERT_OK(cubert_client_sync(cts_client));
  /* On OpenCL the gather is measured in the background (cubert_tune_execute): its scratch
     copies come and go on the device until it is done. */
  ASSERT_OK(cubert_tune_wait(cts_client));
  cubert_memory_usage before, during, after;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &before));
  cts_gate gate;
  cts_gate_close(&gate);
  cubert_memory_usage gated;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &gated));
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_tensor_async(cts_client, &p, v, sizeof v, &f));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &during));
  cr_assert_geq(during.bytes_in_use, gated.bytes_in_use + sizeof v,
                "no scratch buffer in use while the read is pending (%llu -> %llu bytes)",
                (unsigned long long)gated.bytes_in_use, (unsigned long long)during.bytes_in_use);
  cts_gate_open(&gate);
  ASSERT_OK(cubert_future_wait(f));
  ASSERT_OK(cubert_client_sync(cts_client));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.bytes_in_use, before.bytes_in_use, "the scratch buffer was kept");
  cubert_future_release(f);
  expect_pitched(v);
  cubert_handle_release(h);
}

Test(read_tensor_async, several_regions_and_a_tensor_view_in_one_future) {
  cubert_handle *h = pitched_source();
  cubert_copy_desc descs[3] = {pitched(h),
                               permuted(h),
                               /* contiguous: row 2, a byte range of the handle */
                               {.handle = h,
                                .rank = 1,
                                .shape = {COLS},
                                .strides = {1},
                                .elem_size = 4,
                                .offset = 2 * PITCH}};
  float vp[ROWS * COLS], vt[(COLS - 1) * ROWS], row[COLS];
  void *dsts[3] = {vp, vt, row};
  size_t sizes[3] = {sizeof vp, sizeof vt, sizeof row};
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_tensors_async(cts_client, 3, descs, dsts, sizes, &f));
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  expect_pitched(vp);
  expect_permuted(vt);
  for (int c = 0; c < COLS; ++c) cr_assert_eq(row[c], at(2 * PITCH + c));
  /* The tensor form, on a view at an offset. */
  cubert_tensor view = {.handle = h,
                        .rank = 2,
                        .shape = {2, 3},
                        .strides = {PITCH, 2},
                        .elem_size = 4,
                        .dtype = CUBERT_DTYPE_F32,
                        .offset = 3};
  float vv[6];
  ASSERT_OK(cubert_client_read_tensor_view_async(cts_client, &view, vv, sizeof vv, &f));
  cubert_future_release(f);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) cr_assert_eq(vv[r * 3 + c], at((uint64_t)(3 + r * PITCH + 2 * c)));
  /* An empty region reads nothing, even at an offset past the handle (as read_tensor). */
  cubert_copy_desc empty = {
      .handle = h, .rank = 2, .shape = {0, 4}, .strides = {4, 1}, .elem_size = 4, .offset = 1000};
  ASSERT_OK(cubert_client_read_tensor_async(cts_client, &empty, NULL, 0, &f));
  cubert_future_release(f);
  /* count 0: a complete future. */
  ASSERT_OK(cubert_client_read_tensors_async(cts_client, 0, NULL, NULL, NULL, &f));
  int ready = 0;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1);
  cubert_future_release(f);
  cubert_handle_release(h);
}

Test(read_tensor_async, bad_regions_are_refused_before_anything_is_queued) {
  cubert_handle *h = pitched_source();
  cubert_copy_desc good = pitched(h), broadcast = pitched(h), past = pitched(h);
  broadcast.strides[0] = 0;
  past.offset = 40; /* the last row reaches element 40 + 5 * 8 + 4 > 48 */
  float v[ROWS * COLS], w[ROWS * COLS];
  memset(v, 0, sizeof v);
  cubert_future *f = (cubert_future *)1;
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &broadcast, v, sizeof v, &f),
              CUBERT_CODE_UNSUPPORTED_STRIDES, "strides[0]");
  cr_assert_null(f);
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &past, v, sizeof v, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "past the end of the handle");
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &good, v, sizeof v - 4, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "dst_size");
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &good, NULL, sizeof v, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, NULL, v, sizeof v, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "desc is NULL");
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &good, v, sizeof v, NULL),
              CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  /* The second of two regions is bad: the first is not read either. */
  cubert_copy_desc two[2] = {good, broadcast};
  void *dsts[2] = {v, w};
  size_t sizes[2] = {sizeof v, sizeof w};
  ASSERT_CODE(cubert_client_read_tensors_async(cts_client, 2, two, dsts, sizes, &f),
              CUBERT_CODE_UNSUPPORTED_STRIDES, "descs[1]");
  ASSERT_CODE(cubert_client_read_tensors_async(cts_client, 2, two, NULL, sizes, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "must be non-NULL for count 2");
  ASSERT_OK(cubert_client_sync(cts_client));
  for (int i = 0; i < ROWS * COLS; ++i) cr_assert_eq(v[i], 0.0f, "dst was written");
  cubert_handle_release(h);
  ASSERT_CODE(cubert_client_read_tensor_async(cts_client, &good, v, sizeof v, &f),
              CUBERT_CODE_NOT_FOUND, NULL);
}

Test(read_tensor_async, read_range_async_reads_bytes_of_a_handle_without_a_view) {
  cubert_handle *h = pitched_source();
  float v[7] = {0};
  cubert_future *f = NULL;
  /* Byte offset 12: element 3, at an offset no OpenCL sub-buffer could start at. */
  ASSERT_OK(cubert_client_read_range_async(cts_client, h, 12, v, sizeof v, &f));
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  for (int i = 0; i < 7; ++i) cr_assert_eq(v[i], at((uint64_t)(3 + i)));
  ASSERT_CODE(cubert_client_read_range_async(cts_client, h, 190, v, 4, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "read of 4 bytes at offset 190 goes past the end");
  ASSERT_CODE(cubert_client_read_range_async(cts_client, h, UINT64_MAX, v, 4, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "past the end of the handle (192 bytes)");
  ASSERT_CODE(cubert_client_read_range_async(cts_client, h, 0, NULL, 4, &f),
              CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  ASSERT_OK(cubert_client_read_range_async(cts_client, h, 192, NULL, 0, &f));
  cubert_future_release(f);
  cubert_handle_release(h);
}

/* Buffers and handles: create, read, write, views, bad handles, and the client staying usable
   after every error. */
#include "cts.h"

TestSuite(buffers, .init = cts_setup, .fini = cts_teardown);

Test(buffers, create_then_read_returns_the_data) {
  uint32_t data[3] = {0, 1, 2}, back[3] = {9, 9, 9};
  cubert_handle *h = cts_buffer(data, sizeof data);
  cr_assert_eq(cubert_handle_size(h), sizeof data);
  cts_read(h, back, sizeof back);
  cr_assert_arr_eq(back, data, sizeof data);
  cubert_handle_release(h);
}

Test(buffers, empty_buffer_has_its_size_and_reads) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4, &h));
  cr_assert_eq(cubert_handle_size(h), 4);
  uint8_t back[4];
  cts_read(h, back, 4);
  cubert_handle_release(h);
}

Test(buffers, zero_sized_buffer) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 0, &h));
  cr_assert_eq(cubert_handle_size(h), 0);
  ASSERT_OK(cubert_client_read(cts_client, h, NULL, 0));
  cubert_handle_release(h);
}

Test(buffers, write_and_read_ranges) {
  uint8_t data[64];
  for (int i = 0; i < 64; ++i) data[i] = (uint8_t)i;
  cubert_handle *h = cts_buffer(data, sizeof data);
  uint8_t patch[8] = {200, 201, 202, 203, 204, 205, 206, 207};
  ASSERT_OK(cubert_client_write(cts_client, h, 24, patch, sizeof patch));
  uint8_t back[8];
  ASSERT_OK(cubert_client_read_range(cts_client, h, 24, back, sizeof back));
  cr_assert_arr_eq(back, patch, sizeof patch);
  ASSERT_OK(cubert_client_read_range(cts_client, h, 16, back, sizeof back));
  for (int i = 0; i < 8; ++i) cr_assert_eq(back[i], 16 + i);
  cubert_handle_release(h);
}

Test(buffers, large_buffer_round_trip) {
  size_t n = 6u << 20;
  uint32_t *data = malloc(n * 4), *back = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) data[i] = (uint32_t)(i * 2654435761u);
  cubert_handle *h = cts_buffer(data, n * 4);
  cts_read(h, back, n * 4);
  cr_assert(memcmp(data, back, n * 4) == 0);
  cubert_handle_release(h);
  free(data);
  free(back);
}

Test(buffers, read_past_the_end_names_both_sizes) {
  uint8_t data[16] = {0};
  cubert_handle *h = cts_buffer(data, sizeof data);
  uint8_t back[32];
  ASSERT_CODE(cubert_client_read(cts_client, h, back, 17), CUBERT_CODE_INVALID_ARGUMENT, "16");
  ASSERT_CODE(cubert_client_read_range(cts_client, h, 8, back, 9), CUBERT_CODE_INVALID_ARGUMENT,
              "16 bytes");
  ASSERT_CODE(cubert_client_write(cts_client, h, 12, data, 8), CUBERT_CODE_INVALID_ARGUMENT,
              "16 bytes");
  /* still usable */
  cts_read(h, back, 16);
  cubert_handle_release(h);
}

Test(buffers, released_handle_is_not_found) {
  uint32_t v = 7, back = 0;
  cubert_handle *h = cts_buffer(&v, 4);
  cubert_handle_release(h);
  ASSERT_CODE(cubert_client_read(cts_client, h, &back, 4), CUBERT_CODE_NOT_FOUND, "released");
  ASSERT_CODE(cubert_client_write(cts_client, h, 0, &v, 4), CUBERT_CODE_NOT_FOUND, NULL);
  cubert_handle *bufs[1] = {h};
  uint64_t info[2] = {1, 5};
  cubert_kernel_args args = {bufs, 1, info, 2};
  ASSERT_CODE(
      cubert_client_launch(cts_client, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                           cubert_cube_dim_new_3d(1, 1, 1), &args),
      CUBERT_CODE_NOT_FOUND, "args->buffers[0]");
  /* the client stays usable */
  cubert_handle *h2 = cts_buffer(&v, 4);
  cts_read(h2, &back, 4);
  cr_assert_eq(back, 7);
  cubert_handle_release(h2);
}

Test(buffers, handle_of_another_client_of_the_device_is_valid) {
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_create(cts_device(), &other));
  uint32_t v = 11, back = 0;
  cubert_handle *shared = NULL;
  ASSERT_OK(cubert_client_create_buffer(other, &v, 4, &shared));
  cubert_client_release(other); /* the handle and cts_client keep the instance */
  ASSERT_OK(cubert_client_read(cts_client, shared, &back, 4));
  cr_assert_eq(back, 11);
  cubert_handle_release(shared);
}

Test(buffers, handle_of_a_private_instance_is_not_found) {
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &other));
  uint32_t v = 3, back = 0;
  cubert_handle *foreign = NULL;
  ASSERT_OK(cubert_client_create_buffer(other, &v, 4, &foreign));
  ASSERT_CODE(cubert_client_read(cts_client, foreign, &back, 4), CUBERT_CODE_NOT_FOUND,
              "another device");
  ASSERT_OK(cubert_client_read(other, foreign, &back, 4));
  cr_assert_eq(back, 3);
  /* release order never matters: the handle keeps its device alive */
  cubert_client_release(other);
  cubert_handle_release(foreign);
}

Test(buffers, views_share_memory) {
  uint32_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  cubert_handle *h = cts_buffer(data, sizeof data);
  cubert_handle *view = NULL;
  ASSERT_OK(cubert_handle_view(h, 16, 8, &view));
  cr_assert_eq(cubert_handle_size(view), 8);
  uint32_t back[2];
  cts_read(view, back, 8);
  cr_assert_eq(back[0], 5);
  cr_assert_eq(back[1], 6);
  cubert_handle *bad = NULL;
  ASSERT_CODE(cubert_handle_view(h, 30, 8, &bad), CUBERT_CODE_INVALID_ARGUMENT, "32 bytes");
  cubert_handle_release(h); /* the view keeps the memory */
  cts_read(view, back, 8);
  cr_assert_eq(back[1], 6);
  cubert_handle_release(view);
}

Test(buffers, null_arguments_are_rejected) {
  cubert_handle *h = NULL;
  ASSERT_CODE(cubert_client_create_buffer(cts_client, NULL, 8, &h), CUBERT_CODE_INVALID_ARGUMENT,
              "data");
  ASSERT_CODE(cubert_client_create_buffer(NULL, "x", 1, &h), CUBERT_CODE_INVALID_ARGUMENT,
              "client");
  ASSERT_CODE(cubert_client_read(cts_client, NULL, NULL, 0), CUBERT_CODE_INVALID_ARGUMENT,
              "handle");
}

Test(buffers, memory_is_reused_after_release) {
  cubert_memory_usage before, after;
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 1 << 20, &h));
  cubert_handle_release(h);
  ASSERT_OK(cubert_client_memory_usage(cts_client, &before));
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(cubert_client_empty(cts_client, 1 << 20, &h));
    cubert_handle_release(h);
  }
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.bytes_reserved, before.bytes_reserved);
  cr_assert_eq(after.bytes_in_use, 0);
  ASSERT_OK(cubert_client_memory_cleanup(cts_client));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.bytes_reserved, 0);
}

Test(buffers, unknown_selector_is_not_found_and_lists_backends) {
  cubert_client *c = NULL;
  ASSERT_CODE(cubert_client_create("tpu", &c), CUBERT_CODE_NOT_FOUND, "cpu");
  cr_assert_null(c);
  ASSERT_CODE(cubert_client_create("cpu:7", &c), CUBERT_CODE_NOT_FOUND, NULL);
}

/* seed-client.rs.txt, memory_persistent_allocation: the persistent bracket as one call. Buffers
   the task creates come from the persistent pool (the last pool of the stream's report); the
   window is closed after the task, also when the task fails (its error is returned). */
static cubert_status make_two(cubert_client *client, void *arg) {
  cubert_handle **out = arg;
  CUBERT_RETURN_IF_ERROR(cubert_client_empty(client, 12345, &out[0]));
  return cubert_client_empty(client, 777, &out[1]);
}

static cubert_status failing_task(cubert_client *client, void *arg) {
  (void)client;
  (void)arg;
  return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "the task failed (4711)");
}

static uint64_t persistent_allocs(void) {
  static cubert_memory_report report;
  cr_assert_null(cubert_client_memory_report(cts_client, &report));
  cr_assert_gt(report.pool_count, 0);
  const cubert_pool_report *p = &report.pools[report.pool_count - 1];
  cr_assert_eq(p->config.kind, CUBERT_POOL_PERSISTENT);
  return p->usage.number_allocs;
}

Test(buffers, persistent_bracket_allocates_from_the_persistent_pool) {
  const uint64_t before = persistent_allocs();
  cubert_handle *h[2] = {NULL, NULL};
  cr_assert_null(cubert_client_memory_persistent(cts_client, make_two, h));
  cr_assert_eq(persistent_allocs(), before + 2);
  /* Closed: the next buffer does not come from the persistent pool, and AUTO has no window
     left to close. */
  cubert_handle *after = NULL;
  cr_assert_null(cubert_client_empty(cts_client, 12345, &after));
  cr_assert_eq(persistent_allocs(), before + 2);
  cubert_status s = cubert_client_allocation_mode(cts_client, CUBERT_ALLOCATION_AUTO);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
  /* A failing task: its error comes back and the window is closed all the same. */
  s = cubert_client_memory_persistent(cts_client, failing_task, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cr_assert(strstr(cubert_status_message(s), "4711"), "%s", cubert_status_message(s));
  cubert_status_free(s);
  s = cubert_client_allocation_mode(cts_client, CUBERT_ALLOCATION_AUTO);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
  s = cubert_client_memory_persistent(cts_client, NULL, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cr_assert(strstr(cubert_status_message(s), "task"), "%s", cubert_status_message(s));
  cubert_status_free(s);
  cubert_handle_release(h[0]);
  cubert_handle_release(h[1]);
  cubert_handle_release(after);
}

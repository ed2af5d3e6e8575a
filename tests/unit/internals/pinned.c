/* Pinned host memory for users (issue 25, item 1; seed-client.rs.txt `reserve_staging`,
   `create_from_slice_pinned`, `create_tensors_from_slices_pinned`, and seed-server-base.rs.txt
   `ServerUtilities`/`staging`, whose default is the heap fallback): blocks reserved through a
   client, buffers and tensors created from them, reads and writes into and out of them, the
   heap fallback on the CPU server, the error cases, and the rule for a block released while a
   queued read still fills it. */
#include <stdint.h>

#include "client.h"
#include "cts.h"
#include "cts_gate.h"
#include "device.h"
#include "pinned_host.h"
#ifdef CUBERT_WITH_OPENCL
#include "opencl/api.h"
#include "opencl/pinned.h"
#include "opencl/server.h"
#endif

TestSuite(pinned, .init = cts_setup, .fini = cts_teardown);

static uint32_t pattern(size_t i, uint32_t salt) {
  return (uint32_t)(i * 2654435761u) ^ salt;
}

static void fill(uint32_t *p, size_t n, uint32_t salt) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern(i, salt);
}

static void expect_pattern(const uint32_t *p, size_t n, uint32_t salt, const char *what) {
  for (size_t i = 0; i < n; ++i)
    cr_assert_eq(p[i], pattern(i, salt), "%s: element %zu is %08x, expected %08x", what, i, p[i],
                 pattern(i, salt));
}

/* create_buffer, write, read, read_range and read_async with the host side in pinned blocks,
   on `client`: 3 MiB, past the OpenCL server's staging threshold for reads (2 MiB). */
static void roundtrip(cubert_client *client) {
  enum { N = 3 << 18 }; /* u32 elements: 3 MiB */
  uint32_t *a = NULL, *b = NULL;
  ASSERT_OK(cubert_client_reserve_pinned(client, N * 4, (void **)&a));
  ASSERT_OK(cubert_client_reserve_pinned(client, N * 4, (void **)&b));
  cr_assert_eq((uintptr_t)a % 64, 0, "blocks are 64-byte aligned");
  fill(a, N, 0x1234);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(client, a, N * 4, &h));
  memset(b, 0, N * 4);
  ASSERT_OK(cubert_client_read(client, h, b, N * 4));
  expect_pattern(b, N, 0x1234, "create_buffer then read");
  /* A write from the middle of a block, then a range read into another place of one. */
  fill(a, N, 0x77);
  ASSERT_OK(cubert_client_write(client, h, 4096, a + 1024, N * 4 - 8192));
  memset(b, 0, N * 4);
  ASSERT_OK(cubert_client_read_range(client, h, 4096, b + 1, N * 4 - 8192));
  for (size_t i = 0; i < N - 2048; ++i)
    cr_assert_eq(b[1 + i], pattern(1024 + i, 0x77), "write/read_range: element %zu", i);
  cubert_future *f = NULL;
  memset(b, 0, N * 4);
  ASSERT_OK(cubert_client_read_async(client, h, b, N * 4, &f));
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  for (size_t i = 0; i < 1024; ++i) cr_assert_eq(b[i], pattern(i, 0x1234), "read_async %zu", i);
  for (size_t i = 1024; i < N - 1024; ++i)
    cr_assert_eq(b[i], pattern(i, 0x77), "read_async %zu", i);
  cubert_handle_release(h);
  ASSERT_OK(cubert_pinned_release(a));
  ASSERT_OK(cubert_pinned_release(b));
}

Test(pinned, blocks_carry_create_write_read_and_read_async) {
  size_t live = cubert_pinned_host_live_count();
  roundtrip(cts_client);
  cr_assert_eq(cubert_pinned_host_live_count(), live, "a block was not given back");
}

/* The heap fallback where the server has no pinned memory (the CPU server), the server's own
   memory where it has some (OpenCL: host_alloc). */
Test(pinned, kind_reports_the_server_memory_or_the_heap_fallback) {
  void *p = NULL;
  ASSERT_OK(cubert_client_reserve_pinned(cts_client, 100, &p));
  cubert_pinned_kind want = cts_is_opencl() ? CUBERT_PINNED_DEVICE : CUBERT_PINNED_HEAP;
  cr_assert_eq(cubert_pinned_kind_of(p), want);
  cr_assert_eq(cubert_pinned_kind_of((char *)p + 99), want, "the last byte is in the block");
  int local = 0;
  cr_assert_eq(cubert_pinned_kind_of(&local), CUBERT_PINNED_NONE);
  cr_assert_eq(cubert_pinned_kind_of(NULL), CUBERT_PINNED_NONE);
  ASSERT_OK(cubert_pinned_release(p));
  cr_assert_eq(cubert_pinned_kind_of(p), CUBERT_PINNED_NONE, "released");
}

#ifdef CUBERT_WITH_OPENCL
/* A host-unified device (PoCL) has no use for pinned memory, so its server hands out plain
   memory; with staging forced on, as on a GPU, host_alloc maps a CL_MEM_ALLOC_HOST_PTR buffer
   that the server's registry knows, and reads and writes from it skip the staging copy. */
Test(pinned, opencl_blocks_are_registered_pinned_ranges_when_the_server_stages) {
  if (!cts_is_opencl()) cr_skip_test("OpenCL server only");
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_ocl_server_set_staging(cubert_client_device(c)->server, 1);
  void *p = NULL;
  ASSERT_OK(cubert_client_reserve_pinned(c, 5 << 20, &p));
  cr_assert_eq(cubert_pinned_kind_of(p), CUBERT_PINNED_DEVICE);
  cr_assert(cubert_ocl_is_pinned(p, 5 << 20), "the server does not see the block as pinned");
  cr_assert(cubert_ocl_is_pinned((char *)p + 4096, 4096));
  ASSERT_OK(cubert_pinned_release(p));
  cr_assert(!cubert_ocl_is_pinned(p, 1), "a released block stays registered");
  roundtrip(c);
  cubert_client_release(c);
}
#endif

Test(pinned, bad_arguments_name_the_argument_and_the_limit) {
  void *p = (void *)1;
  ASSERT_CODE(cubert_client_reserve_pinned(cts_client, 0, &p), CUBERT_CODE_INVALID_ARGUMENT,
              "size is 0 bytes; it must be 1 to");
  cr_assert_null(p);
  ASSERT_CODE(cubert_client_reserve_pinned(cts_client, SIZE_MAX, &p), CUBERT_CODE_INVALID_ARGUMENT,
              "CUBERT_PINNED_MAX_BYTES");
  ASSERT_CODE(cubert_client_reserve_pinned(cts_client, 8, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out is NULL");
  ASSERT_CODE(cubert_client_reserve_pinned(NULL, 8, &p), CUBERT_CODE_INVALID_ARGUMENT, NULL);
  cubert_client *gone = NULL;
  ASSERT_OK(cubert_client_create(cts_device(), &gone));
  cubert_client_release(gone);
  ASSERT_CODE(cubert_client_reserve_pinned(gone, 8, &p), CUBERT_CODE_NOT_FOUND, NULL);

  ASSERT_OK(cubert_pinned_release(NULL));
  ASSERT_OK(cubert_client_reserve_pinned(cts_client, 64, &p));
  ASSERT_CODE(cubert_pinned_release((char *)p + 8), CUBERT_CODE_INVALID_ARGUMENT,
              "lies 8 bytes into the block");
  cr_assert_eq(cubert_pinned_kind_of(p),
               cts_is_opencl() ? CUBERT_PINNED_DEVICE : CUBERT_PINNED_HEAP,
               "a refused release freed the block");
  ASSERT_OK(cubert_pinned_release(p));
  ASSERT_CODE(cubert_pinned_release(p), CUBERT_CODE_INVALID_ARGUMENT, "released already");
  int local = 0;
  ASSERT_CODE(cubert_pinned_release(&local), CUBERT_CODE_INVALID_ARGUMENT, "no live block");
}

/* The rule: a release while a queued read still fills the block returns at once, and the block
   is given back when the read's future completed (never while the DMA runs: the ASan build
   would report the write into freed memory). */
Test(pinned, a_block_released_during_a_read_is_given_back_when_the_read_completed) {
  enum { N = 1 << 16 };
  uint32_t *src = malloc(N * 4);
  fill(src, N, 0xbeef);
  cubert_handle *h = cts_buffer(src, N * 4);
  void *block = NULL;
  size_t live = cubert_pinned_host_live_count();
  ASSERT_OK(cubert_client_reserve_pinned(cts_client, N * 4, &block));
  cts_gate gate;
  cts_gate_close(&gate);
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_async(cts_client, h, block, N * 4, &f));
  int ready = 1;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 0, "the read finished behind a closed gate");
  ASSERT_OK(cubert_pinned_release(block));
  cr_assert_eq(cubert_pinned_kind_of(block), CUBERT_PINNED_NONE, "released blocks are not lent");
  cr_assert_eq(cubert_pinned_host_live_count(), live + 1, "freed while the read is queued");
  ASSERT_CODE(cubert_pinned_release(block), CUBERT_CODE_INVALID_ARGUMENT, "released already");
  cts_gate_open(&gate);
  ASSERT_OK(cubert_future_wait(f));
  cr_assert_eq(cubert_pinned_host_live_count(), live, "not given back at completion");
  cubert_future_release(f);
  /* A block that is not released stays the caller's after the future completed. */
  ASSERT_OK(cubert_client_reserve_pinned(cts_client, N * 4, &block));
  ASSERT_OK(cubert_client_read_async(cts_client, h, block, N * 4, &f));
  cubert_future_release(f);
  expect_pattern(block, N, 0xbeef, "read_async into a block");
  ASSERT_OK(cubert_pinned_release(block));
  cr_assert_eq(cubert_pinned_host_live_count(), live);
  cubert_handle_release(h);
  free(src);
}

/* A block keeps its device instance: the client may go first. */
Test(pinned, a_block_outlives_its_client) {
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  void *p = NULL;
  ASSERT_OK(cubert_client_reserve_pinned(c, 1000, &p));
  cubert_client_release(c);
  memset(p, 0xab, 1000);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(cts_client, p, 1000, &h));
  unsigned char back[1000];
  cts_read(h, back, sizeof back);
  for (int i = 0; i < 1000; ++i) cr_assert_eq(back[i], 0xab);
  ASSERT_OK(cubert_pinned_release(p));
  cubert_handle_release(h);
}

Test(pinned, create_buffer_pinned_copies_any_source) {
  enum { N = 10000 };
  uint32_t *src = malloc(N * 4), back[N];
  fill(src, N, 0x5150);
  size_t live = cubert_pinned_host_live_count();
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer_pinned(cts_client, src, N * 4, &h));
  cr_assert_eq(cubert_pinned_host_live_count(), live, "the staging block was kept");
  cts_read(h, back, sizeof back);
  expect_pattern(back, N, 0x5150, "create_buffer_pinned from malloc'd memory");
  cubert_handle_release(h);
  /* From a block: created from it directly. */
  uint32_t *block = NULL;
  ASSERT_OK(cubert_client_reserve_pinned(cts_client, N * 4, (void **)&block));
  fill(block, N, 0x99);
  ASSERT_OK(cubert_client_create_buffer_pinned(cts_client, block, N * 4, &h));
  ASSERT_OK(cubert_pinned_release(block));
  cts_read(h, back, sizeof back);
  expect_pattern(back, N, 0x99, "create_buffer_pinned from a block");
  cubert_handle_release(h);
  ASSERT_CODE(cubert_client_create_buffer_pinned(cts_client, NULL, 4, &h),
              CUBERT_CODE_INVALID_ARGUMENT, "data is NULL");
  ASSERT_OK(cubert_client_create_buffer_pinned(cts_client, NULL, 0, &h));
  cr_assert_eq(cubert_handle_size(h), 0);
  cubert_handle_release(h);
  free(src);
}

/* Tensors: a pitched one (the device's pitch alignment forced to 64 bytes on a private instance, as
   a GPU pitches), a contiguous one and one left empty, in one call. */
Test(pinned, create_tensors_pinned_lays_rows_out_at_the_pitch) {
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_client_device(c)->pitch_align = 64;
  enum { R = 7, C = 5 };
  float m[R * C], v[11];
  for (int i = 0; i < R * C; ++i) m[i] = (float)i * 1.5f - 3.0f;
  for (int i = 0; i < 11; ++i) v[i] = (float)(100 + i);
  cubert_layout_desc descs[3] = {
      {.strategy = CUBERT_LAYOUT_OPTIMIZED, .rank = 2, .shape = {R, C}, .dtype = CUBERT_DTYPE_F32},
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 1, .shape = {11}, .dtype = CUBERT_DTYPE_F32},
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 1, .shape = {3}, .dtype = CUBERT_DTYPE_F32}};
  const void *data[3] = {m, v, NULL};
  cubert_tensor t[3];
  size_t live = cubert_pinned_host_live_count();
  ASSERT_OK(cubert_client_create_tensors_pinned(c, data, descs, 3, t));
  cr_assert_eq(cubert_pinned_host_live_count(), live, "a staging block was kept");
  cr_assert_eq(t[0].strides[0], 8, "rows of 20 bytes are pitched to 32 bytes (cubert/layout.h)");
  float back[R * C], vb[11];
  ASSERT_OK(cubert_client_read_tensor(c, &t[0], back, sizeof back));
  for (int i = 0; i < R * C; ++i) cr_assert_eq(back[i], m[i], "pitched element %d", i);
  float raw[8 * R - 3]; /* every row at its pitch of 8, up to the end of the last row */
  ASSERT_OK(cubert_client_read_range(c, t[0].handle, 0, raw, sizeof raw));
  for (int i = 0; i < (int)(sizeof raw / 4); ++i)
    cr_assert_eq(raw[i], i % 8 < C ? m[i / 8 * C + i % 8] : 0.0f, "byte %d of the span", 4 * i);
  ASSERT_OK(cubert_client_read_tensor(c, &t[1], vb, sizeof vb));
  for (int i = 0; i < 11; ++i) cr_assert_eq(vb[i], v[i]);
  for (int i = 0; i < 3; ++i) cubert_tensor_release(&t[i]);
  ASSERT_CODE(cubert_client_create_tensors_pinned(c, data, descs, 0, t),
              CUBERT_CODE_INVALID_ARGUMENT, "count");
  cubert_client_release(c);
}

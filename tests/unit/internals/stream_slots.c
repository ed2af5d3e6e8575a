/* Stream slots at the documented limit (CUBERT_MAX_STREAMS=4096: every slot holds a stream of
   its own on both servers) and idle slots' pages given back when the storage runs short (the
   reservation's cleanup-and-retry reclaims other slots' idle pages before OUT_OF_MEMORY).
   Here rather than in the conformance suite: the setting is re-read in this process
   (core_env_set) and the storage limit wraps the device's storage. */
#include "client.h"
#include "cts.h"
#include "device.h"
#include "stream/slots.h"
#include "unit/core_env.h"

TestSuite(stream_slots, .init = cts_setup, .fini = cts_teardown);

enum { WORDS = 64, FILLED = 32 };

/* On stream `id`: a buffer written with id-dependent words, its first FILLED words overwritten
   by a launch, read back and checked on the same stream. */
static void use_stream(cubert_client *client, cubert_stream_id id) {
  cubert_client *view = NULL;
  ASSERT_OK(cubert_client_with_stream(client, id, &view));
  uint32_t data[WORDS], back[WORDS];
  for (uint32_t k = 0; k < WORDS; ++k) data[k] = (uint32_t)id * 131u + k;
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(view, data, sizeof data, &h));
  uint64_t info[2] = {FILLED, 0x5000000u + id};
  cubert_kernel_args args = {&h, 1, info, 2};
  ASSERT_OK(cubert_client_launch(view, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(FILLED, 1, 1), &args));
  ASSERT_OK(cubert_client_read(view, h, back, sizeof back));
  for (uint32_t k = 0; k < WORDS; ++k)
    cr_assert_eq(back[k], k < FILLED ? 0x5000000u + (uint32_t)id : data[k],
                 "stream %llu, word %u: %u", (unsigned long long)id, k, back[k]);
  cubert_handle_release(h);
  cubert_client_release(view);
}

/* The CPU server refused the 1,025th stream; OpenCL ran out of memory near stream 843, each idle
   slot keeping its page. */
Test(stream_slots, every_slot_of_the_documented_limit_runs_its_own_stream) {
  core_env_set("CUBERT_MAX_STREAMS", "4096");
  cr_assert_eq(cubert_config_get()->max_streams, CUBERT_MAX_STREAMS_LIMIT);
  cubert_client *c = NULL; /* an instance of its own, made with 4,096 slots */
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_device *device = cubert_client_device(c);
  cr_assert_eq(device->max_streams, 4096u);
  for (cubert_stream_id id = 0; id < 4096; ++id) use_stream(c, id);
  for (uint32_t i = 0; i < 4096; ++i) cr_assert(device->slots[i], "slot %u was never made", i);
  /* Every slot is still usable after all were made (the first ones again, and the last). */
  use_stream(c, 0);
  use_stream(c, 4095);
  cubert_client_release(c);
  core_env_set("CUBERT_MAX_STREAMS", NULL);
}

/* A storage that holds at most `page_limit` pages at once: the device's own, wrapped. */
static struct {
  cubert_status (*alloc)(void *ctx, uint64_t size, cubert_storage *out);
  void (*free)(void *ctx, cubert_storage *storage);
  uint32_t live, limit;
} limited;

static cubert_status limited_alloc(void *ctx, uint64_t size, cubert_storage *out) {
  if (limited.live >= limited.limit)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "test storage: %u pages, its limit",
                              limited.live);
  cubert_status s = limited.alloc(ctx, size, out);
  if (!s) ++limited.live;
  return s;
}

static void limited_free(void *ctx, cubert_storage *storage) {
  --limited.live;
  limited.free(ctx, storage);
}

/* Stream 1 leaves an idle page behind; stream 2 then finds the storage full: its reservation
   frees stream 1's idle page and succeeds. A page with a live handle is never taken. */
Test(stream_slots, an_idle_slots_page_is_reclaimed_when_the_storage_is_full) {
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_device *device = cubert_client_device(c);
  for (uint32_t i = 0; i < device->max_streams; ++i)
    cr_assert_null(device->slots[i], "slot %u exists before the storage is limited", i);
  limited.alloc = device->storage.alloc;
  limited.free = device->storage.free;
  limited.live = 0;
  limited.limit = 1;
  device->storage.alloc = limited_alloc; /* copied by every slot's memory manager */
  device->storage.free = limited_free;

  use_stream(c, 1);
  cubert_memory_usage usage;
  ASSERT_OK(cubert_client_memory_usage(c, &usage));
  cr_assert_eq(limited.live, 1);
  cr_assert_eq(usage.bytes_in_use, 0);
  const uint64_t page = usage.bytes_reserved;
  cr_assert_gt(page, 0, "stream 1 keeps no idle page: nothing to reclaim");

  cubert_client *second = NULL, *third = NULL;
  ASSERT_OK(cubert_client_with_stream(c, 2, &second));
  ASSERT_OK(cubert_client_with_stream(c, 3, &third));
  uint32_t data[WORDS], back[WORDS];
  for (uint32_t k = 0; k < WORDS; ++k) data[k] = 7000u + k;
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(second, data, sizeof data, &h));
  ASSERT_OK(cubert_client_memory_usage(c, &usage));
  cr_assert_eq(limited.live, 1, "stream 1's idle page was not freed");
  cr_assert_eq(usage.bytes_reserved, page);

  /* Stream 2's page holds a live handle: stream 3 gets OUT_OF_MEMORY, the data stays. */
  cubert_handle *refused = NULL;
  ASSERT_CODE(cubert_client_create_buffer(third, data, sizeof data, &refused),
              CUBERT_CODE_OUT_OF_MEMORY, NULL);
  cr_assert_null(refused);
  ASSERT_OK(cubert_client_read(second, h, back, sizeof back));
  cr_assert_arr_eq(back, data, sizeof data);
  cubert_handle_release(h);
  cubert_client_release(third);
  cubert_client_release(second);
  cubert_client_release(c);
}

/* CUBERT_POOLS_EXCLUSIVE=1 (lib/memory/unpooled_pool.c): every reservation is one storage
   allocation of exactly its size, at offset 0, freed as soon as it is released; nothing is
   shared or reused, the persistent window and installed layouts included. Then on the CPU
   server through the public API. Criterion runs each test in its own process, so the
   environment set here does not leak. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "base/config.h"
#include "cubert/cubert.h"
#include "memory_test_storage.h"

static void exclusive_on(void) {
  setenv("CUBERT_POOLS_EXCLUSIVE", "1", 1);
  cubert_config_reload_for_tests();
}

static cubert_slice *reserve(cubert_memory_manager *mm, uint64_t size) {
  cubert_slice *s = NULL;
  cubert_status st = cubert_memory_reserve(mm, size, &s);
  cr_assert_null(st, "reserve %llu: %s", (unsigned long long)size, cubert_status_message(st));
  cr_assert_eq(s->size, size);
  cr_assert_eq(s->offset, 0, "an unpooled slice starts its allocation");
  cr_assert_eq(s->padding, 0, "an unpooled slice ends where its allocation ends");
  return s;
}

Test(memory_unpooled, every_reservation_is_an_exact_allocation_of_its_own) {
  exclusive_on();
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  const uint64_t sizes[] = {100, 37, 3 * TS_MIB + 5, 100};
  cubert_slice *s[4];
  for (int i = 0; i < 4; ++i) {
    s[i] = reserve(mm, sizes[i]);
    cr_assert_eq(s[i]->page->size, sizes[i], "allocation %d holds %llu bytes, not %llu", i,
                 (unsigned long long)s[i]->page->size, (unsigned long long)sizes[i]);
    for (int j = 0; j < i; ++j) cr_assert_neq(s[i]->page, s[j]->page, "slices %d and %d", j, i);
  }
  cr_assert_eq(ts.allocs, 4);
  cr_assert_eq(ts.live_bytes, 237 + 3 * TS_MIB + 5);
  cubert_memory_usage u;
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(u.number_allocs, 4);
  cr_assert_eq(u.bytes_in_use, ts.live_bytes);
  cr_assert_eq(u.bytes_reserved, ts.live_bytes);
  cr_assert_eq(u.bytes_padding, 0);

  /* A released slice's storage goes at once (at the manager's next call), and a new
     reservation of the same size gets a new allocation rather than the old one. */
  cubert_slice_release(s[0]);
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(ts.frees, 1);
  cr_assert_eq(u.number_allocs, 3);
  cr_assert_eq(u.bytes_reserved, 137 + 3 * TS_MIB + 5);
  cubert_slice *again = reserve(mm, 100);
  cr_assert_eq(ts.allocs, 5, "nothing is reused");
  /* A zero-size buffer still gets storage of its own. */
  cubert_slice *empty = reserve(mm, 0);
  cr_assert_eq(ts.zero_requests, 0);
  cr_assert_neq(empty->page, again->page);
  cubert_slice_release(again);
  cubert_slice_release(empty);
  for (int i = 1; i < 4; ++i) cubert_slice_release(s[i]);
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(ts.live_bytes, 0);
  cr_assert_eq(u.bytes_reserved, 0);
  cubert_memory_manager_destroy(mm);
}

Test(memory_unpooled, persistent_window_and_installed_layouts_stay_unpooled) {
  exclusive_on();
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cr_assert_null(cubert_memory_set_mode(mm, CUBERT_ALLOCATION_PERSISTENT));
  cubert_slice *p = reserve(mm, 1000);
  cr_assert_eq(p->page->size, 1000);
  cr_assert_null(cubert_memory_set_mode(mm, CUBERT_ALLOCATION_AUTO));
  cubert_slice_release(p);
  cubert_memory_usage u;
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(ts.live_bytes, 0, "the persistent pool keeps nothing either");

  /* A bad layout is still refused; a good one installs and changes nothing. */
  cubert_memory_config bad = {.preset = CUBERT_POOLS_EXPLICIT, .pools = NULL, .pool_count = 0};
  cubert_status st = cubert_memory_install_pools(mm, &bad);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_EMPTY_POOL_LIST);
  cubert_status_free(st);
  cubert_memory_config pages = {.preset = CUBERT_POOLS_EXCLUSIVE_PAGES};
  cr_assert_null(cubert_memory_install_pools(mm, &pages));
  cubert_slice *a = reserve(mm, 48), *b = reserve(mm, 48);
  cr_assert_eq(a->page->size, 48);
  cr_assert_neq(a->page, b->page);
  cubert_slice_release(a);
  cubert_slice_release(b);
  cubert_memory_manager_destroy(mm);
  cr_assert_eq(ts.frees, ts.allocs);
}

Test(memory_unpooled, default_layout_shares_pages) {
  /* The twin: without the setting, two small buffers are slices of one page. */
  unsetenv("CUBERT_POOLS_EXCLUSIVE");
  cubert_config_reload_for_tests();
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cubert_slice *a = NULL, *b = NULL;
  cr_assert_null(cubert_memory_reserve(mm, 100, &a));
  cr_assert_null(cubert_memory_reserve(mm, 37, &b));
  cr_assert_eq(a->page, b->page);
  cr_assert_eq(ts.allocs, 1);
  cubert_slice_release(a);
  cubert_slice_release(b);
  cubert_memory_manager_destroy(mm);
}

Test(memory_unpooled, cpu_server_buffers_end_where_the_user_bytes_end) {
  exclusive_on();
  cubert_client *client = NULL;
  cr_assert_null(cubert_client_create("cpu!private", &client));
  const char data[13] = "twelve bytes";
  cubert_handle *h[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; ++i)
    cr_assert_null(cubert_client_create_buffer(client, data, sizeof data, &h[i]));
  cubert_memory_usage u;
  cr_assert_null(cubert_client_memory_usage(client, &u));
  cr_assert_eq(u.number_allocs, 3);
  cr_assert_eq(u.bytes_in_use, 39);
  cr_assert_eq(u.bytes_reserved, 39, "no page larger than the buffers (got %llu bytes)",
               (unsigned long long)u.bytes_reserved);
  cr_assert_eq(u.bytes_padding, 0);
  char back[13] = "";
  cr_assert_null(cubert_client_read(client, h[2], back, sizeof back));
  cr_assert_str_eq(back, "twelve bytes");
  cubert_handle_release(h[0]);
  cr_assert_null(cubert_client_sync(client));
  cr_assert_null(cubert_client_memory_usage(client, &u));
  cr_assert_eq(u.bytes_reserved, 26, "a released buffer's allocation is freed, not kept");
  cubert_handle_release(h[1]);
  cubert_handle_release(h[2]);
  cubert_client_release(client);
}

/* Memory manager under failing storage: OUT_OF_MEMORY with no leak, one cleanup-and-retry,
   and a manager that stays usable after every error. */
#include <criterion/criterion.h>
#include <string.h>

#include "memory_test_storage.h"

#define KIB TS_KIB
#define MIB TS_MIB

static cubert_memory_usage usage(cubert_memory_manager *mm) {
  cubert_memory_usage u;
  cubert_memory_usage_get(mm, &u);
  return u;
}

/* A script that touches every pool kind of the default layout plus the persistent pool, and
   splits, reuses and grows pages. Returns the number of reservations that failed. */
#define SCRIPT_STEPS 14
static const struct {
  uint64_t size;
  int persistent;
  int release_previous;
} script[SCRIPT_STEPS] = {
    {0, 0, 0},        {KIB, 0, 0},      {3 * MIB, 0, 0},  {20 * MIB, 0, 0}, {100, 0, 1},
    {1000, 1, 0},     {1000, 1, 1},     {1000, 1, 0},     {7 * MIB, 0, 0},  {7 * MIB, 0, 0},
    {16 * MIB, 0, 1}, {60 * MIB, 0, 0}, {60 * MIB, 0, 1}, {64 * KIB, 0, 0},
};

static int run_script(test_storage *ts, cubert_memory_manager *mm, int recover) {
  cubert_slice *live[SCRIPT_STEPS] = {0};
  int failures = 0;
  for (int i = 0; i < SCRIPT_STEPS; i++) {
    if (script[i].release_previous && i > 0) {
      cubert_slice_release(live[i - 1]);
      live[i - 1] = NULL;
    }
    if (script[i].persistent) cubert_memory_set_mode(mm, CUBERT_ALLOCATION_PERSISTENT);
    cubert_slice *s = (cubert_slice *)1;
    cubert_status st = cubert_memory_reserve(mm, script[i].size, &s);
    if (script[i].persistent) cubert_memory_set_mode(mm, CUBERT_ALLOCATION_AUTO);
    if (st) {
      cr_assert_eq(cubert_status_code(st), CUBERT_CODE_OUT_OF_MEMORY, "step %d: %s", i,
                   cubert_status_message(st));
      cr_assert_null(s, "no slice on error");
      cubert_status_free(st);
      failures++;
      if (recover) {
        /* The storage recovers; the same request now succeeds on the same manager. */
        ts->fail_from = 0;
        st = cubert_memory_reserve(mm, script[i].size, &s);
        cr_assert_null(st, "step %d after recovery: %s", i, cubert_status_message(st));
      } else {
        continue;
      }
    }
    cr_assert_eq(s->size, script[i].size);
    live[i] = s;
  }
  for (int i = 0; i < SCRIPT_STEPS; i++) cubert_slice_release(live[i]);
  return failures;
}

static void check_clean(test_storage *ts, cubert_memory_manager *mm) {
  cubert_memory_cleanup(mm, 1);
  cubert_memory_usage u = usage(mm);
  cr_assert_eq(u.number_allocs, 0);
  cr_assert_eq(u.bytes_in_use, 0);
  cr_assert_eq(u.bytes_reserved, 0);
  cr_assert_eq(ts->live_bytes, 0);
  cubert_memory_manager_destroy(mm);
  cr_assert_eq(ts->allocs, ts->frees, "allocs %llu frees %llu", (unsigned long long)ts->allocs,
               (unsigned long long)ts->frees);
}

Test(memory_faults, every_allocation_failing_from_n_on) {
  /* How many storage allocations the script makes when nothing fails. */
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cr_assert_eq(run_script(&ts, mm, 0), 0);
  uint64_t total = ts.allocs;
  cr_assert_geq(total, 8, "the script reaches every pool");
  check_clean(&ts, mm);

  for (uint64_t n = 1; n <= total; n++) {
    ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
    ts.fail_from = n;
    mm = NULL;
    cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
    int failures = run_script(&ts, mm, 1);
    cr_assert_eq(failures, 1, "N=%llu: exactly one OUT_OF_MEMORY, then recovery",
                 (unsigned long long)n);
    check_clean(&ts, mm);

    /* Without recovery: every later reservation that needs storage fails too, and nothing
       leaks either. */
    ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
    ts.fail_from = n;
    cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
    failures = run_script(&ts, mm, 0);
    cr_assert_geq(failures, 1, "N=%llu", (unsigned long long)n);
    check_clean(&ts, mm);
  }
}

Test(memory_faults, a_single_failure_is_retried) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cr_assert_eq(run_script(&ts, mm, 0), 0);
  uint64_t total = ts.allocs;
  check_clean(&ts, mm);
  for (uint64_t n = 1; n <= total; n++) {
    ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
    ts.fail_only = n;
    cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
    cr_assert_eq(run_script(&ts, mm, 0), 0, "N=%llu: the retry after cleanup succeeds",
                 (unsigned long long)n);
    cr_assert_eq(ts.attempts, ts.allocs + 1);
    check_clean(&ts, mm);
  }
}

Test(memory_faults, cleanup_and_retry_frees_idle_pages) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  ts.budget = 100 * MIB; /* a device with 100 MiB */
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  /* 80 MiB of idle exclusive pages... */
  cubert_slice *a = NULL, *b = NULL;
  cr_assert_null(cubert_memory_reserve(mm, 40 * MIB, &a));
  cr_assert_null(cubert_memory_reserve(mm, 40 * MIB, &b));
  cubert_slice_release(a);
  cubert_slice_release(b);
  cr_assert_eq(usage(mm).bytes_reserved, 80 * MIB);
  /* ...do not fit a 96 MiB request, until the manager gives them back and retries. */
  cubert_slice *c = NULL;
  cubert_status st = cubert_memory_reserve(mm, 96 * MIB, &c);
  cr_assert_null(st, "%s", cubert_status_message(st));
  cr_assert_eq(usage(mm).bytes_reserved, 96 * MIB);
  /* Too much even for an empty device: OUT_OF_MEMORY with the size, manager intact. */
  cubert_slice *d = (cubert_slice *)1;
  st = cubert_memory_reserve(mm, 8 * MIB, &d);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(st));
  cr_assert_null(d);
  cr_assert_eq(cubert_status_size(st), 8 * MIB, "the storage's error names the page size");
  cubert_status_free(st);
  cr_assert_eq(usage(mm).bytes_in_use, 96 * MIB, "the live slice is untouched");
  cubert_slice_release(c);
  cr_assert_null(cubert_memory_reserve(mm, 8 * MIB, &d));
  cubert_slice_release(d);
  check_clean(&ts, mm);
}

Test(memory_faults, persistent_pool_failure) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  ts.fail_from = 1;
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cubert_memory_set_mode(mm, CUBERT_ALLOCATION_PERSISTENT);
  cubert_slice *s = NULL;
  cubert_status st = cubert_memory_reserve(mm, 4 * KIB, &s);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_OUT_OF_MEMORY);
  cubert_status_free(st);
  cr_assert_eq(ts.attempts, 2, "one attempt, one retry after cleanup");
  ts.fail_from = 0;
  cr_assert_null(cubert_memory_reserve(mm, 4 * KIB, &s));
  cubert_memory_set_mode(mm, CUBERT_ALLOCATION_AUTO);
  cr_assert_eq(usage(mm).bytes_in_use, 4 * KIB);
  cubert_slice_release(s);
  check_clean(&ts, mm);
}

static cubert_status weird_alloc(void *ctx, uint64_t size, cubert_storage *out) {
  (void)ctx;
  (void)size;
  (void)out;
  return cubert_status_make(CUBERT_CODE_GENERIC, "driver said no");
}

Test(memory_faults, other_storage_errors_become_out_of_memory) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  ts.iface.alloc = weird_alloc;
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cubert_slice *s = NULL;
  cubert_status st = cubert_memory_reserve(mm, 4 * KIB, &s);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_OUT_OF_MEMORY);
  cr_assert(cubert_status_has_code(st, CUBERT_CODE_GENERIC), "the cause is kept");
  cr_assert_not_null(strstr(cubert_status_message(st), "driver said no"), "%s",
                     cubert_status_message(st));
  cubert_status_free(st);
  cubert_memory_manager_destroy(mm);
}

Test(memory_faults, capacity_and_size_errors_touch_no_storage) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_pool_config p = {.kind = CUBERT_POOL_SLICED, .page_size = MIB, .max_pool_size = MIB};
  cubert_memory_config cfg = {.preset = CUBERT_POOLS_EXPLICIT, .pools = &p, .pool_count = 1};
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, &cfg, &mm));
  cubert_slice *a = NULL, *b = NULL;
  cr_assert_null(cubert_memory_reserve(mm, MIB, &a));
  cubert_status st = cubert_memory_reserve(mm, MIB, &b);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_POOL_CAPACITY_EXCEEDED);
  cubert_status_free(st);
  st = cubert_memory_reserve(mm, 2 * MIB, &b);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_BUFFER_TOO_BIG);
  cubert_status_free(st);
  cr_assert_eq(ts.attempts, 1, "only the first page was asked for");
  cubert_slice_release(a);
  check_clean(&ts, mm);
}

/* Two managers over one storage that holds one 8 MiB page; the storage's reclaim cleans the
   other manager (the device's reclaim cleans every other stream slot). */
static struct {
  cubert_memory_manager *other;
  uint32_t calls;
} reclaimer;

static uint64_t reclaim_other(void *ctx, const cubert_memory_manager *self) {
  test_storage *ts = ctx;
  cr_assert_neq(self, reclaimer.other, "reclaim is asked for the managers other than the caller");
  reclaimer.calls++;
  uint64_t before = ts->live_bytes;
  cubert_memory_cleanup(reclaimer.other, 1);
  return before - ts->live_bytes;
}

static void two_managers(test_storage *ts, cubert_memory_manager **a, cubert_memory_manager **b) {
  ts_init(ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  ts->iface.reclaim = reclaim_other;
  ts->budget = 8 * MIB; /* one page of the smallest sliced pool */
  cr_assert_null(cubert_memory_manager_create(&ts->iface, NULL, a));
  cr_assert_null(cubert_memory_manager_create(&ts->iface, NULL, b));
  reclaimer.other = *a;
  reclaimer.calls = 0;
}

/* Order: the caller's own cleanup and retry first; then the reclaim and one more retry. */
Test(memory_faults, a_full_storage_takes_back_another_managers_idle_page) {
  test_storage ts;
  cubert_memory_manager *a = NULL, *b = NULL;
  two_managers(&ts, &a, &b);
  cubert_slice *s = NULL;
  cr_assert_null(cubert_memory_reserve(a, KIB, &s));
  cubert_slice_release(s); /* a keeps its page, idle */
  cr_assert_eq(usage(a).bytes_reserved, 8 * MIB);
  cr_assert_null(cubert_memory_reserve(b, KIB, &s));
  cr_assert_eq(reclaimer.calls, 1);
  cr_assert_eq(ts.attempts, 4, "a's page, b's first try, b's retry, b's try after the reclaim");
  cr_assert_eq(usage(a).bytes_reserved, 0, "a's idle page was freed");
  cr_assert_eq(usage(b).bytes_reserved, 8 * MIB);
  cubert_slice_release(s);
  cubert_memory_manager_destroy(b);
  check_clean(&ts, a);
}

/* A page with a live slice stays; a reclaim that freed nothing is not followed by a retry. */
Test(memory_faults, a_live_page_of_another_manager_is_never_taken) {
  test_storage ts;
  cubert_memory_manager *a = NULL, *b = NULL;
  two_managers(&ts, &a, &b);
  cubert_slice *live = NULL, *s = (cubert_slice *)1;
  cr_assert_null(cubert_memory_reserve(a, KIB, &live));
  cubert_status st = cubert_memory_reserve(b, KIB, &s);
  cr_assert_eq(cubert_status_code(st), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(st));
  cubert_status_free(st);
  cr_assert_null(s);
  cr_assert_eq(reclaimer.calls, 1);
  cr_assert_eq(ts.attempts, 3, "no retry after a reclaim that freed nothing");
  cr_assert_eq(usage(a).bytes_in_use, KIB);
  cubert_slice_release(live);
  cubert_memory_manager_destroy(b);
  check_clean(&ts, a);
}

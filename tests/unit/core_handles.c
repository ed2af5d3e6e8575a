/* Handle and client lifetime (issue 10, items 4 and 8, and can_mut): a released handle or
   client reads as NOT_FOUND for any number of later releases, a stale double release never
   touches another owner's handle, objects live until their last reference, and can_mut does
   not count bindings of queued launches. Uses only the public API on the CPU server. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define OK(expr)                                                       \
  do {                                                                 \
    cubert_status s_ = (expr);                                         \
    cr_assert(s_ == NULL, "%s: %s", #expr, cubert_status_message(s_)); \
  } while (0)

#define CODE(expr, code)                                                              \
  do {                                                                                \
    cubert_status s_ = (expr);                                                        \
    cr_assert_eq(cubert_status_code(s_), (code), "%s: expected %s, got %s", #expr,    \
                 cubert_code_name(code), s_ ? cubert_status_message(s_) : "success"); \
    cubert_status_free(s_);                                                           \
  } while (0)

static cubert_client *client;

static void setup(void) {
  OK(cubert_client_create("cpu", &client));
}

static void teardown(void) {
  cubert_client_release(client);
}

TestSuite(core_handles, .init = setup, .fini = teardown);

static cubert_handle *buffer_of(cubert_client *c, uint32_t value) {
  uint32_t v[4] = {value, value, value, value};
  cubert_handle *h = NULL;
  OK(cubert_client_create_buffer(c, v, sizeof v, &h));
  return h;
}

/* The old quarantine recycled a released handle object after 4096 more releases; a stale
   pointer then read the live buffer that reused it. */
Test(core_handles, stale_handle_is_not_found_after_any_number_of_releases) {
  cubert_handle *stale = buffer_of(client, 1);
  cubert_handle_release(stale);
  for (int i = 0; i < 3 * 4096 + 17; ++i) {
    cubert_handle *h = buffer_of(client, 2);
    uint32_t got[4] = {0};
    CODE(cubert_client_read(client, stale, got, sizeof got), CUBERT_CODE_NOT_FOUND);
    cr_assert_eq(got[0], 0, "round %d: a stale handle read a live buffer", i);
    cr_assert_eq(cubert_handle_size(stale), 0);
    cubert_handle_release(h);
  }
}

Test(core_handles, stale_double_release_leaves_other_owners_alone) {
  cubert_handle *stale = buffer_of(client, 1);
  cubert_handle_release(stale);
  /* churn past any bounded quarantine, so that the stale object could be reused */
  for (int i = 0; i < 4096 + 17; ++i) cubert_handle_release(buffer_of(client, 3));
  cubert_handle *live[5000];
  for (int i = 0; i < 5000; ++i) {
    live[i] = buffer_of(client, 100 + (uint32_t)i);
    cubert_handle_release(buffer_of(client, 3)); /* keep churning */
    cubert_handle_release(stale); /* must change nothing, whoever reuses the memory */
    cubert_handle_retain(stale);  /* likewise */
  }
  for (int i = 0; i < 5000; ++i) {
    uint32_t got[4] = {0};
    OK(cubert_client_read(client, live[i], got, sizeof got));
    cr_assert_eq(got[3], 100 + (uint32_t)i, "handle %d lost its buffer", i);
    cubert_handle_release(live[i]);
  }
  cubert_memory_usage u;
  OK(cubert_client_memory_usage(client, &u));
  cr_assert_eq(u.number_allocs, 0, "%llu allocations leaked", (unsigned long long)u.number_allocs);
}

Test(core_handles, handle_used_after_its_device_was_destroyed_is_not_found) {
  cubert_client *other = NULL;
  OK(cubert_client_create("cpu!private", &other));
  cubert_handle *h = buffer_of(other, 5);
  cubert_handle_release(h);
  cubert_client_release(other); /* the last reference: the device is destroyed */
  uint32_t got[4];
  CODE(cubert_client_read(client, h, got, sizeof got), CUBERT_CODE_NOT_FOUND);
  cubert_handle *view = NULL;
  CODE(cubert_handle_view(h, 0, 4, &view), CUBERT_CODE_NOT_FOUND);
  cr_assert_null(view);
  cubert_handle_release(h);
}

Test(core_handles, live_handle_keeps_its_device_after_the_client_is_gone) {
  cubert_client *other = NULL, *again = NULL;
  OK(cubert_client_create("cpu!private", &other));
  cubert_handle *h = buffer_of(other, 9);
  cubert_client_release(other);
  cr_assert_eq(cubert_handle_size(h), 16);
  /* another device instance (the shared one of `client`): NOT_FOUND, not another device's
     memory */
  uint32_t got[4] = {0};
  OK(cubert_client_create("cpu", &again));
  CODE(cubert_client_read(again, h, got, sizeof got), CUBERT_CODE_NOT_FOUND);
  cubert_client_release(again);
  cubert_handle_release(h); /* destroys the device */
}

Test(core_handles, client_used_after_release_is_not_found) {
  cubert_client *c = NULL, *view = NULL;
  OK(cubert_client_create("cpu", &c));
  OK(cubert_client_with_stream(c, 3, &view)); /* keeps the device alive */
  cubert_client_release(c);
  CODE(cubert_client_sync(c), CUBERT_CODE_NOT_FOUND);
  cubert_handle *h = NULL;
  CODE(cubert_client_empty(c, 16, &h), CUBERT_CODE_NOT_FOUND);
  cr_assert_null(h);
  cr_assert_null(cubert_client_properties(c));
  /* a double release changes nothing: the view still works */
  cubert_client_release(c);
  cubert_client_release(c);
  h = buffer_of(view, 7);
  uint32_t got[4] = {0};
  OK(cubert_client_read(view, h, got, sizeof got));
  cr_assert_eq(got[2], 7);
  cubert_handle_release(h);
  cubert_client_release(view);
  CODE(cubert_client_sync(view), CUBERT_CODE_NOT_FOUND);
}

Test(core_handles, client_and_handle_tokens_are_not_interchangeable) {
  cubert_handle *h = buffer_of(client, 1);
  CODE(cubert_client_sync((cubert_client *)h), CUBERT_CODE_NOT_FOUND);
  uint32_t got[4];
  CODE(cubert_client_read(client, (cubert_handle *)client, got, sizeof got), CUBERT_CODE_NOT_FOUND);
  cubert_handle_release(h);
}

static cubert_status drop_last(cubert_client *c, void *user) {
  (void)user;
  cubert_client_release(c); /* the caller's last reference */
  /* the client stays usable until exclusive() returns */
  cubert_handle *h = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_empty(c, 64, &h));
  cubert_handle_release(h);
  return cubert_status_make(CUBERT_CODE_GENERIC, "callback error %d", 42);
}

Test(core_handles, exclusive_callback_may_drop_the_last_client_reference) {
  cubert_client *c = NULL;
  OK(cubert_client_create("cpu", &c));
  cubert_status s = cubert_client_exclusive(c, drop_last, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_GENERIC, "%s", cubert_status_message(s));
  cr_assert(strstr(cubert_status_message(s), "callback error 42"), "%s", cubert_status_message(s));
  cubert_status_free(s);
  CODE(cubert_client_sync(c), CUBERT_CODE_NOT_FOUND);
}

/* can_mut: a CPU kernel that holds its launch until the test lets it go, so the binding is
   certainly in flight when can_mut is asked. */
static atomic_int gate;

static void wait_for_gate(const cubert_cpu_ctx *ctx) {
  (void)ctx;
  struct timespec pause = {0, 100000};
  for (int i = 0; i < 100000 && !atomic_load(&gate); ++i) nanosleep(&pause, NULL);
}

static const cubert_kernel_def gated = {.name = "gated", .cpu = wait_for_gate};

Test(core_handles, can_mut_ignores_bindings_of_queued_launches) {
  cubert_handle *h = buffer_of(client, 1);
  cr_assert_eq(cubert_handle_can_mut(h), 1);
  atomic_store(&gate, 0);
  cubert_kernel_args args = {&h, 1, NULL, 0};
  OK(cubert_client_launch(client, &gated, cubert_cube_count_new_3d(1, 1, 1),
                          cubert_cube_dim_new_3d(1, 1, 1), &args));
  int during = cubert_handle_can_mut(h);
  /* a view is another user reference: not mutable in place */
  cubert_handle *view = NULL;
  OK(cubert_handle_view(h, 0, 4, &view));
  int with_view = cubert_handle_can_mut(h);
  cubert_handle_release(view);
  cubert_handle_retain(h);
  int with_two_refs = cubert_handle_can_mut(h);
  cubert_handle_release(h);
  atomic_store(&gate, 1);
  OK(cubert_client_sync(client));
  cr_assert_eq(during, 1, "the binding of the queued launch was counted");
  cr_assert_eq(with_view, 0);
  cr_assert_eq(with_two_refs, 0);
  cr_assert_eq(cubert_handle_can_mut(h), 1);
  cubert_handle_release(h);
  cr_assert_eq(cubert_handle_can_mut(h), 0, "a released handle is not mutable");
}

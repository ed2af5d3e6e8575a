/* The core's cross-stream protocol (lib/stream/resolve.c), ported from the reference's
   MultiStream tests (cubecl-runtime; lib/stream/README.md describes cubert's protocol) onto
   real streams of the CPU server: the shared-binding analysis and resolve state, pinning of a
   binding used by another stream until the consumer's work completed, and the regression for
   the reference's known flaw (waits keyed by allocation instead of last use), and no device
   wait for work the host already saw finish. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "device.h"
#include "handle.h"
#include "stream/slots.h"

#define OK(expr)                                                       \
  do {                                                                 \
    cubert_status s_ = (expr);                                         \
    cr_assert(s_ == NULL, "%s: %s", #expr, cubert_status_message(s_)); \
  } while (0)

static cubert_client *root, *s1, *s2;

static void setup(void) {
  setenv("CUBERT_MAX_STREAMS", "4", 1); /* as the reference test: 4 slots */
  OK(cubert_client_create("cpu", &root));
  OK(cubert_client_with_stream(root, 1, &s1));
  OK(cubert_client_with_stream(root, 2, &s2));
}

static void teardown(void) {
  cubert_client_release(s1);
  cubert_client_release(s2);
  cubert_client_release(root);
}

TestSuite(core_streams, .init = setup, .fini = teardown);

static cubert_stream_slot *slot(uint32_t i) {
  return cubert_client_device(root)->slots[i];
}

/* The cursor of slot `origin` that slot `i` has waited for (0: none; the array is made at the
   slot's first wait). */
static uint64_t synced_to(uint32_t i, uint32_t origin) {
  return slot(i)->last_synced ? slot(i)->last_synced[origin] : 0;
}

static void fill_into(cubert_client *c, cubert_handle *h, uint32_t value) {
  uint64_t info[2] = {1024, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  OK(cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                          cubert_cube_dim_new_3d(256, 1, 1), &args));
}

static cubert_handle *fill(cubert_client *c, uint32_t value) {
  cubert_handle *h = NULL;
  OK(cubert_client_empty(c, 1024 * 4, &h));
  fill_into(c, h, value);
  return h;
}

static void add(cubert_client *c, cubert_handle *a, cubert_handle *b, cubert_handle *out) {
  cubert_handle *bufs[3] = {a, b, out};
  uint64_t info[1] = {1024};
  cubert_kernel_args args = {bufs, 3, info, 1};
  OK(cubert_client_launch(c, &cubert_kernel_add_i32, cubert_cube_count_new_3d(4, 1, 1),
                          cubert_cube_dim_new_3d(256, 1, 1), &args));
}

/* Streams 1 and 2 resolved once each; then [s1, s2, s1] on s1: only s2's binding is shared,
   s1 waits for slot 2 up to its cursor 1 and advances to 2; s2 is untouched. */
Test(core_streams, resolve_state_after_a_shared_binding) {
  cr_assert_eq(cubert_client_device(root)->max_streams, 4);
  cubert_handle *a = fill(s1, 1), *b = fill(s2, 2);
  cr_assert_eq(slot(1)->cursor, 1);
  cr_assert_eq(slot(2)->cursor, 1);
  cubert_handle *out = NULL;
  OK(cubert_client_empty(s1, 1024 * 4, &out));
  add(s1, a, b, out); /* bindings [s1, s2, s1] */
  cr_assert_eq(synced_to(1, 2), 1, "s1 waited for slot 2 up to cursor 1");
  cr_assert_eq(slot(1)->cursor, 2);
  cr_assert_null(slot(2)->last_synced, "s2 synced nothing: no cursors were made for it");
  cr_assert_eq(slot(2)->cursor, 1);
  uint32_t v[1024];
  OK(cubert_client_read(s1, out, v, sizeof v));
  cr_assert_eq(v[1023], 3);
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_handle_release(out);
}

/* [s1, s1, s1] shares nothing: no slot is waited for. */
Test(core_streams, bindings_of_the_same_stream_share_nothing) {
  cubert_handle *a = fill(s1, 1), *b = fill(s1, 2), *out = NULL;
  OK(cubert_client_empty(s1, 1024 * 4, &out));
  add(s1, a, b, out);
  cr_assert_null(slot(1)->last_synced, "s1 waited for no slot");
  cr_assert_eq(slot(1)->cursor, 3);
  /* a second use of an already-synced binding does not wait again */
  cubert_handle *c = fill(s2, 5);
  add(s1, a, c, out);
  uint64_t synced = synced_to(1, 2);
  cr_assert_eq(synced, 1);
  add(s1, b, c, out); /* c unchanged on s2 since: no new wait */
  cr_assert_eq(synced_to(1, 2), synced);
  uint32_t v[1024];
  OK(cubert_client_read(s1, out, v, sizeof v));
  cr_assert_eq(v[0], 7);
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_handle_release(c);
  cubert_handle_release(out);
}

/* A CPU kernel that holds its stream until the host opens a gate (info[0] = address of an
   atomic_int), then writes info[1] into the 1024 elements of buffer 0. */
static void gated_fill(const cubert_cpu_ctx *ctx) {
  atomic_int *gate = (atomic_int *)(uintptr_t)ctx->info[0];
  while (!atomic_load(gate)) {
  }
  uint32_t *out = ctx->buffers[0]; /* one unit writes the whole buffer */
  for (int i = 0; i < 1024; ++i) out[i] = (uint32_t)ctx->info[1];
}
static const cubert_kernel_def gated_kernel = {.name = "gated_fill", .cpu = gated_fill};

static void launch_gated(cubert_client *c, cubert_handle *h, atomic_int *gate, uint32_t value) {
  uint64_t info[2] = {(uint64_t)(uintptr_t)gate, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  OK(cubert_client_launch(c, &gated_kernel, cubert_cube_count_new_3d(1, 1, 1),
                          cubert_cube_dim_new_3d(1, 1, 1), &args));
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* The reference's known flaw: a buffer written again on its origin stream after a consumer
   synced past its allocation must be waited for again. */
Test(core_streams, a_rewrite_on_the_origin_stream_is_waited_for) {
  cubert_handle *x = fill(s1, 1), *zero = fill(s2, 0), *out = NULL;
  OK(cubert_client_empty(s2, 1024 * 4, &out));
  add(s2, x, zero, out); /* s2 syncs past x's allocation */
  OK(cubert_client_sync(s2));
  atomic_int gate = 0;
  launch_gated(s1, x, &gate, 2); /* x rewritten on s1, held back by the gate */
  add(s2, x, zero, out);         /* must wait for the rewrite */
  sleep_ms(50);                  /* room for a consumer that did not wait to run early */
  atomic_store(&gate, 1);
  uint32_t v[1024];
  OK(cubert_client_read(s2, out, v, sizeof v));
  for (int i = 0; i < 1024; ++i) cr_assert_eq(v[i], 2, "element %d read the old value", i);
  cubert_handle_release(x);
  cubert_handle_release(zero);
  cubert_handle_release(out);
}

/* Work the host saw finish is not waited for on the device: after s2 read x and synced, s1
   rewriting x makes no device wait for slot 2 (the pattern of a producer refilling a buffer its
   consumer has finished with), while an unsynced use still does. */
Test(core_streams, work_the_host_saw_finish_is_not_waited_for) {
  cubert_handle *x = fill(s1, 1), *zero = fill(s2, 0), *out = NULL;
  OK(cubert_client_empty(s2, 1024 * 4, &out));
  add(s2, x, zero, out); /* s2 waits for s1 on the device */
  cr_assert_eq(synced_to(2, 1), 1);
  OK(cubert_client_sync(s2));
  cr_assert_eq(slot(2)->finished, slot(2)->cursor, "a successful sync marks the slot finished");
  fill_into(s1, x, 4); /* x last used by s2, which finished: no device wait */
  cr_assert_eq(synced_to(1, 2), 0, "s1 waited for finished work of slot 2");
  add(s2, x, zero, out); /* s1 has not synced: s2 waits for it */
  cr_assert_eq(synced_to(2, 1), slot(1)->cursor);
  uint32_t v[1024];
  OK(cubert_client_read(s2, out, v, sizeof v));
  for (int i = 0; i < 1024; ++i) cr_assert_eq(v[i], 4, "element %d", i);
  cubert_handle_release(x);
  cubert_handle_release(zero);
  cubert_handle_release(out);
}

/* A binding used by another stream stays pinned (its slice not reusable by the origin stream)
   until the consumer's work completed, also when no wait was needed. */
Test(core_streams, a_binding_used_by_another_stream_stays_pinned) {
  cubert_handle *x = NULL;
  OK(cubert_client_empty(s1, 1024 * 4, &x)); /* never written: no wait needed */
  atomic_int gate = 0;
  launch_gated(s2, x, &gate, 9); /* the consumer holds x until the gate opens */
  cubert_slice *slice = cubert_handle_object(x)->slice;
  cubert_handle_release(x);
  cubert_memory_usage u;
  cubert_memory_usage_get(slot(1)->memory, &u);
  cr_assert_eq(u.bytes_in_use, 1024 * 4, "the slice was freed while the consumer holds it");
  cr_assert_geq(atomic_load(&slice->refcount), 1);
  cubert_handle *again = NULL;
  OK(cubert_client_empty(s1, 1024 * 4, &again));
  cr_assert_neq(cubert_handle_object(again)->slice, slice,
                "the origin stream reused a pinned slice");
  atomic_store(&gate, 1);
  OK(cubert_client_sync(s2));
  cubert_handle_release(again);
  cubert_memory_usage_get(slot(1)->memory, &u);
  cr_assert_eq(u.bytes_in_use, 0, "released once the consumer completed");
}

/* install_memory_pools is all or nothing across streams (issue 10, fidelity): whichever host
   allocation fails, every stream keeps its pools and streams created later get the previous
   layout; once it succeeds, every stream has the new one. Host allocations are failed one by
   one through a malloc/calloc/realloc interposer armed only around the call (not built under
   ASan/TSan, whose own allocators the interposer would bypass). */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPOSE 0
#else
#define INTERPOSE 1
#endif

static atomic_long calls, fail_at = -1;

#if INTERPOSE
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *ptr, size_t size);

static int should_fail(void) {
  long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
  return at >= 0 && atomic_fetch_add(&calls, 1) == at;
}

void *malloc(size_t size) {
  return should_fail() ? NULL : __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
  return should_fail() ? NULL : __libc_calloc(count, size);
}
void *realloc(void *ptr, size_t size) {
  return should_fail() ? NULL : __libc_realloc(ptr, size);
}
#endif

#define OK(expr)                                                       \
  do {                                                                 \
    cubert_status s_ = (expr);                                         \
    cr_assert(s_ == NULL, "%s: %s", #expr, cubert_status_message(s_)); \
  } while (0)

enum { VIEWS = 4 };

/* Page sizes of the dynamic pools of a stream, as one comparable string. */
static void layout_of(cubert_client *c, char *out, size_t size) {
  static cubert_memory_report r;
  OK(cubert_client_memory_report(c, &r));
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < r.pool_count && used < size; ++i)
    used += (size_t)snprintf(out + used, size - used, "%d:%llu ", (int)r.pools[i].config.kind,
                             (unsigned long long)r.pools[i].config.page_size);
}

Test(core_install_pools, a_failed_install_changes_no_stream) {
#if !INTERPOSE
  cr_skip_test("allocation failures are injected only without sanitizers");
#endif
  cubert_client *root = NULL, *views[VIEWS];
  OK(cubert_client_create("cpu", &root));
  char before[VIEWS][1024], now[1024];
  for (int v = 0; v < VIEWS; ++v) {
    OK(cubert_client_with_stream(root, 100 + (cubert_stream_id)v, &views[v]));
    cubert_handle *h = NULL;
    OK(cubert_client_empty(views[v], 64, &h)); /* creates the stream's slot */
    cubert_handle_release(h);
    OK(cubert_client_sync(views[v]));
    layout_of(views[v], before[v], sizeof before[v]);
  }
  cubert_pool_config pools[3] = {
      {.kind = CUBERT_POOL_SLICED, .page_size = 1 << 16},
      {.kind = CUBERT_POOL_SLICED, .page_size = 1 << 20},
      {.kind = CUBERT_POOL_EXCLUSIVE, .max_alloc_size = 1 << 28},
  };
  cubert_memory_config config = {.preset = CUBERT_POOLS_EXPLICIT, .pools = pools, .pool_count = 3};
  int failures = 0;
  cubert_status s = NULL;
  for (long k = 0; k < 10000; ++k) {
    atomic_store(&calls, 0);
    atomic_store(&fail_at, k);
    s = cubert_client_install_memory_pools(root, &config);
    atomic_store(&fail_at, -1);
    if (!s) break;
    failures++;
    cr_assert_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY, "allocation %ld: %s", k,
                 cubert_status_message(s));
    cubert_status_free(s);
    for (int v = 0; v < VIEWS; ++v) {
      layout_of(views[v], now, sizeof now);
      cr_assert_str_eq(now, before[v], "allocation %ld failed: stream %d changed layout", k, v);
    }
    /* a stream created now gets the previous layout too */
    cubert_client *late = NULL;
    OK(cubert_client_with_stream(root, 200 + (cubert_stream_id)k % 8, &late));
    layout_of(late, now, sizeof now);
    cr_assert_str_eq(now, before[0], "allocation %ld failed: the saved layout changed", k);
    cubert_client_release(late);
  }
  cr_assert_null(s, "install never succeeded");
  cr_assert_geq(failures, VIEWS, "only %d allocations could be failed", failures);
  char after[1024];
  layout_of(views[0], after, sizeof after);
  cr_assert_str_neq(after, before[0]);
  cr_assert(strstr(after, "0:65536 0:1048576 1:"), "%s", after);
  for (int v = 1; v < VIEWS; ++v) {
    layout_of(views[v], now, sizeof now);
    cr_assert_str_eq(now, after, "stream %d", v);
  }
  for (int v = 0; v < VIEWS; ++v) cubert_client_release(views[v]);
  cubert_client_release(root);
}

/* A live 0-byte buffer on one stream holds a slice of its pools but no bytes: the pre-check
   counted bytes and passed, the per-stream install refused on the slice, and that refusal was
   dropped, so the call returned OK while that stream kept its old pools (issue 22, item 6).
   Now the call fails as a whole, naming the stream, and changes nothing. */
Test(core_install_pools, a_live_zero_byte_buffer_refuses_the_whole_install) {
  cubert_client *root = NULL, *views[VIEWS];
  OK(cubert_client_create("cpu", &root));
  char before[VIEWS][1024], now[1024];
  for (int v = 0; v < VIEWS; ++v) {
    OK(cubert_client_with_stream(root, 300 + (cubert_stream_id)v, &views[v]));
    cubert_handle *h = NULL;
    OK(cubert_client_empty(views[v], 64, &h)); /* creates the stream's slot */
    cubert_handle_release(h);
    OK(cubert_client_sync(views[v]));
    layout_of(views[v], before[v], sizeof before[v]);
  }
  cubert_handle *zero = NULL;
  OK(cubert_client_empty(views[2], 0, &zero));
  cubert_pool_config pools[2] = {
      {.kind = CUBERT_POOL_SLICED, .page_size = 1 << 16},
      {.kind = CUBERT_POOL_EXCLUSIVE, .max_alloc_size = 1 << 28},
  };
  cubert_memory_config config = {.preset = CUBERT_POOLS_EXPLICIT, .pools = pools, .pool_count = 2};
  cubert_status s = cubert_client_install_memory_pools(root, &config);
  cr_assert_not_null(s, "install returned OK with a live 0-byte buffer on stream 302");
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_POOLS_IN_USE, "%s", cubert_status_message(s));
  cr_assert(strstr(cubert_status_message(s), "stream 302"), "%s", cubert_status_message(s));
  cr_assert(strstr(cubert_status_message(s), "0-byte"), "%s", cubert_status_message(s));
  cubert_status_free(s);
  for (int v = 0; v < VIEWS; ++v) {
    layout_of(views[v], now, sizeof now);
    cr_assert_str_eq(now, before[v], "stream %d changed layout after a refused install", v);
  }
  cubert_handle_release(zero);
  OK(cubert_client_sync(views[2]));
  OK(cubert_client_install_memory_pools(root, &config));
  for (int v = 0; v < VIEWS; ++v) {
    layout_of(views[v], now, sizeof now);
    cr_assert(strstr(now, "0:65536 1:"), "stream %d: %s", v, now);
  }
  for (int v = 0; v < VIEWS; ++v) cubert_client_release(views[v]);
  cubert_client_release(root);
}

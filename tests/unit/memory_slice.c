/* Slice reference counting across threads: workers release slices (as a backend's completion
   path does) while the owning thread keeps reserving from the same manager. A slice's memory
   must never be handed out again before its last holder let go. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "memory_test_storage.h"

#define KIB TS_KIB

enum { WORKERS = 3, QUEUE = 64, ITEMS = 20000 };

typedef struct item {
  cubert_slice *slice;
  unsigned char tag;
} item;

typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  item items[QUEUE];
  size_t head, count;
  int closed;
  _Atomic uint64_t bad_bytes;
} queue;

static void queue_push(queue *q, item it) {
  pthread_mutex_lock(&q->lock);
  while (q->count == QUEUE) pthread_cond_wait(&q->not_full, &q->lock);
  q->items[(q->head + q->count) % QUEUE] = it;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

static int queue_pop(queue *q, item *out) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && !q->closed) pthread_cond_wait(&q->not_empty, &q->lock);
  if (q->count == 0) {
    pthread_mutex_unlock(&q->lock);
    return 0;
  }
  *out = q->items[q->head];
  q->head = (q->head + 1) % QUEUE;
  q->count--;
  pthread_cond_signal(&q->not_full);
  pthread_mutex_unlock(&q->lock);
  return 1;
}

static void *worker(void *arg) {
  queue *q = arg;
  item it;
  while (queue_pop(q, &it)) {
    const unsigned char *p = (const unsigned char *)it.slice->page->host_ptr + it.slice->offset;
    for (uint64_t i = 0; i < it.slice->size; i++)
      if (p[i] != it.tag) atomic_fetch_add(&q->bad_bytes, 1);
    cubert_slice_release(it.slice);
  }
  return NULL;
}

Test(memory_slice, releases_from_worker_threads) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  static queue q;
  memset(&q, 0, sizeof q);
  pthread_mutex_init(&q.lock, NULL);
  pthread_cond_init(&q.not_empty, NULL);
  pthread_cond_init(&q.not_full, NULL);
  pthread_t threads[WORKERS];
  for (int i = 0; i < WORKERS; i++) pthread_create(&threads[i], NULL, worker, &q);
  uint64_t rng = 88172645463325252ull;
  cubert_slice *held = NULL;
  for (int n = 0; n < ITEMS; n++) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    uint64_t size = 1 + rng % (4 * KIB);
    cubert_slice *s = NULL;
    cubert_status st = cubert_memory_reserve(mm, size, &s);
    cr_assert_null(st, "%s", cubert_status_message(st));
    unsigned char tag = (unsigned char)(n * 7 + 1);
    memset((unsigned char *)s->page->host_ptr + s->offset, tag, size);
    /* Two holders: a worker (a "launch") and, for a while, this thread (a "handle"). */
    cubert_slice_retain(s);
    queue_push(&q, (item){s, tag});
    if (held) cubert_slice_release(held);
    held = s;
  }
  cubert_slice_release(held);
  pthread_mutex_lock(&q.lock);
  q.closed = 1;
  pthread_cond_broadcast(&q.not_empty);
  pthread_mutex_unlock(&q.lock);
  for (int i = 0; i < WORKERS; i++) pthread_join(threads[i], NULL);
  cr_assert_eq(atomic_load(&q.bad_bytes), 0, "a slice was reused while still held");
  cubert_memory_usage u;
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(u.number_allocs, 0);
  cr_assert_eq(u.bytes_in_use, 0);
  cr_assert_leq(u.bytes_reserved, 8 * TS_MIB, "a 4 KiB working set stays in one page");
  cubert_memory_cleanup(mm, 1);
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(u.bytes_reserved, 0);
  cubert_memory_manager_destroy(mm);
  cr_assert_eq(ts.allocs, ts.frees);
  pthread_cond_destroy(&q.not_empty);
  pthread_cond_destroy(&q.not_full);
  pthread_mutex_destroy(&q.lock);
}

Test(memory_slice, retain_release_counts) {
  test_storage ts;
  ts_init(&ts, TS_DUMMY_PAGE, TS_DUMMY_ALIGN);
  cubert_memory_manager *mm = NULL;
  cr_assert_null(cubert_memory_manager_create(&ts.iface, NULL, &mm));
  cubert_slice *s = NULL;
  cr_assert_null(cubert_memory_reserve(mm, 100, &s));
  for (int i = 0; i < 10; i++) cubert_slice_retain(s);
  cr_assert_eq(atomic_load(&s->refcount), 11);
  for (int i = 0; i < 10; i++) cubert_slice_release(s);
  cubert_memory_usage u;
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(u.number_allocs, 1, "still held once");
  cubert_slice_release(s);
  cubert_memory_usage_get(mm, &u);
  cr_assert_eq(u.number_allocs, 0);
  /* NULL is accepted, and a slice no manager owns is just counted. */
  cubert_slice_retain(NULL);
  cubert_slice_release(NULL);
  cubert_slice loose;
  memset(&loose, 0, sizeof loose);
  atomic_init(&loose.refcount, 1);
  cubert_slice_release(&loose);
  cr_assert_eq(atomic_load(&loose.refcount), 0);
  cubert_memory_manager_destroy(mm);
}

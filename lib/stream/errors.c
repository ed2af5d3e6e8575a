/* cubert — per-stream queue of errors raised asynchronously (on a worker, in an OpenCL
   callback, by a queued operation). Backends push from any thread; the core takes them at the
   next flush/sync/read on the stream and returns them once as SERVER_UNHEALTHY. */
#include "stream/errors.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

struct cubert_stream_errors {
  pthread_mutex_t mu; /* pushes come from worker threads and callbacks */
  atomic_int pending; /* lock-free check on the launch path */
  cubert_status *items;
  size_t count, capacity;
  size_t dropped; /* pushes that found no memory to store them */
};

cubert_status cubert_stream_errors_create(cubert_stream_errors **out) {
  *out = NULL;
  cubert_stream_errors *e = calloc(1, sizeof(*e));
  if (!e)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a stream's error queue failed");
  pthread_mutex_init(&e->mu, NULL);
  *out = e;
  return NULL;
}

void cubert_stream_errors_destroy(cubert_stream_errors *e) {
  if (!e) return;
  for (size_t i = 0; i < e->count; ++i) cubert_status_free(e->items[i]);
  free(e->items);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

void cubert_stream_errors_push(cubert_stream_errors *e, cubert_status error) {
  if (!error) return;
  if (!e) {
    cubert_status_free(error);
    return;
  }
  pthread_mutex_lock(&e->mu);
  if (e->count == e->capacity) {
    size_t cap = e->capacity ? e->capacity * 2 : 4;
    cubert_status *items = realloc(e->items, cap * sizeof(*items));
    if (!items) {
      /* Nowhere to keep it: count it, so the stream still reports that something failed. */
      e->dropped++;
      atomic_store_explicit(&e->pending, 1, memory_order_release);
      pthread_mutex_unlock(&e->mu);
      cubert_status_free(error);
      return;
    }
    e->items = items;
    e->capacity = cap;
  }
  e->items[e->count++] = error;
  atomic_store_explicit(&e->pending, 1, memory_order_release);
  pthread_mutex_unlock(&e->mu);
}

int cubert_stream_errors_pending(cubert_stream_errors *e) {
  return e && atomic_load_explicit(&e->pending, memory_order_acquire);
}

cubert_status cubert_stream_errors_take(cubert_stream_errors *e) {
  if (!cubert_stream_errors_pending(e)) return NULL;
  pthread_mutex_lock(&e->mu);
  cubert_status *items = e->items;
  size_t count = e->count, dropped = e->dropped;
  e->items = NULL;
  e->count = e->capacity = e->dropped = 0;
  atomic_store_explicit(&e->pending, 0, memory_order_release);
  pthread_mutex_unlock(&e->mu);
  if (dropped) {
    cubert_status lost = cubert_status_make(
        CUBERT_CODE_GENERIC, "%zu asynchronous error(s) were lost: no memory to record them",
        dropped);
    cubert_status *grown = realloc(items, (count + 1) * sizeof(*grown));
    if (grown) {
      items = grown;
      items[count++] = lost;
    } else {
      cubert_status_free(lost);
    }
  }
  if (count == 0) {
    free(items);
    return cubert_status_make(CUBERT_CODE_SERVER_UNHEALTHY,
                              "asynchronous errors were raised but could not be recorded");
  }
  cubert_status s = cubert_status_unhealthy(items, count);
  free(items);
  return s;
}

void cubert_stream_errors_detach(cubert_stream_errors *e, cubert_status **out_items,
                                 size_t *out_count, size_t *out_dropped) {
  *out_items = NULL;
  *out_count = *out_dropped = 0;
  if (!cubert_stream_errors_pending(e)) return;
  pthread_mutex_lock(&e->mu);
  *out_items = e->items;
  *out_count = e->count;
  *out_dropped = e->dropped;
  e->items = NULL;
  e->count = e->capacity = e->dropped = 0;
  atomic_store_explicit(&e->pending, 0, memory_order_release);
  pthread_mutex_unlock(&e->mu);
}

void cubert_stream_errors_reattach(cubert_stream_errors *e, cubert_status *items, size_t count,
                                   size_t dropped) {
  if (!count && !dropped) {
    free(items);
    return;
  }
  pthread_mutex_lock(&e->mu);
  cubert_status *all = count ? malloc((count + e->count) * sizeof(*all)) : NULL;
  if (count && !all) {
    /* Keep what the queue has; what comes back is counted as lost, never reported as none. */
    for (size_t i = 0; i < count; ++i) cubert_status_free(items[i]);
    dropped += count;
  } else if (count) {
    memcpy(all, items, count * sizeof(*all));
    if (e->count) memcpy(all + count, e->items, e->count * sizeof(*all));
    free(e->items);
    e->items = all;
    e->count += count;
    e->capacity = e->count;
  }
  free(items);
  e->dropped += dropped;
  atomic_store_explicit(&e->pending, 1, memory_order_release);
  pthread_mutex_unlock(&e->mu);
}

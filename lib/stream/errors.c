/* cubert — per-stream queue of errors raised asynchronously (on a worker, in an OpenCL
   callback, by a queued operation). Backends push from any thread; the core takes them at the
   next flush/sync/read on the stream and returns them once as SERVER_UNHEALTHY.

   Several stream ids can share one queue, as they share a slot (stream/slots.c): each error is
   tagged with the id that submitted the failed command, the queue's `submitter` when the
   command was queued. A backend that records the submitter with each command
   (cubert_stream_errors_submitter) and pushes with it (cubert_stream_errors_push_for) lets a
   slot change hands without waiting; the core then takes each id's errors apart. A plain push
   tags with the submitter at the time of the push. */
#include "stream/errors.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

#define MIXED UINT64_MAX

struct cubert_stream_errors {
  pthread_mutex_t mu;         /* pushes come from worker threads and callbacks */
  atomic_int pending;         /* items or dropped: the lock-free check on the launch path */
  _Atomic uint64_t submitter; /* the id whose commands are being queued now */
  /* The one id every item belongs to, or MIXED (several ids, or lost pushes): lets
     pending_for answer without the lock when another id's errors wait for their owner. */
  _Atomic uint64_t single;
  cubert_status *items; /* [count], oldest first */
  uint64_t *tags;       /* [count]: the id each item belongs to */
  size_t count, capacity;
  size_t dropped; /* pushes that found no memory to store them (nobody's in particular) */
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
  free(e->tags);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

void cubert_stream_errors_set_submitter(cubert_stream_errors *e, uint64_t id) {
  atomic_store_explicit(&e->submitter, id, memory_order_relaxed);
}

uint64_t cubert_stream_errors_submitter(cubert_stream_errors *e) {
  return e ? atomic_load_explicit(&e->submitter, memory_order_relaxed) : 0;
}

/* Recomputes `single` and `pending` after a change (lock held). */
static void summarise(cubert_stream_errors *e) {
  uint64_t one = e->count && !e->dropped ? e->tags[0] : MIXED;
  for (size_t i = 1; i < e->count && one != MIXED; ++i)
    if (e->tags[i] != one) one = MIXED;
  atomic_store_explicit(&e->single, one, memory_order_relaxed);
  atomic_store_explicit(&e->pending, e->count > 0 || e->dropped > 0, memory_order_release);
}

/* Room for one more item (lock held); 0 when there is no memory. */
static int reserve_one(cubert_stream_errors *e) {
  if (e->count < e->capacity) return 1;
  size_t cap = e->capacity ? e->capacity * 2 : 4;
  cubert_status *items = realloc(e->items, cap * sizeof(*items));
  if (items) e->items = items;
  uint64_t *tags = items ? realloc(e->tags, cap * sizeof(*tags)) : NULL;
  if (tags) e->tags = tags;
  if (!items || !tags) return 0;
  e->capacity = cap;
  return 1;
}

void cubert_stream_errors_push_for(cubert_stream_errors *e, uint64_t submitter,
                                   cubert_status error) {
  if (!error) return;
  if (!e) {
    cubert_status_free(error);
    return;
  }
  pthread_mutex_lock(&e->mu);
  if (!reserve_one(e)) {
    /* Nowhere to keep it: count it, so the stream still reports that something failed. */
    e->dropped++;
    summarise(e);
    pthread_mutex_unlock(&e->mu);
    cubert_status_free(error);
    return;
  }
  e->tags[e->count] = submitter;
  e->items[e->count++] = error;
  summarise(e);
  pthread_mutex_unlock(&e->mu);
}

void cubert_stream_errors_push(cubert_stream_errors *e, cubert_status error) {
  cubert_stream_errors_push_for(e, cubert_stream_errors_submitter(e), error);
}

int cubert_stream_errors_pending(cubert_stream_errors *e) {
  return e && atomic_load_explicit(&e->pending, memory_order_acquire);
}

int cubert_stream_errors_pending_for(cubert_stream_errors *e, uint64_t submitter) {
  if (!cubert_stream_errors_pending(e)) return 0; /* the launch path: no lock */
  const uint64_t one = atomic_load_explicit(&e->single, memory_order_relaxed);
  if (one != MIXED) return one == submitter;
  pthread_mutex_lock(&e->mu);
  int found = e->dropped > 0;
  for (size_t i = 0; i < e->count && !found; ++i) found = e->tags[i] == submitter;
  pthread_mutex_unlock(&e->mu);
  return found;
}

/* Moves out the items of `submitter` (all of them when `all`) with the dropped count, keeping
   the others in order (lock held). */
static void take_locked(cubert_stream_errors *e, int all, uint64_t submitter,
                        cubert_status **out_items, size_t *out_count, size_t *out_dropped) {
  size_t mine = 0;
  for (size_t i = 0; i < e->count; ++i) mine += all || e->tags[i] == submitter;
  *out_items = mine ? malloc(mine * sizeof(**out_items)) : NULL;
  *out_count = 0;
  *out_dropped = e->dropped;
  e->dropped = 0;
  if (mine && !*out_items) {
    /* No memory for the list: report them as lost rather than as none. */
    *out_dropped += mine;
  }
  size_t kept = 0;
  for (size_t i = 0; i < e->count; ++i) {
    if (all || e->tags[i] == submitter) {
      if (*out_items)
        (*out_items)[(*out_count)++] = e->items[i];
      else
        cubert_status_free(e->items[i]);
      continue;
    }
    e->tags[kept] = e->tags[i];
    e->items[kept++] = e->items[i];
  }
  e->count = kept;
  summarise(e);
}

/* One SERVER_UNHEALTHY from taken items and a dropped count (ownership of items moves in). */
static cubert_status as_status(cubert_status *items, size_t count, size_t dropped) {
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
    return dropped ? cubert_status_make(CUBERT_CODE_SERVER_UNHEALTHY,
                                        "asynchronous errors were raised but could not be "
                                        "recorded")
                   : NULL;
  }
  cubert_status s = cubert_status_unhealthy(items, count);
  free(items);
  return s;
}

static cubert_status take(cubert_stream_errors *e, int all, uint64_t submitter) {
  if (!cubert_stream_errors_pending(e)) return NULL;
  cubert_status *items = NULL;
  size_t count = 0, dropped = 0;
  pthread_mutex_lock(&e->mu);
  take_locked(e, all, submitter, &items, &count, &dropped);
  pthread_mutex_unlock(&e->mu);
  return as_status(items, count, dropped);
}

cubert_status cubert_stream_errors_take(cubert_stream_errors *e) {
  return take(e, 1, 0);
}

cubert_status cubert_stream_errors_take_for(cubert_stream_errors *e, uint64_t submitter) {
  return take(e, 0, submitter);
}

void cubert_stream_errors_detach(cubert_stream_errors *e, uint64_t submitter,
                                 cubert_status **out_items, size_t *out_count,
                                 size_t *out_dropped) {
  *out_items = NULL;
  *out_count = *out_dropped = 0;
  if (!cubert_stream_errors_pending(e)) return;
  pthread_mutex_lock(&e->mu);
  take_locked(e, 0, submitter, out_items, out_count, out_dropped);
  pthread_mutex_unlock(&e->mu);
}

void cubert_stream_errors_reattach(cubert_stream_errors *e, uint64_t submitter,
                                   cubert_status *items, size_t count, size_t dropped) {
  if (!count && !dropped) {
    free(items);
    return;
  }
  pthread_mutex_lock(&e->mu);
  const size_t total = count + e->count;
  cubert_status *all = count ? malloc(total * sizeof(*all)) : NULL;
  uint64_t *tags = count ? malloc(total * sizeof(*tags)) : NULL;
  if (count && (!all || !tags)) {
    /* Keep what the queue has; what comes back is counted as lost, never reported as none. */
    free(all);
    free(tags);
    for (size_t i = 0; i < count; ++i) cubert_status_free(items[i]);
    dropped += count;
  } else if (count) {
    memcpy(all, items, count * sizeof(*all));
    for (size_t i = 0; i < count; ++i) tags[i] = submitter;
    if (e->count) {
      memcpy(all + count, e->items, e->count * sizeof(*all));
      memcpy(tags + count, e->tags, e->count * sizeof(*tags));
    }
    free(e->items);
    free(e->tags);
    e->items = all;
    e->tags = tags;
    e->count = total;
    e->capacity = total;
  }
  free(items);
  e->dropped += dropped;
  summarise(e);
  pthread_mutex_unlock(&e->mu);
}

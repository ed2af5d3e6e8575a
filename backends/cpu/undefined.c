/* cubert CPU server — the buffer bytes nothing has written yet (undefined.h).

   A sorted array of disjoint ranges under a mutex. It stays short: a range enters at
   cubert_client_empty and leaves at the first write, launch or copy that covers it, so most
   programs hold a handful at a time and the common case — no range at all — costs the launch
   path one relaxed load (`nonempty`). */
#include "cpu/undefined.h"

#include <stdlib.h>
#include <string.h>

void cubert_cpu_undefined_init(cubert_cpu_undefined *u) {
  memset(u, 0, sizeof *u);
  pthread_mutex_init(&u->lock, NULL);
}

void cubert_cpu_undefined_destroy(cubert_cpu_undefined *u) {
  free(u->ranges);
  u->ranges = NULL;
  u->count = u->capacity = 0;
  pthread_mutex_destroy(&u->lock);
}

/* The first range that ends after `a`. Lock held. */
static uint32_t first_after(const cubert_cpu_undefined *u, uintptr_t a) {
  uint32_t lo = 0, hi = u->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (u->ranges[mid].hi <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Room for `extra` more ranges. Lock held. */
static int reserve(cubert_cpu_undefined *u, uint32_t extra) {
  if (u->count + extra <= u->capacity) return 1;
  uint32_t cap = u->capacity ? u->capacity * 2 : 16;
  while (cap < u->count + extra) cap *= 2;
  cubert_cpu_range *r = realloc(u->ranges, cap * sizeof *r);
  if (!r) return 0;
  u->ranges = r;
  u->capacity = cap;
  return 1;
}

static void publish(cubert_cpu_undefined *u) {
  atomic_store_explicit(&u->nonempty, u->count > 0, memory_order_relaxed);
}

static void add_locked(cubert_cpu_undefined *u, uintptr_t lo, uintptr_t hi) {
  /* Ranges that overlap or touch [lo, hi) merge with it. */
  uint32_t i = first_after(u, lo ? lo - 1 : 0);
  uint32_t j = i;
  while (j < u->count && u->ranges[j].lo <= hi) {
    if (u->ranges[j].lo < lo) lo = u->ranges[j].lo;
    if (u->ranges[j].hi > hi) hi = u->ranges[j].hi;
    ++j;
  }
  if (j == i) {
    if (!reserve(u, 1)) return;
    memmove(&u->ranges[i + 1], &u->ranges[i], (u->count - i) * sizeof *u->ranges);
    ++u->count;
  } else if (j > i + 1) {
    memmove(&u->ranges[i + 1], &u->ranges[j], (u->count - j) * sizeof *u->ranges);
    u->count -= j - i - 1;
  }
  u->ranges[i] = (cubert_cpu_range){lo, hi};
}

static void remove_locked(cubert_cpu_undefined *u, uintptr_t lo, uintptr_t hi) {
  uint32_t i = first_after(u, lo);
  if (i < u->count && u->ranges[i].lo < lo && u->ranges[i].hi > hi) {
    /* [lo, hi) inside one range: it splits in two (or, without memory, keeps it all). */
    if (!reserve(u, 1)) return;
    memmove(&u->ranges[i + 1], &u->ranges[i], (u->count - i) * sizeof *u->ranges);
    ++u->count;
    u->ranges[i].hi = lo;
    u->ranges[i + 1].lo = hi;
    return;
  }
  if (i < u->count && u->ranges[i].lo < lo) u->ranges[i++].hi = lo;
  uint32_t j = i;
  while (j < u->count && u->ranges[j].hi <= hi) ++j; /* wholly inside: dropped */
  if (j < u->count && u->ranges[j].lo < hi) u->ranges[j].lo = hi;
  memmove(&u->ranges[i], &u->ranges[j], (u->count - j) * sizeof *u->ranges);
  u->count -= j - i;
}

void cubert_cpu_undefined_add(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes) {
  if (!bytes) return;
  pthread_mutex_lock(&u->lock);
  add_locked(u, lo, lo + bytes);
  publish(u);
  pthread_mutex_unlock(&u->lock);
}

void cubert_cpu_undefined_remove(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes) {
  if (!bytes || !atomic_load_explicit(&u->nonempty, memory_order_relaxed)) return;
  pthread_mutex_lock(&u->lock);
  remove_locked(u, lo, lo + bytes);
  publish(u);
  pthread_mutex_unlock(&u->lock);
}

static void set_bits(uint8_t *bits, uint64_t from, uint64_t to) {
  while (from < to && (from & 7)) bits[from >> 3] |= (uint8_t)(1u << (from & 7)), ++from;
  if (to - from >= 8) {
    memset(bits + (from >> 3), 0xff, (to - from) >> 3);
    from += (to - from) & ~(uint64_t)7;
  }
  for (; from < to; ++from) bits[from >> 3] |= (uint8_t)(1u << (from & 7));
}

int cubert_cpu_undefined_load(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes,
                              uint8_t *bits) {
  if (!bytes || !atomic_load_explicit(&u->nonempty, memory_order_relaxed)) return 0;
  const uintptr_t hi = lo + bytes;
  int any = 0;
  pthread_mutex_lock(&u->lock);
  for (uint32_t i = first_after(u, lo); i < u->count && u->ranges[i].lo < hi; ++i) {
    uintptr_t a = u->ranges[i].lo > lo ? u->ranges[i].lo : lo;
    uintptr_t b = u->ranges[i].hi < hi ? u->ranges[i].hi : hi;
    set_bits(bits, a - lo, b - lo);
    any = 1;
  }
  pthread_mutex_unlock(&u->lock);
  return any;
}

void cubert_cpu_undefined_store(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes,
                                const uint8_t *bits) {
  pthread_mutex_lock(&u->lock);
  remove_locked(u, lo, lo + bytes);
  for (uint64_t i = 0; i < bytes;) {
    if (!bits[i >> 3] && !(i & 7)) {
      i += 8;
      continue;
    }
    if (!(bits[i >> 3] >> (i & 7) & 1)) {
      ++i;
      continue;
    }
    uint64_t end = i + 1;
    while (end < bytes && (bits[end >> 3] >> (end & 7) & 1)) ++end;
    add_locked(u, lo + i, lo + end);
    i = end;
  }
  publish(u);
  pthread_mutex_unlock(&u->lock);
}

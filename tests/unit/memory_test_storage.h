/* A malloc-backed storage for driving the memory manager directly in tests and benchmarks.

   Counts allocations, frees and cache releases, and can be told to refuse allocations (from
   the Nth on, or only the Nth) to exercise the out-of-memory paths. Single-threaded: the
   manager calls storages under the device lock. */
#ifndef CUBERT_TESTS_MEMORY_TEST_STORAGE_H
#define CUBERT_TESTS_MEMORY_TEST_STORAGE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/server.h"
#include "memory/memory_manager.h"

#define TS_KIB ((uint64_t)1024)
#define TS_MIB (TS_KIB * 1024)
#define TS_GIB (TS_MIB * 1024)

typedef struct test_storage {
  cubert_storage_iface iface;
  uint64_t attempts; /* alloc calls, failed ones included */
  uint64_t allocs;   /* successful allocations */
  uint64_t frees;
  uint64_t live_bytes; /* bytes currently allocated */
  uint64_t peak_bytes;
  uint64_t fail_from; /* 1-based: refuse every attempt >= fail_from (0: never) */
  uint64_t fail_only; /* 1-based: refuse exactly this attempt (0: never) */
  uint64_t budget;    /* refuse allocations that would exceed this many live bytes (0: none) */
  uint64_t cache_releases;
  uint64_t zero_requests; /* alloc calls asking for 0 bytes (must stay 0) */
  int no_memory;          /* 1: host_ptr stays NULL (for huge fake devices) */
  uint64_t next_id;
} test_storage;

static cubert_status ts_alloc(void *ctx, uint64_t size, cubert_storage *out) {
  test_storage *ts = ctx;
  ts->attempts++;
  if (size == 0) ts->zero_requests++;
  if ((ts->fail_from && ts->attempts >= ts->fail_from) || ts->attempts == ts->fail_only ||
      (ts->budget && ts->live_bytes + size > ts->budget))
    return cubert_status_set_size(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "test storage refuses %llu bytes",
                           (unsigned long long)size),
        size);
  void *p = NULL;
  if (!ts->no_memory) {
    p = malloc(size ? size : 1);
    if (!p)
      return cubert_status_set_size(
          cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host refuses %llu bytes",
                             (unsigned long long)size),
          size);
  }
  memset(out, 0, sizeof *out);
  out->host_ptr = p;
  out->size = size;
  out->id = ++ts->next_id;
  ts->allocs++;
  ts->live_bytes += size;
  if (ts->live_bytes > ts->peak_bytes) ts->peak_bytes = ts->live_bytes;
  return NULL;
}

static void ts_free(void *ctx, cubert_storage *storage) {
  test_storage *ts = ctx;
  ts->frees++;
  ts->live_bytes -= storage->size;
  free(storage->host_ptr);
  storage->host_ptr = NULL;
}

static void ts_cache_release(void *ctx, cubert_slice *slice) {
  test_storage *ts = ctx;
  ts->cache_releases++;
  slice->backend_cache = NULL;
}

/* A storage with the given maximum page size and alignment (bytes). DUMMY: 128 MiB, 32. */
static inline void ts_init(test_storage *ts, uint64_t max_page_size, uint64_t alignment) {
  memset(ts, 0, sizeof *ts);
  ts->iface.ctx = ts;
  ts->iface.alloc = ts_alloc;
  ts->iface.free = ts_free;
  ts->iface.slice_cache_release = ts_cache_release;
  ts->iface.alignment = alignment;
  ts->iface.max_page_size = max_page_size;
}

#define TS_DUMMY_PAGE (128 * TS_MIB)
#define TS_DUMMY_ALIGN 32

#endif /* CUBERT_TESTS_MEMORY_TEST_STORAGE_H */

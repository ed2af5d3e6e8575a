/* cubert CPU server — the kernel sanitizer's same-value write races (san_same.c;
   docs/debugging.md). A write after another unit's write in the same interval is told apart by
   the values: the same value is a race of its own kind, allowed where both stores were declared
   with STORE_SAME or SHARED_STORE_SAME. */
#ifndef CUBERT_CPU_SAN_SAME_H
#define CUBERT_CPU_SAN_SAME_H

#include <stdint.h>

struct cubert_cpu_san;
struct cubert_cpu_san_region;

/* Plain stores of at most this many bytes wait for their value; a larger one (a struct copy) is
   reported as a write-after-write race at once. */
#define CUBERT_CPU_SAN_SAME_BYTES 16

/* A plain store's write-after-write race whose value is not known yet (the instrumentation calls
   the sanitizer before the store): the running unit's store to [addr, addr + size) (size 0: none
   pending), what the memory held before it (the other unit's value), and what the report
   needs. */
typedef struct cubert_cpu_san_pending {
  uintptr_t addr;
  uint32_t size;
  uint8_t old[CUBERT_CPU_SAN_SAME_BYTES];
  const struct cubert_cpu_san_region *region; /* the buffer's; NULL: shared memory */
  uint64_t at;                                /* shared: the byte; buffers: the address */
  uint32_t other_epoch, other_unit, other_pc; /* the other write as the shadow recorded it */
  const void *pc;
} cubert_cpu_san_pending;

/* The kind of a write-after-write race by its values: `same` (the two stores wrote one value),
   `declared` (both were STORE_SAME or SHARED_STORE_SAME). Returns NULL when it is no finding
   (both declared, one value); else the report's kind, and in *out_did what the other unit did
   ("wrote the same value to"). */
const char *cubert_cpu_san_same_kind(int same, int declared, const char **out_did);
/* Keeps the race of the running unit's plain store at race->addr pending until its value is
   known (cubert_cpu_san_same_resolve). Returns 0 when it cannot wait (too large, or another one
   pending): the caller reports it as a write-after-write race at once. */
int cubert_cpu_san_same_defer(struct cubert_cpu_san *s, const cubert_cpu_san_pending *race);
/* Reports the pending race, if any, now that its store happened: as a same-value race or a
   write-after-write race of different values. Called before the running unit's next access,
   barrier, PHASE change or end. */
void cubert_cpu_san_same_resolve(struct cubert_cpu_san *s);

/* The bytes of a STORE_SAME and the element's old value are copied and compared with relaxed
   atomic byte accesses, not memcpy/memcmp: units of cubes on other threads may store to the same
   element at the same time (that is the point of STORE_SAME), which in C is a data race unless the
   accesses are atomic; a relaxed byte copy keeps every byte one of the values written, as a GPU
   does. */
static inline void cubert_cpu_san_store_relaxed(volatile void *dst, const void *src,
                                                uint32_t size) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *v = (const unsigned char *)src;
  for (uint32_t i = 0; i < size; ++i) __atomic_store_n(d + i, v[i], __ATOMIC_RELAXED);
}
static inline void cubert_cpu_san_load_relaxed(void *dst, const volatile void *src, uint32_t size) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *v = (const unsigned char *)src;
  for (uint32_t i = 0; i < size; ++i) d[i] = __atomic_load_n(v + i, __ATOMIC_RELAXED);
}
static inline int cubert_cpu_san_equal_relaxed(const volatile void *a, const void *value,
                                               uint32_t size) {
  const unsigned char *x = (const unsigned char *)a;
  const unsigned char *v = (const unsigned char *)value;
  for (uint32_t i = 0; i < size; ++i)
    if (__atomic_load_n(x + i, __ATOMIC_RELAXED) != v[i]) return 0;
  return 1;
}

#endif /* CUBERT_CPU_SAN_SAME_H */

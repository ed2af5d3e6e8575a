/* cubert CPU server — the buffer bytes nothing has written yet, for the kernel sanitizer's
   uninitialised-read check (undefined.c; docs/debugging.md).

   A set of disjoint address ranges per device. cubert_client_empty adds its buffer (through
   the server's sanitizer table); host writes, launches, interop pointers (cubert/cpu.h) and
   freed pages take ranges out; a
   sanitized launch copies the ranges of its bindings into per-byte bitmaps, checks its reads
   against them, and stores what is still unwritten back at its end. */
#ifndef CUBERT_CPU_UNDEFINED_H
#define CUBERT_CPU_UNDEFINED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct cubert_cpu_range {
  uintptr_t lo, hi; /* [lo, hi) */
} cubert_cpu_range;

typedef struct cubert_cpu_undefined {
  pthread_mutex_t lock;      /* the ranges; taken by the core's thread and by kernel threads */
  cubert_cpu_range *ranges;  /* sorted, disjoint, never adjacent */
  uint32_t count, capacity;  /* under lock */
  _Atomic uint32_t nonempty; /* count > 0: the launch path's lock-free look */
} cubert_cpu_undefined;

void cubert_cpu_undefined_init(cubert_cpu_undefined *u);
void cubert_cpu_undefined_destroy(cubert_cpu_undefined *u);
/* The bytes [lo, lo + bytes) hold nothing written. Without host memory for the set the range
   is not tracked (its reads then go unreported, never reported falsely). */
void cubert_cpu_undefined_add(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes);
/* The bytes [lo, lo + bytes) were written (or their page was freed). */
void cubert_cpu_undefined_remove(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes);
/* Sets bit i of `bits` (LSB first, zeroed by the caller) for each unwritten byte lo + i of
   [lo, lo + bytes); returns whether any is. */
int cubert_cpu_undefined_load(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes, uint8_t *bits);
/* Replaces what the set says about [lo, lo + bytes) by `bits` (as undefined_load fills them). */
void cubert_cpu_undefined_store(cubert_cpu_undefined *u, uintptr_t lo, uint64_t bytes,
                                const uint8_t *bits);

#endif /* CUBERT_CPU_UNDEFINED_H */

/* cubert CPU server — the kernel sanitizer's same-value write races (validate mode;
   docs/debugging.md).

   Several units storing one value to one place in an interval (a "found" flag) race by the memory
   model, but an algorithm may rely on it: such a race is reported as its own kind, and stores
   declared with STORE_SAME or SHARED_STORE_SAME are allowed to make it. A declared store hands
   its value to the sanitizer, which compares and stores it under the place's cell lock
   (san_buffers.c), so two declared stores on different threads compare exactly. A plain store
   calls the sanitizer before it happens, with its address only: its race is kept pending with
   the bytes the memory held (the other unit's value) and reported at the running unit's next
   access, barrier or end, once the store happened, with the kind its value gives. Against a
   plain store of another cube on another thread, that thread's store may land after its check,
   so the kind (not whether a race is reported) may then name different values where they were
   the same. Nothing in the shadow grows: a declared store is one flag bit of its write record. */
#include "cpu/san_same.h"

#include <string.h>

#include "cpu/san_buffers.h"
#include "cpu/sanitize.h"

const char *cubert_cpu_san_same_kind(int same, int declared, const char **out_did) {
  if (same && declared) return NULL;
  if (same) {
    *out_did = "wrote the same value to";
    return "same-value write race (declare both stores intended with STORE_SAME or "
           "SHARED_STORE_SAME)";
  }
  *out_did = declared ? "wrote a different value to" : "wrote";
  return declared ? "data race (write after write of different values, through STORE_SAME)"
                  : "data race (write after write)";
}

int cubert_cpu_san_same_defer(cubert_cpu_san *s, const cubert_cpu_san_pending *race) {
  /* Another cell of the same store: one decision for the store. */
  if (s->pending.size) return s->pending.addr == race->addr;
  if (!race->size || race->size > CUBERT_CPU_SAN_SAME_BYTES) return 0;
  s->pending = *race;
  cubert_cpu_san_load_relaxed(s->pending.old, (const void *)race->addr, race->size);
  return 1;
}

void cubert_cpu_san_same_resolve(cubert_cpu_san *s) {
  cubert_cpu_san_pending *p = &s->pending;
  const uint32_t size = p->size;
  p->size = 0;
  if (!size || s->done) return;
  const char *did = NULL;
  const char *kind = cubert_cpu_san_same_kind(
      cubert_cpu_san_equal_relaxed((const void *)p->addr, p->old, size), 0, &did);
  if (p->region)
    cubert_cpu_san_buffer_race(s, p->region, (uintptr_t)p->at, kind,
                               (cubert_cpu_san_access){p->other_epoch, p->other_unit, p->other_pc},
                               did, 1, p->pc);
  else
    cubert_cpu_san_shared_race(s, kind, p->at, p->other_unit, did, p->other_pc, p->pc);
}

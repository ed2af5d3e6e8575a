/* cubert — the process-wide table of live public objects (object_table.h).

   A token is `generation << 32 | index << 2 | kind`. Each entry holds one 64-bit atomic word,
   `generation << 32 | reference count`, so a lookup checks the generation and takes a
   reference in one compare-and-swap: a token can never gain a reference after its object's
   last one was dropped, whatever other threads do. The last release moves the entry to the
   next generation in that same compare-and-swap, which kills every outstanding token at once.

   Why a global table rather than a per-device one: a stale handle may be used after its
   device was destroyed, and a stale client has no device left to ask. Why entries are never
   freed: a stale token must stay safe to look up forever. Chunks are reachable from a static
   array, so leak checkers do not count them. The free list is FIFO so that an entry rests as
   long as possible before reuse; correctness does not depend on it (the generation does). */
#include "base/object_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/status.h"

_Static_assert(sizeof(uintptr_t) >= 8, "tokens need 64-bit pointers");

enum {
  KIND_BITS = 2,
  INDEX_BITS = 26, /* up to 64 Mi live objects at once */
  CHUNK_BITS = 12,
  CHUNK_SIZE = 1 << CHUNK_BITS,
  MAX_CHUNKS = 1 << (INDEX_BITS - CHUNK_BITS),
};
#define GEN_LAST 0xffffffffu /* an entry reaching it is retired */

typedef struct entry {
  _Atomic uint64_t state; /* generation << 32 | reference count */
  void *object;           /* written before the state publishes it */
  uint32_t next_free;     /* index + 1 of the next free entry, 0: none; under table_lock */
} entry;

static _Atomic(entry *) chunks[MAX_CHUNKS];
/* Guards growth and the free list only; lookups and reference counts never take it. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t chunk_count, free_head, free_tail; /* under table_lock */

static entry *entry_at(uint32_t index) {
  entry *chunk = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
  return chunk ? &chunk[index & (CHUNK_SIZE - 1)] : NULL;
}

static void free_push(uint32_t index, entry *e) {
  e->next_free = 0;
  if (free_tail)
    entry_at(free_tail - 1)->next_free = index + 1;
  else
    free_head = index + 1;
  free_tail = index + 1;
}

static int grow(void) {
  if (chunk_count == MAX_CHUNKS) return 0;
  entry *chunk = calloc(CHUNK_SIZE, sizeof(*chunk));
  if (!chunk) return 0;
  uint32_t base = chunk_count << CHUNK_BITS;
  for (uint32_t i = 0; i < CHUNK_SIZE; ++i)
    atomic_init(&chunk[i].state, (uint64_t)1 << 32); /* generation 1, no references */
  atomic_store_explicit(&chunks[chunk_count++], chunk, memory_order_release);
  for (uint32_t i = 0; i < CHUNK_SIZE; ++i) free_push(base + i, &chunk[i]);
  return 1;
}

cubert_status cubert_object_register(cubert_object_kind kind, void *object, uintptr_t *out_token) {
  *out_token = 0;
  pthread_mutex_lock(&table_lock);
  if (!free_head && !grow()) {
    pthread_mutex_unlock(&table_lock);
    return cubert_status_set_kind(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of the object table failed"),
        CUBERT_KIND_IO);
  }
  uint32_t index = free_head - 1;
  entry *e = entry_at(index);
  free_head = e->next_free;
  if (!free_head) free_tail = 0;
  pthread_mutex_unlock(&table_lock);
  uint64_t generation = atomic_load_explicit(&e->state, memory_order_relaxed) >> 32;
  e->object = object;
  atomic_store_explicit(&e->state, generation << 32 | 1u, memory_order_release);
  *out_token = (uintptr_t)(generation << 32 | (uint64_t)index << KIND_BITS | (uint64_t)kind);
  return NULL;
}

/* The entry a token names, or NULL when the token cannot be one of ours. */
static entry *token_entry(uintptr_t token, cubert_object_kind kind, uint64_t *out_generation) {
  if (!token || (token & ((1u << KIND_BITS) - 1)) != (uintptr_t)kind) return NULL;
  uint64_t index = ((uint64_t)token >> KIND_BITS) & ((1u << INDEX_BITS) - 1);
  if (((uint64_t)token & 0xffffffffu) >> (KIND_BITS + INDEX_BITS)) return NULL;
  *out_generation = (uint64_t)token >> 32;
  return entry_at((uint32_t)index);
}

void *cubert_object_acquire(uintptr_t token, cubert_object_kind kind) {
  uint64_t generation = 0;
  entry *e = token_entry(token, kind, &generation);
  if (!e) return NULL;
  uint64_t state = atomic_load_explicit(&e->state, memory_order_acquire);
  do {
    if (state >> 32 != generation || (state & 0xffffffffu) == 0) return NULL;
  } while (!atomic_compare_exchange_weak_explicit(&e->state, &state, state + 1,
                                                  memory_order_acq_rel, memory_order_acquire));
  return e->object;
}

void *cubert_object_release(uintptr_t token, cubert_object_kind kind) {
  uint64_t generation = 0;
  entry *e = token_entry(token, kind, &generation);
  if (!e) return NULL;
  uint64_t state = atomic_load_explicit(&e->state, memory_order_acquire), next;
  do {
    if (state >> 32 != generation || (state & 0xffffffffu) == 0) return NULL;
    next = (state & 0xffffffffu) == 1 ? (generation + 1) << 32 : state - 1;
  } while (!atomic_compare_exchange_weak_explicit(&e->state, &state, next, memory_order_acq_rel,
                                                  memory_order_acquire));
  if (next & 0xffffffffu) return NULL;
  void *object = e->object;
  e->object = NULL;
  if (generation + 1 < GEN_LAST) {
    uint32_t index = (uint32_t)(((uint64_t)token >> KIND_BITS) & ((1u << INDEX_BITS) - 1));
    pthread_mutex_lock(&table_lock);
    free_push(index, e);
    pthread_mutex_unlock(&table_lock);
  }
  return object;
}

void *cubert_object_get(uintptr_t token) {
  uint64_t generation = 0;
  entry *e = token_entry(token, (cubert_object_kind)(token & ((1u << KIND_BITS) - 1)), &generation);
  return e ? e->object : NULL;
}

uint32_t cubert_object_refcount(uintptr_t token) {
  uint64_t generation = 0;
  entry *e = token_entry(token, (cubert_object_kind)(token & ((1u << KIND_BITS) - 1)), &generation);
  if (!e) return 0;
  uint64_t state = atomic_load_explicit(&e->state, memory_order_acquire);
  return state >> 32 == generation ? (uint32_t)(state & 0xffffffffu) : 0;
}

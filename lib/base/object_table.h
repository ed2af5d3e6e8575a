/* cubert — the process-wide table of live public objects (clients and handles).

   The pointers the API hands out for clients and handles are not addresses: each is a token
   that encodes a table index, a generation and the object's kind. The table's entries are
   never freed or moved, so any token — live, released long ago, of another kind or of a
   destroyed device — can be looked up safely, and a token whose generation no longer matches
   its entry reads as "not found" for any number of later releases and reuses (an entry whose
   generation counter is exhausted is retired, never reused). Not installed. */
#ifndef CUBERT_OBJECT_TABLE_H
#define CUBERT_OBJECT_TABLE_H

#include <stdint.h>

#include "cubert/status.h"

typedef enum cubert_object_kind {
  CUBERT_OBJECT_CLIENT = 1,
  CUBERT_OBJECT_HANDLE = 2,
} cubert_object_kind;

/* Registers `object` with one reference and returns its token in *out_token.
   OUT_OF_MEMORY (IO kind) when the table cannot grow. Thread-safe. */
cubert_status cubert_object_register(cubert_object_kind kind, void *object, uintptr_t *out_token);
/* Adds a reference when `token` names a live object of `kind`, and returns the object;
   returns NULL (and changes nothing) for 0, a stale token or another kind. Thread-safe. */
void *cubert_object_acquire(uintptr_t token, cubert_object_kind kind);
/* Drops a reference of a live object. Returns the object when that was the last reference:
   the token is then dead for good and the caller destroys the object. Returns NULL when
   references remain, and for a stale, foreign or 0 token (which changes nothing, so a stale
   double release never touches another owner's object). Thread-safe. */
void *cubert_object_release(uintptr_t token, cubert_object_kind kind);
/* The object behind a token the caller holds a reference on (no checks). */
void *cubert_object_get(uintptr_t token);
/* References of a live object now (0 for a stale token); a snapshot, for diagnostics. */
uint32_t cubert_object_refcount(uintptr_t token);

#endif /* CUBERT_OBJECT_TABLE_H */

/* cubert — autotune's scratch copies (scratch.h): the memory a measured candidate writes.

   Why the copies are made where buffers are used and not by the tuner from a list of the call's
   buffers: a tunable set's `args` are opaque, so only the launches and writes a candidate makes
   say which buffers it touches, and a set written before read-only declarations existed must be
   safe as it is. Why whole slices: views of one buffer (cubert_handle_view, tensors sharing a
   handle) alias, and one copy per slice keeps them aliased in the copy. Why the copy is taken at
   the first write and kept to the end: the caller's bytes never change during a measurement, so
   one copy serves every candidate and sample (the reference generates its inputs once per
   tuning for the same reason). The entries are few (the buffers of one call), so a linear
   search is enough. */
#include "tune/scratch.h"

#include <stdlib.h>

#include "client.h"
#include "handle.h"
#include "transfer.h"

enum { ENTRY_COPY, ENTRY_IN_PLACE, ENTRY_READ_ONLY };

typedef struct scratch_entry {
  int kind;
  cubert_slice *slice;
  /* ENTRY_READ_ONLY: the declared bytes [begin, end) of the slice (from its start). */
  uint64_t begin, end;
  /* ENTRY_COPY: a reference that keeps the caller's slice alive (so its address is not reused by
     another buffer during the measurement), and the copy, over the whole slice. */
  cubert_handle *original, *copy;
  cubert_binding copy_binding;
} scratch_entry;

/* The innermost measurement of this thread; nested ones forward to the outermost. */
static _Thread_local cubert_tune_scratch *active;

static cubert_tune_scratch *outermost(void) {
  cubert_tune_scratch *s = active;
  while (s && s->outer) s = s->outer;
  return s;
}

static scratch_entry *append(cubert_tune_scratch *s) {
  if (s->count == s->capacity) {
    size_t capacity = s->capacity ? 2 * s->capacity : 8;
    scratch_entry *grown = realloc(s->entries, capacity * sizeof(*grown));
    if (!grown) return NULL;
    s->entries = grown;
    s->capacity = capacity;
  }
  scratch_entry *e = &s->entries[s->count++];
  *e = (scratch_entry){0};
  return e;
}

static scratch_entry *copy_of(cubert_tune_scratch *s, const cubert_slice *slice) {
  for (size_t i = 0; s && i < s->count; ++i)
    if (s->entries[i].kind == ENTRY_COPY && s->entries[i].slice == slice) return &s->entries[i];
  return NULL;
}

/* Whether the bytes of `h` may be written in place: their slice has a copy already, was
   created during the measurement, or they lie inside a range declared read-only. */
static int in_place_or_copied(cubert_tune_scratch *s, const cubert_handle_obj *h) {
  for (size_t i = 0; i < s->count; ++i) {
    const scratch_entry *e = &s->entries[i];
    if (e->slice != h->slice) continue;
    if (e->kind != ENTRY_READ_ONLY) return 1;
    if (h->offset >= e->begin && h->offset + h->size <= e->end) return 1;
  }
  return 0;
}

void cubert_tune_scratch_begin(cubert_tune_scratch *scratch, cubert_client *client,
                               cubert_handle *const *read_only, size_t read_only_count) {
  *scratch = (cubert_tune_scratch){.outer = active, .client = client};
  active = scratch;
  if (scratch->outer) return;
  for (size_t i = 0; read_only && i < read_only_count; ++i) {
    cubert_handle_obj *h = cubert_handle_acquire(read_only[i]);
    if (!h) continue;
    scratch_entry *e = append(scratch);
    if (e) {
      e->kind = ENTRY_READ_ONLY;
      e->slice = h->slice;
      e->begin = h->offset;
      e->end = h->offset + h->size;
    }
    cubert_handle_release(read_only[i]);
  }
}

void cubert_tune_scratch_end(cubert_tune_scratch *scratch) {
  active = scratch->outer;
  for (size_t i = 0; i < scratch->count; ++i) {
    if (scratch->entries[i].kind != ENTRY_COPY) continue;
    cubert_handle_release(scratch->entries[i].copy);
    cubert_handle_release(scratch->entries[i].original);
  }
  free(scratch->entries);
  *scratch = (cubert_tune_scratch){0};
}

/* The binding of a whole slice. */
static cubert_binding whole(cubert_slice *slice) {
  cubert_binding b = {slice, slice->offset, slice->size};
  return b;
}

/* Copies the slice of `h` (held by the caller through `handle`) into a new buffer and records
   it. */
static cubert_status make_copy(cubert_tune_scratch *s, cubert_client *client, cubert_handle *handle,
                               const cubert_handle_obj *h) {
  cubert_handle *copy = NULL;
  CUBERT_RETURN_IF_ERROR(
      cubert_client_empty_filled_by_caller(client, (size_t)h->slice->size, &copy));
  cubert_handle_obj *c = cubert_handle_acquire(copy);
  cubert_binding to = cubert_handle_binding(c);
  cubert_handle_release(copy);
  cubert_status st = cubert_transfer_copy_on_device(client, whole(h->slice), to);
  scratch_entry *e = st ? NULL : append(s);
  if (!st && !e) st = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (st) {
    cubert_handle_release(copy);
    return st;
  }
  e->kind = ENTRY_COPY;
  e->slice = h->slice;
  e->original = cubert_handle_retain(handle);
  e->copy = copy;
  e->copy_binding = to;
  return NULL;
}

cubert_status cubert_tune_scratch_prepare(cubert_client *client, cubert_handle *handle) {
  cubert_tune_scratch *s = outermost();
  if (!s || !handle) return NULL;
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h) return NULL; /* the call itself reports it */
  cubert_status st = NULL;
  if (h->device == cubert_client_device(client) && !in_place_or_copied(s, h))
    st = make_copy(s, client, handle, h);
  cubert_handle_release(handle);
  return st;
}

void cubert_tune_scratch_apply(cubert_binding *binding) {
  const scratch_entry *e = copy_of(outermost(), binding->slice);
  if (!e) return;
  const uint64_t from_start = binding->offset - binding->slice->offset;
  binding->slice = e->copy_binding.slice;
  binding->offset = e->copy_binding.offset + from_start;
}

void cubert_tune_scratch_created(cubert_handle *handle) {
  cubert_tune_scratch *s = outermost();
  if (!s) return;
  cubert_handle_obj *h = cubert_handle_acquire(handle);
  if (!h) return;
  /* Without memory for the entry the buffer is merely copied at its first write. */
  scratch_entry *e = append(s);
  if (e) {
    e->kind = ENTRY_IN_PLACE;
    e->slice = h->slice;
  }
  cubert_handle_release(handle);
}

cubert_status cubert_tune_scratch_refresh(void) {
  /* A nested measurement runs inside an outer candidate, whose copies hold that candidate's
     work in progress: only the outermost measurement starts its candidates afresh. */
  cubert_tune_scratch *s = active && !active->outer ? active : NULL;
  for (size_t i = 0; s && i < s->count; ++i) {
    const scratch_entry *e = &s->entries[i];
    if (e->kind == ENTRY_COPY)
      CUBERT_RETURN_IF_ERROR(
          cubert_transfer_copy_on_device(s->client, whole(e->slice), e->copy_binding));
  }
  return NULL;
}

/* cubert — parked errors (parked.h): a device's list of errors kept for streams that lost their
   slot. A plain array: it holds errors only while more stream ids than slots are busy, so it
   stays short, and its order is the order the errors were raised in. */
#include "stream/parked.h"

#include <stdlib.h>

#include "base/status.h"

int cubert_parked_reserve(cubert_parked_errors *parked, size_t more) {
  if (parked->count + more <= parked->cap) return 1;
  size_t cap = parked->cap ? parked->cap * 2 : 4;
  while (cap < parked->count + more) cap *= 2;
  cubert_parked_error *grown = realloc(parked->items, cap * sizeof(*grown));
  if (!grown) return 0;
  parked->items = grown;
  parked->cap = cap;
  return 1;
}

void cubert_parked_push(cubert_parked_errors *parked, cubert_stream_id stream,
                        cubert_status error) {
  if (error) parked->items[parked->count++] = (cubert_parked_error){stream, error};
}

size_t cubert_parked_count_of(const cubert_parked_errors *parked, cubert_stream_id stream) {
  size_t count = 0;
  for (size_t i = 0; i < parked->count; ++i) count += parked->items[i].stream == stream;
  return count;
}

size_t cubert_parked_take(cubert_parked_errors *parked, cubert_stream_id stream,
                          cubert_status *out) {
  size_t n = 0, kept = 0;
  for (size_t i = 0; i < parked->count; ++i) {
    if (parked->items[i].stream == stream)
      out[n++] = parked->items[i].error;
    else
      parked->items[kept++] = parked->items[i];
  }
  parked->count = kept;
  return n;
}

void cubert_parked_release(cubert_parked_errors *parked) {
  for (size_t i = 0; i < parked->count; ++i) cubert_status_free(parked->items[i].error);
  free(parked->items);
  *parked = (cubert_parked_errors){0};
}

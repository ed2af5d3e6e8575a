/* cubert — stream slots. Stream ids map onto max_streams slots (id % max_streams), as in the
   reference StreamPool; a slot is created the first time work is submitted to it and owns the
   server's stream, the stream's memory manager and its error queue.

   Errors belong to the stream id that raised them, not to the slot: a slot serves one id at a
   time (its owner), and the slot's error queue tags each error with the id that submitted the
   failed command. When another id submits to the slot, it takes the slot over:
   - on a server that tags errors itself (cubert_server.tags_errors: the CPU server keeps the
     submitter with each queued command), at once: the queue's submitter changes and the
     previous owner's work goes on running ahead of the new owner's, as in the reference's
     shared streams; each id still receives only its own errors, and its work is skipped only
     behind its own failures;
   - on other servers (OpenCL: a failed command of an in-order queue fails the commands queued
     behind it, whoever queued them), the host first waits for the owner's work and parks its
     errors under its id (stream/parked.c).
   Either way a stream never receives another's error or has its work skipped because of it.
   A hand-over happens only when more threads than slots submit at once. */
#include "stream/slots.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/status.h"
#include "client.h"
#include "device.h"
#include "stream/errors.h"

static cubert_stream_id client_stream(const cubert_client_obj *client) {
  return client->pinned ? client->stream : cubert_stream_id_current();
}

cubert_status cubert_slot_acquire(cubert_device *device, const cubert_client_obj *client,
                                  uint32_t *out_index, cubert_stream_slot **out) {
  *out = NULL;
  cubert_stream_id id = client_stream(client);
  uint32_t index = (uint32_t)(id % device->max_streams);
  cubert_stream_slot *slot = NULL;
  int created = device->slots[index] == NULL;
  CUBERT_RETURN_IF_ERROR(cubert_slot_get(device, index, &slot));
  if (created) {
    slot->owner = id;
    cubert_stream_errors_set_submitter(slot->errors, id);
  }
  if (slot->owner != id && device->server->tags_errors) {
    cubert_log(CUBERT_LOG_INFO, "stream",
               "stream %llu takes slot %u over from stream %llu on '%s' (no host wait: the "
               "server keeps each stream's errors apart; more slots: CUBERT_MAX_STREAMS)",
               (unsigned long long)id, index, (unsigned long long)slot->owner,
               device->server->properties.name);
    cubert_stream_errors_set_submitter(slot->errors, id);
    slot->owner = id;
  }
  if (slot->owner != id) {
    /* Room first, so that a failure leaves the slot with its owner and its errors. */
    if (!cubert_parked_reserve(&device->parked, 2))
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "host allocation failed while stream %llu took over slot %u",
                                (unsigned long long)id, index);
    cubert_server *server = device->server;
    const uint64_t start = cubert_now_ns();
    cubert_parked_push(&device->parked, slot->owner, cubert_slot_sync(device, slot));
    cubert_parked_push(&device->parked, slot->owner,
                       cubert_stream_errors_take_for(slot->errors, slot->owner));
    cubert_log(CUBERT_LOG_INFO, "stream",
               "stream %llu takes slot %u over from stream %llu on '%s' (the host waited %.1f us "
               "for its work; more slots: CUBERT_MAX_STREAMS)",
               (unsigned long long)id, index, (unsigned long long)slot->owner,
               server->properties.name, (double)(cubert_now_ns() - start) / 1e3);
    cubert_stream_errors_set_submitter(slot->errors, id);
    slot->owner = id;
  }
  if (out_index) *out_index = index;
  *out = slot;
  return NULL;
}

static cubert_status take_errors(cubert_device *device, cubert_stream_id stream,
                                 cubert_stream_slot *slot);

cubert_status cubert_stream_take_errors(cubert_device *device, cubert_stream_id stream,
                                        cubert_stream_slot *slot) {
  cubert_status errors = take_errors(device, stream, slot);
  /* Whoever collects them (a sync, a read, a profile's end), every profile open on the stream
     saw the failure too. */
  if (errors && device->profiles.count) cubert_profiles_fail(device, stream, errors);
  return errors;
}

static cubert_status take_errors(cubert_device *device, cubert_stream_id stream,
                                 cubert_stream_slot *slot) {
  /* The stream's slot (id % max_streams) holds its errors, whoever owns the slot now. */
  cubert_status own = slot ? cubert_stream_errors_take_for(slot->errors, stream) : NULL;
  size_t count = cubert_parked_count_of(&device->parked, stream);
  if (count == 0) return own;
  cubert_status *list = malloc((count + 1) * sizeof(*list));
  if (!list) {
    /* Keep the parked ones for the next call; report what we have now. */
    return own ? own
               : cubert_status_make(CUBERT_CODE_SERVER_UNHEALTHY,
                                    "asynchronous errors are pending on stream %llu (no memory "
                                    "to report them now)",
                                    (unsigned long long)stream);
  }
  size_t n = cubert_parked_take(&device->parked, stream, list);
  if (own) list[n++] = own;
  return cubert_status_merge(list, n);
}

static void slot_destroy(cubert_device *device, cubert_stream_slot *slot) {
  if (!slot) return;
  cubert_server *server = device->server;
  if (slot->stream) {
    cubert_status_free(server->vtable->sync(server, slot->stream));
    server->vtable->stream_destroy(server, slot->stream);
  }
  cubert_memory_manager_destroy(slot->memory);
  cubert_stream_errors_destroy(slot->errors);
  free(slot->last_synced);
  free(slot);
}

cubert_status cubert_slot_sync(cubert_device *device, cubert_stream_slot *slot) {
  const uint64_t submitted = slot->cursor;
  cubert_status s = device->server->vtable->sync(device->server, slot->stream);
  if (!s) slot->finished = submitted;
  return s;
}

cubert_status cubert_slot_get(cubert_device *device, uint32_t index, cubert_stream_slot **out) {
  cubert_stream_slot *slot = device->slots[index];
  if (slot) {
    *out = slot;
    return NULL;
  }
  *out = NULL;
  slot = calloc(1, sizeof(*slot));
  if (!slot)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of stream slot %u failed",
                              index);
  cubert_status s = cubert_stream_errors_create(&slot->errors);
  if (!s) s = cubert_memory_manager_create(&device->storage, device->pool_override, &slot->memory);
  if (!s) s = device->server->vtable->stream_create(device->server, slot->errors, &slot->stream);
  if (s) {
    slot_destroy(device, slot);
    return s;
  }
  device->slots[index] = slot;
  *out = slot;
  return NULL;
}

uint64_t cubert_slots_reclaim(cubert_device *device, const cubert_memory_manager *keep) {
  uint64_t freed = 0;
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (!slot || slot->memory == keep) continue;
    cubert_memory_usage before, after;
    cubert_memory_usage_get(slot->memory, &before);
    cubert_memory_cleanup(slot->memory, 1);
    cubert_mem_manager_totals(slot->memory, &after);
    freed += before.bytes_reserved - after.bytes_reserved;
  }
  return freed;
}

void cubert_slots_destroy(cubert_device *device) {
  if (!device->slots) return;
  /* Wait for every stream first: a queued launch on one slot may hold a slice of another. */
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (slot && slot->stream) cubert_status_free(cubert_slot_sync(device, slot));
  }
  for (uint32_t i = 0; i < device->max_streams; ++i) slot_destroy(device, device->slots[i]);
  free(device->slots);
  device->slots = NULL;
}

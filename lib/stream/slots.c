/* cubert — stream slots. Stream ids map onto max_streams slots (id % max_streams), as in the
   reference StreamPool; a slot is created the first time work is submitted to it and owns the
   server's stream, the stream's memory manager and its error queue. */
#include <stdlib.h>

#include "client_internal.h"

uint32_t cubert_client_slot_index(const cubert_client *client) {
  cubert_stream_id id = client->pinned ? client->stream : cubert_stream_id_current();
  return (uint32_t)(id % client->device->max_streams);
}

static void slot_destroy(cubert_device *device, cubert_stream_slot *slot) {
  if (!slot) return;
  cubert_server *server = device->server;
  if (slot->stream) {
    server->vtable->sync(server, slot->stream);
    server->vtable->stream_destroy(server, slot->stream);
  }
  cubert_memory_manager_destroy(slot->memory);
  cubert_stream_errors_destroy(slot->errors);
  free(slot->last_synced);
  free(slot);
}

cubert_status cubert_slot_get(cubert_device *device, uint32_t index, cubert_stream_slot **out) {
  cubert_stream_slot *slot = device->slots[index];
  if (slot) {
    *out = slot;
    return NULL;
  }
  *out = NULL;
  slot = calloc(1, sizeof(*slot));
  uint64_t *synced = calloc(device->max_streams, sizeof(uint64_t));
  if (!slot || !synced) {
    free(slot);
    free(synced);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of stream slot %u failed",
                              index);
  }
  slot->last_synced = synced;
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

void cubert_slots_destroy(cubert_device *device) {
  if (!device->slots) return;
  /* Wait for every stream first: a queued launch on one slot may hold a slice of another. */
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (slot && slot->stream) device->server->vtable->sync(device->server, slot->stream);
  }
  for (uint32_t i = 0; i < device->max_streams; ++i) slot_destroy(device, device->slots[i]);
  free(device->slots);
  device->slots = NULL;
}

cubert_status cubert_slot_take_errors(cubert_stream_slot *slot) {
  return cubert_stream_errors_take(slot->errors);
}

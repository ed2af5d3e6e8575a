/* cubert — stream slots (slots.c): stream ids map onto a device's max_streams slots
   (id % max_streams); a slot owns the server's stream, the stream's memory and its error
   queue, and serves one stream id at a time. Lock: the device lock, held by every caller. */
#ifndef CUBERT_STREAM_SLOTS_H
#define CUBERT_STREAM_SLOTS_H

#include <stdint.h>

#include "cubert/server.h"
#include "cubert/stream.h"
#include "device.h"
#include "memory/memory_manager.h"

typedef struct cubert_client_obj cubert_client_obj;

/* One stream slot: the server's queue, the stream's memory, its error queue and the cursors of
   the cross-stream protocol (stream/README.md). Created on first use. */
struct cubert_stream_slot {
  cubert_server_stream *stream;
  cubert_memory_manager *memory;
  cubert_stream_errors *errors;
  uint64_t cursor;       /* commands submitted on this slot so far */
  uint64_t *last_synced; /* [max_streams] or NULL until the slot first waits for another:
                            origin cursor this slot has waited for (resolve.c) */
  uint64_t finished;     /* cursor the host knows finished: the last successful slot sync */
  /* The stream id that submits to the slot now. Ids share slots (id % max_streams); another id
     takes the slot over at once on a server that tags errors itself (cubert_server.tags_errors,
     the CPU server), else only after the previous owner's work finished (slots.c). The error
     queue tags each error with the id that submitted the failed command, so either way an
     error reaches only that id. */
  cubert_stream_id owner;
};

/* The calling stream's slot, created on first use, after taking it over for the calling
   stream id when another id used it last: at once where the server tags errors, else after
   waiting for that id's work and parking its errors for it (slots.c). */
cubert_status cubert_slot_acquire(cubert_device *device, const cubert_client_obj *client,
                                  uint32_t *out_index, cubert_stream_slot **out);
/* Errors parked for `stream` (stream/parked.h) and those its slot's queue holds for it, whoever
   owns the slot now, as one SERVER_UNHEALTHY, or NULL. */
cubert_status cubert_stream_take_errors(cubert_device *device, cubert_stream_id stream,
                                        cubert_stream_slot *slot);
/* Slot `index`, created on first use. */
cubert_status cubert_slot_get(cubert_device *device, uint32_t index, cubert_stream_slot **out);
/* The server's sync of the slot's stream; on success the slot's commands so far count as
   finished, so other slots no longer wait for them on the device (resolve.c). */
cubert_status cubert_slot_sync(cubert_device *device, cubert_stream_slot *slot);
/* Frees the idle pages (no live slice) of every slot's memory but `keep`'s (explicit cleanup,
   memory/README.md); returns the bytes freed. The device's storage reclaim: a reservation that
   the storage refused calls it before it reports OUT_OF_MEMORY. */
uint64_t cubert_slots_reclaim(cubert_device *device, const cubert_memory_manager *keep);
/* Waits for every slot's work and frees the slots (device destruction). */
void cubert_slots_destroy(cubert_device *device);

#endif

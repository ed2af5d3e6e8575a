/* cubert — cross-stream synchronisation (the reference MultiStream, keyed by last use).

   Every slot counts the commands submitted to it (its cursor). Every slice remembers the slot
   and cursor of the last command that used it (any bound buffer may be written). Before a
   command on slot C uses a slice last used on slot O != C, C must wait for O up to that
   cursor: unless C already waited for O at or past it (last_synced[O], made at C's first such
   wait), the core records an event on O and makes C wait for it on the device, then notes
   last_synced[O] = O.cursor.
   Nor when the host already saw O finish past that cursor (a sync of O returned: O.finished),
   so a producer that reuses a buffer after its consumer synced does not wait on the device for
   work known to be done, as a hand-written OpenCL program would not.
   Because every cross-slot use waits for the previous user, the users of one slice form a
   chain, so tracking the last one is enough (write-after-read included).

   The reference compares against the slice's ALLOCATION cursor, so a buffer written again on
   its origin stream after a consumer synced past its allocation is not waited for; keying on
   the last use fixes that. Pinning: servers retain every slice a queued command uses until the
   command finished, so a slice used by another stream is never reused by its origin early. */
#include "stream/resolve.h"

#include <stdlib.h>

#include "base/log.h"
#include "device.h"
#include "stream/slots.h"

cubert_status cubert_slot_resolve(cubert_device *device, uint32_t index,
                                  const cubert_binding *bindings, uint32_t count) {
  cubert_stream_slot *current = device->slots[index];
  cubert_server *server = device->server;
  for (uint32_t i = 0; i < count; ++i) {
    const cubert_slice *slice = bindings[i].slice;
    uint32_t origin = slice->last_stream;
    if (origin == index || slice->last_cursor == 0) continue;
    if (current->last_synced && current->last_synced[origin] >= slice->last_cursor) continue;
    cubert_stream_slot *from = device->slots[origin];
    /* Never used (nothing to wait for), or the host saw its work finish past the cursor. */
    if (!from || from->finished >= slice->last_cursor) continue;
    cubert_event *event = NULL;
    CUBERT_RETURN_IF_ERROR(server->vtable->event_record(server, from->stream, &event));
    cubert_status s = server->vtable->event_wait(server, current->stream, event);
    server->vtable->event_release(server, event);
    if (s) return s;
    cubert_log(CUBERT_LOG_DEBUG, "stream",
               "slot %u waits on the device for slot %u (command %llu), which last used a buffer",
               index, origin, (unsigned long long)slice->last_cursor);
    /* Made at the first wait: most slots never wait for another, and max_streams cursors for
       each of max_streams slots would be 128 MiB at 4,096 slots. Without it (no host memory)
       the wait above still stands; a later command merely waits again. */
    if (!current->last_synced) current->last_synced = calloc(device->max_streams, sizeof(uint64_t));
    if (current->last_synced) current->last_synced[origin] = from->cursor;
  }
  return NULL;
}

void cubert_slot_mark_used(cubert_device *device, uint32_t index, const cubert_binding *bindings,
                           uint32_t count) {
  cubert_stream_slot *slot = device->slots[index];
  uint64_t cursor = ++slot->cursor;
  for (uint32_t i = 0; i < count; ++i) {
    bindings[i].slice->last_stream = index;
    bindings[i].slice->last_cursor = cursor;
  }
}

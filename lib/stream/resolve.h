/* cubert — cross-stream synchronisation (resolve.c): before a command on one slot uses a
   buffer last used on another slot, the slot waits for that use on the device. Lock: the
   device lock, held by every caller. */
#ifndef CUBERT_STREAM_RESOLVE_H
#define CUBERT_STREAM_RESOLVE_H

#include <stdint.h>

#include "cubert/server.h"
#include "device.h"

/* Makes slot `index` wait (on the device) for the last command that used each binding on
   another slot. */
cubert_status cubert_slot_resolve(cubert_device *device, uint32_t index,
                                  const cubert_binding *bindings, uint32_t count);
/* Records that a command on slot `index` used these bindings. */
void cubert_slot_mark_used(cubert_device *device, uint32_t index, const cubert_binding *bindings,
                           uint32_t count);

#endif

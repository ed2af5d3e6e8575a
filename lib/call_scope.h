/* cubert — the call scope: what a client call on the calling stream holds while it runs. Every
   such call holds the client (so that it and its device stay alive even when the caller drops
   its last reference meanwhile), the device lock and the calling stream's slot, which it takes
   over for the calling stream id when another id used it last (stream/slots.c parks that id's
   errors). cubert_call_enter takes all three; calls that check their arguments between holding
   the client and locking the device (a handle of that client, the client's backend) use
   cubert_call_open, then cubert_call_lock. cubert_call_leave gives back whatever is held
   (cubert_call_unlock the lock alone, earlier).

   The scope collects no errors itself: which of the stream's errors a call reports, and when,
   is the call's own (a sync collects them, a launch does not). */
#ifndef CUBERT_CALL_SCOPE_H
#define CUBERT_CALL_SCOPE_H

#include <stdint.h>

#include "client.h"
#include "device.h"
#include "stream/slots.h"

typedef struct cubert_call {
  cubert_client *client;    /* the token, held from open to leave (NULL: nothing held) */
  cubert_client_obj *obj;   /* its object */
  cubert_device *device;    /* obj->device */
  cubert_server *server;    /* device->server */
  uint32_t index;           /* the calling stream's slot index (after lock) */
  cubert_stream_slot *slot; /* that slot (after lock) */
  int locked;               /* 1: the device lock is held */
} cubert_call;

/* Holds `client`: INVALID_ARGUMENT for NULL, NOT_FOUND for a released client (the messages of
   cubert_client_acquire). On failure nothing is held. */
cubert_status cubert_call_open(cubert_client *client, cubert_call *call);
/* Locks the device and takes the calling stream's slot. On failure the device lock is given
   back at once (the client stays held until cubert_call_leave). */
cubert_status cubert_call_lock(cubert_call *call);
/* cubert_call_open, then cubert_call_lock; on failure nothing is held. */
cubert_status cubert_call_enter(cubert_client *client, cubert_call *call);
/* Gives back the device lock early, for host work after the server was driven (dropping the
   references on a launch's handles); the client stays held. */
void cubert_call_unlock(cubert_call *call);
/* Gives back the device lock and the client, as far as held; returns `s` (the call's result),
   so that a call ends with `return cubert_call_leave(&call, s);`. */
cubert_status cubert_call_leave(cubert_call *call, cubert_status s);

#endif

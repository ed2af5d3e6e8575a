/* cubert — the call scope (call_scope.h): one place for the sequence every client call on the
   calling stream begins and ends with. Lock order: the client's object reference first (it
   keeps the device alive), then the device lock; the device lock is recursive, so a call inside
   an exclusive() or profile() callback enters its scope on the holding thread as well. */
#include "call_scope.h"

#include <string.h>

cubert_status cubert_call_open(cubert_client *client, cubert_call *call) {
  memset(call, 0, sizeof(*call));
  cubert_client_obj *obj = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &obj));
  call->client = client;
  call->obj = obj;
  call->device = obj->device;
  call->server = obj->device->server;
  return NULL;
}

cubert_status cubert_call_lock(cubert_call *call) {
  cubert_device_lock(call->device);
  cubert_status s = cubert_slot_acquire(call->device, call->obj, &call->index, &call->slot);
  if (s) {
    cubert_device_unlock(call->device);
    return s;
  }
  call->locked = 1;
  return NULL;
}

cubert_status cubert_call_enter(cubert_client *client, cubert_call *call) {
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, call));
  cubert_status s = cubert_call_lock(call);
  if (s) cubert_call_leave(call, NULL);
  return s;
}

void cubert_call_unlock(cubert_call *call) {
  if (call->locked) cubert_device_unlock(call->device);
  call->locked = 0;
}

cubert_status cubert_call_leave(cubert_call *call, cubert_status s) {
  if (call->locked) cubert_device_unlock(call->device);
  if (call->client) cubert_client_release(call->client);
  memset(call, 0, sizeof(*call));
  return s;
}

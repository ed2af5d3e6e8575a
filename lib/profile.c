/* cubert — exclusive access and profiling. Tokens nest and overlap: each open token remembers
   its stream; the server measures between begin and end (device timestamps on OpenCL, the
   host clock after syncing on the CPU server). A token is `device serial << 32 | counter`, so
   a token of another device is recognised (NOT_FOUND) rather than ending a profile of this one
   that happens to have the same counter. An error of a stream fails every profile open on it:
   the first profile to end collects the stream's errors and leaves a copy with the others. */
#include "profile.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "base/status.h"
#include "call_scope.h"
#include "client.h"
#include "device.h"
#include "stream/slots.h"

void cubert_profile_state_init(cubert_profile_state *state) {
  static _Atomic uint64_t serials;
  *state = (cubert_profile_state){0};
  state->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
}

void cubert_profile_state_release(cubert_profile_state *state) {
  for (size_t i = 0; i < state->count; ++i) cubert_status_free(state->entries[i].failure);
  free(state->entries);
  *state = (cubert_profile_state){0};
}

uint64_t cubert_profile_token_next(cubert_device *device) {
  cubert_profile_state *p = &device->profiles;
  return p->serial << 32 | (++p->next_token & 0xffffffffu);
}

void cubert_profiles_fail(cubert_device *device, cubert_stream_id stream, cubert_status error) {
  for (size_t i = 0; i < device->profiles.count; ++i) {
    cubert_profile_entry *e = &device->profiles.entries[i];
    if (e->stream == stream && !e->failure) e->failure = cubert_status_clone(error);
  }
}

cubert_status cubert_client_exclusive(cubert_client *client, cubert_client_fn fn, void *user) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  if (!fn) {
    cubert_client_release(client);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "fn is NULL");
  }
  /* The device lock is recursive: the callback may call back into the client freely, and no
     other thread can use the device until it returns. The reference this call holds keeps
     the client (and its device) alive even when the callback drops the caller's last one. */
  cubert_device_lock(c->device);
  cubert_status s = fn(client, user);
  cubert_device_unlock(c->device);
  cubert_client_release(client);
  return s;
}

/* Opens a profile on the call's stream (the device lock held meanwhile). */
static cubert_status profile_start(cubert_call *call, cubert_profile_token *out) {
  cubert_device *device = call->device;
  cubert_server *server = call->server;
  cubert_status s = cubert_call_lock(call);
  cubert_stream_slot *slot = call->slot;
  uint32_t index = call->index;
  if (!s && device->profiles.count == device->profiles.cap) {
    size_t cap = device->profiles.cap ? device->profiles.cap * 2 : 8;
    cubert_profile_entry *grown = realloc(device->profiles.entries, cap * sizeof(*grown));
    if (!grown)
      s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    else {
      device->profiles.entries = grown;
      device->profiles.cap = cap;
    }
  }
  uint64_t token = cubert_profile_token_next(device);
  cubert_timing timing;
  if (!s) s = cubert_timing_begin(server, slot->stream, token, &timing);
  if (!s) {
    device->profiles.entries[device->profiles.count++] =
        (cubert_profile_entry){timing, index, slot->owner, NULL};
    out->id = token;
  }
  cubert_call_unlock(call);
  return s;
}

cubert_status cubert_client_profile_start(cubert_client *client, cubert_profile_token *out) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  return cubert_call_leave(&call,
                           out ? profile_start(&call, out)
                               : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL"));
}

static cubert_status profile_end(cubert_device *device, cubert_profile_token token,
                                 cubert_profile_duration *out) {
  if (token.id >> 32 != device->profiles.serial)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                              "profile token %llu belongs to another device instance",
                              (unsigned long long)token.id);
  cubert_server *server = device->server;
  cubert_device_lock(device);
  size_t at = device->profiles.count;
  for (size_t i = 0; i < device->profiles.count; ++i)
    if (device->profiles.entries[i].timing.token == token.id) at = i;
  if (at == device->profiles.count) {
    cubert_device_unlock(device);
    return cubert_status_make(CUBERT_CODE_NOT_REGISTERED,
                              "no profiling registered for token %llu (never started or already "
                              "ended)",
                              (unsigned long long)token.id);
  }
  cubert_profile_entry entry = device->profiles.entries[at];
  device->profiles.entries[at] = device->profiles.entries[--device->profiles.count];
  cubert_stream_slot *slot = device->slots[entry.slot];
  cubert_profile_duration d = {0};
  cubert_status s = cubert_timing_end(server, slot->stream, &entry.timing, &d);
  cubert_status errors = cubert_stream_take_errors(device, entry.stream, slot);
  cubert_device_unlock(device);
  if (!errors)
    errors = entry.failure;
  else
    cubert_status_free(entry.failure);
  if (errors) {
    cubert_status_free(s);
    return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, errors,
                              "an execution error happened during profiling");
  }
  if (s) return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, s, "profiling failed");
  *out = d;
  return NULL;
}

cubert_status cubert_client_profile_end(cubert_client *client, cubert_profile_token token,
                                        cubert_profile_duration *out) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  return cubert_call_leave(&call,
                           out ? profile_end(call.device, token, out)
                               : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL"));
}

cubert_status cubert_client_profile(cubert_client *client, cubert_client_fn fn, void *user,
                                    cubert_profile_duration *out) {
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_open(client, &call));
  if (!fn || !out)
    return cubert_call_leave(
        &call, cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "fn and out must be non-NULL"));
  /* The device lock is held from the start to the end of the profile, around the callback
     (recursive: the callback uses the client freely), so no other thread's work is measured. */
  cubert_device *device = call.device;
  cubert_device_lock(device);
  cubert_profile_token token;
  cubert_status s = profile_start(&call, &token);
  if (s) {
    cubert_device_unlock(device);
    return cubert_call_leave(
        &call, cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, s, "profiling could not start"));
  }
  cubert_status inner = fn(client, user);
  cubert_status end = profile_end(device, token, out);
  cubert_device_unlock(device);
  cubert_call_leave(&call, NULL);
  if (inner) {
    cubert_status_free(end);
    return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, inner,
                              "an error happened inside the profiled function");
  }
  return end;
}

/* cubert — exclusive access and profiling. Tokens nest and overlap: each open token remembers
   its stream slot; the server measures between begin and end (device timestamps on OpenCL,
   the host clock after syncing on the CPU server). */
#include <stdlib.h>

#include "client_internal.h"

cubert_status cubert_client_exclusive(cubert_client *client, cubert_client_fn fn, void *user) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!fn) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "fn is NULL");
  /* The device lock is recursive: the callback may call back into the client freely, and no
     other thread can use the device until it returns. */
  cubert_device_lock(client->device);
  cubert_status s = fn(client, user);
  cubert_device_unlock(client->device);
  return s;
}

cubert_status cubert_client_profile_start(cubert_client *client, cubert_profile_token *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_device *device = client->device;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  uint32_t index = cubert_client_slot_index(client);
  cubert_stream_slot *slot = NULL;
  cubert_status s = cubert_slot_get(device, index, &slot);
  if (!s && device->profile_count == device->profile_cap) {
    size_t cap = device->profile_cap ? device->profile_cap * 2 : 8;
    cubert_profile_entry *grown = realloc(device->profiles, cap * sizeof(*grown));
    if (!grown)
      s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    else {
      device->profiles = grown;
      device->profile_cap = cap;
    }
  }
  uint64_t token = ++device->next_token;
  if (!s) s = server->vtable->profile_begin(server, slot->stream, token);
  if (!s) {
    device->profiles[device->profile_count++] = (cubert_profile_entry){token, index};
    out->id = token;
  }
  cubert_device_unlock(device);
  return s;
}

cubert_status cubert_client_profile_end(cubert_client *client, cubert_profile_token token,
                                        cubert_profile_duration *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_device *device = client->device;
  cubert_server *server = device->server;
  cubert_device_lock(device);
  size_t at = device->profile_count;
  for (size_t i = 0; i < device->profile_count; ++i)
    if (device->profiles[i].token == token.id) at = i;
  if (at == device->profile_count) {
    cubert_device_unlock(device);
    return cubert_status_make(CUBERT_CODE_NOT_REGISTERED,
                              "no profiling registered for token %llu (never started or already "
                              "ended)",
                              (unsigned long long)token.id);
  }
  uint32_t index = device->profiles[at].slot;
  device->profiles[at] = device->profiles[--device->profile_count];
  cubert_stream_slot *slot = device->slots[index];
  uint64_t ns = 0;
  cubert_timing_method method = CUBERT_TIMING_SYSTEM;
  cubert_status s = server->vtable->profile_end(server, slot->stream, token.id, &ns, &method);
  cubert_status errors = cubert_slot_take_errors(slot);
  cubert_device_unlock(device);
  if (errors) {
    cubert_status_free(s);
    return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, errors,
                              "an execution error happened during profiling");
  }
  if (s) return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, s, "profiling failed");
  out->duration_ns = ns;
  out->method = method;
  return NULL;
}

cubert_status cubert_client_profile(cubert_client *client, cubert_client_fn fn, void *user,
                                    cubert_profile_duration *out) {
  CUBERT_RETURN_IF_ERROR(cubert_client_check(client));
  if (!fn || !out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "fn and out must be non-NULL");
  cubert_device_lock(client->device);
  cubert_profile_token token;
  cubert_status s = cubert_client_profile_start(client, &token);
  if (s) {
    cubert_device_unlock(client->device);
    return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, s, "profiling could not start");
  }
  cubert_status inner = fn(client, user);
  cubert_status end = cubert_client_profile_end(client, token, out);
  cubert_device_unlock(client->device);
  if (inner) {
    cubert_status_free(end);
    return cubert_status_wrap(CUBERT_CODE_PROFILE_FAILED, inner,
                              "an error happened inside the profiled function");
  }
  return end;
}

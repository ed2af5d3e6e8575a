/* cubert — memory control through a client: usage and per-pool reports, cleanup, persistent
   allocation windows and replacing the pool layout of every stream. */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "call_scope.h"
#include "client.h"
#include "device.h"
#include "stream/slots.h"

cubert_status cubert_client_memory_usage(cubert_client *client, cubert_memory_usage *out) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  if (!out) {
    cubert_client_release(client);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  }
  memset(out, 0, sizeof(*out));
  cubert_device *device = c->device;
  cubert_device_lock(device);
  for (uint32_t i = 0; i < device->max_streams; ++i) {
    cubert_stream_slot *slot = device->slots[i];
    if (!slot) continue;
    cubert_memory_usage u;
    cubert_memory_usage_get(slot->memory, &u);
    out->number_allocs += u.number_allocs;
    out->bytes_in_use += u.bytes_in_use;
    out->bytes_padding += u.bytes_padding;
    out->bytes_reserved += u.bytes_reserved;
  }
  cubert_device_unlock(device);
  cubert_client_release(client);
  return NULL;
}

cubert_status cubert_client_memory_report(cubert_client *client, cubert_memory_report *out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof(*out));
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_memory_report_get(call.slot->memory, out);
  return cubert_call_leave(&call, NULL);
}

cubert_status cubert_client_memory_cleanup(cubert_client *client) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_device *device = c->device;
  cubert_device_lock(device);
  for (uint32_t i = 0; i < device->max_streams; ++i)
    if (device->slots[i]) cubert_memory_cleanup(device->slots[i]->memory, 1);
  cubert_device_unlock(device);
  cubert_client_release(client);
  return NULL;
}

cubert_status cubert_client_allocation_mode(cubert_client *client, cubert_allocation_mode mode) {
  if (mode != CUBERT_ALLOCATION_AUTO && mode != CUBERT_ALLOCATION_PERSISTENT)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "mode is %d; expected CUBERT_ALLOCATION_AUTO (0) or _PERSISTENT (1)",
                              (int)mode);
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_status s = cubert_memory_set_mode(call.slot->memory, mode);
  return cubert_call_leave(&call, s);
}

cubert_status cubert_client_memory_persistent(cubert_client *client,
                                              cubert_status (*task)(cubert_client *, void *),
                                              void *arg) {
  if (!task)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_client_memory_persistent: task is NULL");
  CUBERT_RETURN_IF_ERROR(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_PERSISTENT));
  cubert_status s = task(client, arg);
  cubert_status left = cubert_client_allocation_mode(client, CUBERT_ALLOCATION_AUTO);
  if (s) {
    cubert_status_free(left);
    return s;
  }
  return left;
}

/* Copies `config` (and its pool list) for the device to keep. */
static cubert_status config_copy(const cubert_memory_config *config, cubert_memory_config **out) {
  *out = NULL;
  cubert_memory_config *copy = malloc(sizeof(*copy));
  cubert_pool_config *list = NULL;
  if (config->pool_count) list = malloc(config->pool_count * sizeof(*list));
  if (!copy || (config->pool_count && !list)) {
    free(copy);
    free(list);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  *copy = *config;
  if (list) memcpy(list, config->pools, config->pool_count * sizeof(*list));
  copy->pools = list;
  *out = copy;
  return NULL;
}

static cubert_status install_pools(cubert_device *device, const cubert_memory_config *config) {
  /* Validate once on a scratch manager, so a bad layout changes nothing. */
  cubert_memory_manager *probe = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_memory_manager_create(&device->storage, config, &probe));
  cubert_memory_manager_destroy(probe);
  cubert_memory_config *copy = NULL;
  CUBERT_RETURN_IF_ERROR(config_copy(config, &copy));

  cubert_device_lock(device);
  /* All or nothing: refuse before touching any slot if one still has live dynamic memory,
     with the same check the per-slot install makes (so that the install below cannot refuse
     once this passed). */
  cubert_status s = NULL;
  for (uint32_t i = 0; i < device->max_streams && !s; ++i) {
    if (!device->slots[i]) continue;
    cubert_status in_use = cubert_memory_pools_in_use(device->slots[i]->memory);
    if (in_use)
      s = cubert_status_wrap(CUBERT_CODE_POOLS_IN_USE, in_use,
                             "cubert_client_install_memory_pools: nothing was installed: stream "
                             "slot %u (stream %llu)",
                             i, (unsigned long long)device->slots[i]->owner);
  }
  /* Build every slot's pools first and install them only when all were built, so a failure
     (out of memory, say) leaves every stream, and the saved layout, as they were. */
  cubert_memory_pools **built = NULL;
  if (!s) {
    built = calloc(device->max_streams, sizeof(*built));
    if (!built) s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  for (uint32_t i = 0; i < device->max_streams && !s; ++i)
    if (device->slots[i]) s = cubert_memory_pools_build(device->slots[i]->memory, copy, &built[i]);
  for (uint32_t i = 0; i < device->max_streams && !s; ++i) {
    if (!device->slots[i]) continue;
    /* Cannot fail: no slot holds a live dynamic slice (checked above with the same test,
       under the lock); should it, the error is reported, not dropped. */
    s = cubert_memory_pools_install(device->slots[i]->memory, built[i]);
    if (!s) built[i] = NULL;
  }
  if (!s) {
    free(device->pool_override_list);
    free(device->pool_override);
    device->pool_override_list = (cubert_pool_config *)copy->pools;
    device->pool_override = copy;
    copy = NULL;
  }
  if (built)
    for (uint32_t i = 0; i < device->max_streams; ++i) cubert_memory_pools_free(built[i]);
  free(built);
  cubert_device_unlock(device);
  if (copy) free((void *)copy->pools);
  free(copy);
  return s;
}

cubert_status cubert_client_install_memory_pools(cubert_client *client,
                                                 const cubert_memory_config *config) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_status s = config ? install_pools(c->device, config)
                           : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "config is NULL");
  cubert_client_release(client);
  return s;
}

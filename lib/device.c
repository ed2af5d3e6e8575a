/* cubert — a device instance: the server a selector opened, with the state every client of it
   shares (the lock, stream slots, memory pools, profiles, tuner). Clients hold references; the
   last release destroys the server. */
#include "device.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/config.h"
#include "base/log.h"
#include "cubert/config.h"
#include "device_registry.h"
#include "profile_log.h"
#include "registry.h"
#include "stream/slots.h"
#include "trace.h"
#include "tune/tuner.h"

/* Pages are logged at debug level, category memory (docs/environment.md). */
static cubert_status storage_alloc(void *ctx, uint64_t size, cubert_storage *out) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  cubert_status s = server->vtable->storage_alloc(server, size, out);
  if (!s)
    cubert_log(CUBERT_LOG_DEBUG, "memory", "page %llu of %llu bytes allocated on '%s'",
               (unsigned long long)out->id, (unsigned long long)size, server->properties.name);
  return s;
}
static void storage_free(void *ctx, cubert_storage *storage) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  cubert_log(CUBERT_LOG_DEBUG, "memory", "page %llu of %llu bytes freed on '%s'",
             (unsigned long long)storage->id, (unsigned long long)storage->size,
             server->properties.name);
  server->vtable->storage_free(server, storage);
}
static void storage_slice_cache_release(void *ctx, cubert_slice *slice) {
  cubert_server *server = ((cubert_device *)ctx)->server;
  server->vtable->slice_cache_release(server, slice);
}

/* Another slot's idle pages, freed when a reservation found the storage full (slots.c). */
static uint64_t storage_reclaim(void *ctx, const cubert_memory_manager *self) {
  cubert_device *device = ctx;
  uint64_t freed = cubert_slots_reclaim(device, self);
  cubert_log(CUBERT_LOG_INFO, "memory",
             "the storage of '%s' refused a page: freed %llu bytes of idle pages held by other "
             "stream slots before retrying",
             device->server->properties.name, (unsigned long long)freed);
  return freed;
}

static void device_destroy(cubert_device *device) {
  if (!device) return;
  if (device->server) cubert_slots_destroy(device); /* waits for the streams' work */
  cubert_transfer_release(device);                  /* its pinned slots are the server's memory */
  if (device->server) {
    cubert_trace_flush(device);
    device->server->vtable->destroy(device->server);
  }
  free(device->slots); /* NULL after cubert_slots_destroy */
  cubert_parked_release(&device->parked);
  free(device->pool_override);
  free(device->pool_override_list);
  cubert_profile_state_release(&device->profiles);
  cubert_kernel_stats_release(&device->kernel_stats);
  cubert_tuner_destroy(device->tuner);
  pthread_mutex_destroy(&device->lock);
  free(device);
}

void cubert_device_retain(cubert_device *device) {
  atomic_fetch_add_explicit(&device->refcount, 1, memory_order_relaxed);
}

void cubert_device_release(cubert_device *device) {
  if (atomic_fetch_sub_explicit(&device->refcount, 1, memory_order_acq_rel) == 1) {
    cubert_device_registry_remove(device); /* no lookup can revive it (device_registry.c) */
    device_destroy(device);
  }
}

cubert_status cubert_device_create(const cubert_device_key *key, cubert_device **out) {
  *out = NULL;
  cubert_device *device = calloc(1, sizeof(*device));
  if (!device) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  atomic_init(&device->refcount, 1);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&device->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  cubert_transfer_init(&device->transfer);
  cubert_profile_state_init(&device->profiles);
  device->max_streams = cubert_config_get()->max_streams;
  if (device->max_streams == 0) device->max_streams = 128;
  device->slots = calloc(device->max_streams, sizeof(*device->slots));
  if (!device->slots) {
    device_destroy(device);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  device->backend = key->backend;
  device->index = key->index;
  device->private_ = key->private_;
  if (key->shareable)
    snprintf(device->name, sizeof(device->name), "%s:%zu%s", key->backend->name, key->index,
             key->private_ ? "!private" : "");
  else
    snprintf(device->name, sizeof(device->name), "%.79s", key->selector);
  cubert_status s = cubert_registry_open(key, &device->server);
  if (s) {
    device_destroy(device);
    return s;
  }
  device->server->properties.properties_hash =
      cubert_device_properties_hash(&device->server->properties);
  const cubert_device_properties *p = &device->server->properties;
  device->storage = (cubert_storage_iface){
      .ctx = device,
      .alloc = storage_alloc,
      .free = storage_free,
      .slice_cache_release = storage_slice_cache_release,
      .reclaim = storage_reclaim,
      .alignment = p->memory.alignment ? p->memory.alignment : 1,
      .max_page_size = p->memory.max_page_size,
  };
  /* The server's layout policy (pitched on GPUs, whose loads coalesce per row; contiguous on
     CPUs, as the reference's). */
  device->pitch_align =
      device->server->layout == CUBERT_LAYOUT_POLICY_PITCHED ? device->storage.alignment : 0;
  *out = device;
  return NULL;
}

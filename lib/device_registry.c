/* cubert — one device instance per device: the process-wide list of shared instances.

   cubert_client_create resolves its selector (registry.c) to (backend, device index) and asks
   here for that device's instance: the live one when there is one, else a new one that is
   listed until its last reference goes. "!private" selectors, and backends that cannot resolve
   a spec without opening it, get an instance of their own that is never listed.

   The race between a lookup and the last release: device_release drops the count to 0 first
   and only then takes the list lock to unlist the instance, so a lookup can meet a listed
   instance whose count is already 0. A lookup therefore only takes a reference from a count
   that is not 0 (compare-and-swap); an instance at 0 is dying: the lookup unlists it and opens
   a new one, and the dying one's own unlisting then finds nothing to remove. */
#include "device_registry.h"

#include <pthread.h>
#include <stdio.h>

#include "device.h"
#include "registry.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static cubert_device *g_devices; /* listed instances, linked through registry_next */

/* A reference on `device` unless its count already reached 0 (it is being destroyed). */
static int try_retain(cubert_device *device) {
  uint32_t n = atomic_load_explicit(&device->refcount, memory_order_relaxed);
  while (n != 0)
    if (atomic_compare_exchange_weak_explicit(&device->refcount, &n, n + 1, memory_order_acquire,
                                              memory_order_relaxed))
      return 1;
  return 0;
}

/* Removes `device` from the list if it is there. List lock held. */
static void unlist_locked(cubert_device *device) {
  for (cubert_device **p = &g_devices; *p; p = &(*p)->registry_next)
    if (*p == device) {
      *p = device->registry_next;
      device->registry_next = NULL;
      device->listed = 0;
      return;
    }
}

void cubert_device_registry_remove(cubert_device *device) {
  pthread_mutex_lock(&g_lock);
  if (device->listed) unlist_locked(device);
  pthread_mutex_unlock(&g_lock);
}

cubert_status cubert_device_get(const char *selector, cubert_device **out) {
  *out = NULL;
  cubert_device_key key;
  CUBERT_RETURN_IF_ERROR(cubert_registry_resolve(selector, &key));
  if (key.private_ || !key.shareable) return cubert_device_create(&key, out);
  pthread_mutex_lock(&g_lock);
  for (cubert_device *d = g_devices; d; d = d->registry_next) {
    if (d->backend != key.backend || d->index != key.index) continue;
    if (try_retain(d)) {
      pthread_mutex_unlock(&g_lock);
      *out = d;
      return NULL;
    }
    unlist_locked(d); /* dying: its last release is on its way to unlist it */
    break;
  }
  /* Opened under the lock, so two clients of one device never open it twice. */
  cubert_status s = cubert_device_create(&key, out);
  if (!s) {
    (*out)->listed = 1;
    (*out)->registry_next = g_devices;
    g_devices = *out;
  }
  pthread_mutex_unlock(&g_lock);
  return s;
}

size_t cubert_device_registry_count(void) {
  size_t n = 0;
  pthread_mutex_lock(&g_lock);
  for (cubert_device *d = g_devices; d; d = d->registry_next) ++n;
  pthread_mutex_unlock(&g_lock);
  return n;
}

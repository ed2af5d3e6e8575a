/* cubert — a device instance (device.c): one server, shared by every client view and handle
   made from it, with the device lock, the stream slots and one member per subsystem, each
   declared and owned by its subsystem (its header says what its lock is). Not installed. */
#ifndef CUBERT_CORE_DEVICE_H
#define CUBERT_CORE_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cubert/backend.h"
#include "cubert/server.h"
#include "memory/memory_manager.h"
#include "profile.h"
#include "profile_log.h"
#include "stream/parked.h"
#include "trace.h"
#include "transfer.h"

typedef struct cubert_stream_slot cubert_stream_slot; /* stream/slots.h */

/* A device instance: one server, shared by every client view and handle made from it. */
typedef struct cubert_device {
  _Atomic uint32_t refcount; /* client views + live handles */
  cubert_server *server;
  const cubert_backend *backend;
  size_t index;  /* the device's index in the backend's list */
  int private_;  /* opened with "!private": never shared */
  char name[80]; /* "cpu:0", "opencl:1", "opencl:1!private": for messages */
  /* device_registry.c: the process-wide list of shared instances (its lock protects both) */
  struct cubert_device *registry_next;
  int listed;
  /* The device lock. Recursive so that exclusive()/profile() callbacks can use the client
     from the holding thread. The slots and memory settings below are protected by it. */
  pthread_mutex_t lock;
  uint32_t max_streams;
  cubert_stream_slot **slots; /* [max_streams], lazily created */
  cubert_storage_iface storage;
  cubert_memory_config *pool_override; /* installed layout, used by later slots */
  cubert_pool_config *pool_override_list;
  uint64_t pitch_align; /* row alignment of optimized layouts (0: contiguous) */
  /* The subsystems' per-device state, each owned by its file (see its header for its lock). */
  cubert_parked_errors parked;            /* stream/parked.h */
  cubert_profile_state profiles;          /* profile.h */
  cubert_kernel_stats_table kernel_stats; /* profile_log.h */
  cubert_trace_state trace;               /* trace.h */
  cubert_transfer_state transfer;         /* transfer.h */
  /* The autotune state (tune/tuner.h), created at its first use; has its own lock. */
  _Atomic(struct cubert_tuner *) tuner;
  /* Live clients the program made (every client but autotune's background view): when it falls
     to 0, background tuning stops (client.c). */
  atomic_uint user_clients;
} cubert_device;

/* device lifetime */
void cubert_device_retain(cubert_device *device);
void cubert_device_release(cubert_device *device);
/* Opens the device `key` names (registry.h) as a new, unlisted instance with one reference. */
struct cubert_device_key;
cubert_status cubert_device_create(const struct cubert_device_key *key, cubert_device **out);
static inline void cubert_device_lock(cubert_device *d) {
  pthread_mutex_lock(&d->lock);
}
static inline void cubert_device_unlock(cubert_device *d) {
  pthread_mutex_unlock(&d->lock);
}

#endif

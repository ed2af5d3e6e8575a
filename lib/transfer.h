/* cubert — data between devices (transfer.c): cubert_client_to_client's per-device state, the
   pinned staging slots of a source device, created at its first staged copy and kept for
   later ones.

   One cubert_transfer_state per device (cubert_device.transfer): cubert_transfer_init at device
   creation, cubert_transfer_release at destruction (before the server goes: the slots are its
   pinned memory). Locks: `lock` is held by the one copy that uses the slots; it is only ever
   try-locked (a copy that finds it held, or runs inside an exclusive() callback, stages through
   slots of its own), so its order with the device lock never matters. The device lock is taken
   inside it to allocate and free the slots. */
#ifndef CUBERT_TRANSFER_H
#define CUBERT_TRANSFER_H

#include <pthread.h>

#include "cubert/client.h"
#include "cubert/server.h"

typedef struct cubert_device cubert_device;
typedef struct cubert_transfer_staging cubert_transfer_staging;

typedef struct cubert_transfer_state {
  pthread_mutex_t lock;
  cubert_transfer_staging *staging; /* NULL until the first staged copy */
} cubert_transfer_state;

void cubert_transfer_init(cubert_transfer_state *state);
/* Frees the device's staging slots (through its server, which must still be there when any
   were made) and the lock. */
void cubert_transfer_release(cubert_device *device);

/* Copies the bytes of `src` into `dst` (bindings of `client`'s device, of one size) on the
   calling stream, ordered after both buffers' users on other streams (to_client within a device;
   autotune's scratch copies, tune/scratch.c). The caller keeps both slices alive. */
cubert_status cubert_transfer_copy_on_device(cubert_client *client, cubert_binding src,
                                             cubert_binding dst);

#endif

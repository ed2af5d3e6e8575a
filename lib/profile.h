/* cubert — the profiles open on a device (profile.c): cubert_client_profile_start/end tokens,
   each remembering its stream, slot and start, and the failure of its stream if one was raised
   while it was open.

   One cubert_profile_state per device (cubert_device.profiles): cubert_profile_state_init at
   device creation gives it the device's serial, cubert_profile_state_release frees it at
   destruction. Lock: the device lock, held by every caller of the functions below. */
#ifndef CUBERT_CORE_PROFILE_H
#define CUBERT_CORE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/status.h"
#include "cubert/stream.h"
#include "stream/timing.h"

typedef struct cubert_device cubert_device;

typedef struct cubert_profile_entry {
  cubert_timing timing; /* its token and start */
  uint32_t slot;
  cubert_stream_id stream;
  cubert_status failure; /* an error of the stream raised while the profile was open, or NULL */
} cubert_profile_entry;

/* Open profile tokens: serial << 32 | a counter, so a token of another device is told apart. */
typedef struct cubert_profile_state {
  uint64_t serial; /* the device instance's, unique in the process */
  uint64_t next_token;
  cubert_profile_entry *entries;
  size_t count, cap;
} cubert_profile_state;

/* Zeroes `state` and gives it the next device serial of the process. */
void cubert_profile_state_init(cubert_profile_state *state);
/* Frees the entries of profiles never ended, with their failures. */
void cubert_profile_state_release(cubert_profile_state *state);

uint64_t cubert_profile_token_next(cubert_device *device);
/* Leaves a copy of `error` with every profile open on `stream` that has none yet. */
void cubert_profiles_fail(cubert_device *device, cubert_stream_id stream, cubert_status error);

#endif

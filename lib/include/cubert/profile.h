/** @file
   cubert — profiling: nested and overlapping profile tokens, and profile(fn). */
#ifndef CUBERT_PROFILE_H
#define CUBERT_PROFILE_H

#include <stdint.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
/** A callback run by cubert_client_profile and cubert_client_exclusive (client.h). */
typedef cubert_status (*cubert_client_fn)(cubert_client *client, void *user);

/** An open profile region (cubert_client_profile_start). */
typedef struct cubert_profile_token {
  uint64_t id; /**< unique within the device instance */
} cubert_profile_token;

/** A measured duration, and where it lies on the clock that measured it. */
typedef struct cubert_profile_duration {
  uint64_t duration_ns;        /**< ns: end_ticks - start_ticks */
  cubert_timing_method method; /**< DEVICE: OpenCL event timestamps; SYSTEM: host clock */
  /** Start and end of the region in ns on the clock `method` names (the reference's
     ProfileTicks): DEVICE, the device's timestamps (the first command's start, the last
     command's end); SYSTEM, the host's monotonic clock once the stream's earlier work, and
     then the region's work, had finished. Regions of one device instance measured the same way
     compare directly. A region with no work on a device clock is 0 to 0. */
  uint64_t start_ticks;
  uint64_t end_ticks; /**< see start_ticks */
} cubert_profile_duration;

/** Starts a profile on the calling stream (its earlier work is synced first). Tokens nest and
   overlap. */
CUBERT_API cubert_status cubert_client_profile_start(cubert_client *client,
                                                     cubert_profile_token *out);
/** Ends a profile: waits for the stream and returns the duration. NOT_REGISTERED for a token
   of this device that was never started or already ended; NOT_FOUND for a token of another
   device instance; PROFILE_FAILED wrapping the cause when work on the stream failed while the
   profile was open (every profile open on the stream fails, not only the first to end). */
CUBERT_API cubert_status cubert_client_profile_end(cubert_client *client,
                                                   cubert_profile_token token,
                                                   cubert_profile_duration *out);
/** Runs fn inside exclusive access with a profile around it; returns fn's status (an error
   inside comes back as PROFILE_FAILED with it as cause) and the duration. */
CUBERT_API cubert_status cubert_client_profile(cubert_client *client, cubert_client_fn fn,
                                               void *user, cubert_profile_duration *out);

CUBERT_EXTERN_C_END

#endif /* CUBERT_PROFILE_H */

/* cubert — timing a region of a stream's work (timing.c): the server's profiler
   (cubert/server/profiler.h) where it has one, else the host clock after syncing the stream
   at both ends (the reference's TimingMethod::System). The profiles of lib/profile.c and the
   timed launches of lib/launch.c use it. Device lock held. */
#ifndef CUBERT_STREAM_TIMING_H
#define CUBERT_STREAM_TIMING_H

#include <stdint.h>

#include "cubert/device.h"
#include "cubert/profile.h"
#include "cubert/server.h"

/** A region being timed. */
typedef struct cubert_timing {
  uint64_t token;         /* the server profiler's token */
  uint64_t host_start_ns; /* without a profiler: when the stream's earlier work had finished */
} cubert_timing;

/* Starts timing the work queued on `stream` from now on. */
cubert_status cubert_timing_begin(cubert_server *server, cubert_server_stream *stream,
                                  uint64_t token, cubert_timing *out);
/* Ends the region: waits for its work, fills *out (duration, clock, start and end ticks). */
cubert_status cubert_timing_end(cubert_server *server, cubert_server_stream *stream,
                                const cubert_timing *timing, cubert_profile_duration *out);

#endif /* CUBERT_STREAM_TIMING_H */

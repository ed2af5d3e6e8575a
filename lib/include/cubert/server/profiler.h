/** @file
   cubert — optional server capability: timing a region of a stream's work on the device
   (lib/profile.c, and the autotuner's measurements through lib/launch.c). Without the table
   the core times on the host: it syncs the stream at both ends of the region and reads the
   clock (CUBERT_TIMING_SYSTEM). Locking: with the device lock held. */
#ifndef CUBERT_SERVER_PROFILER_H
#define CUBERT_SERVER_PROFILER_H

#include <stdint.h>

#include "cubert/profile.h"
#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** Device-side timing. Both entries are set. */
typedef struct cubert_server_profiler {
  /** Marks the start of a profiled region on the stream. Regions may nest and overlap
     (`token` identifies one). */
  cubert_status (*begin)(cubert_server *server, cubert_server_stream *stream, uint64_t token);
  /** Marks the end of region `token`, waits for it, and fills *out: its start and end ticks,
     their difference, and the clock (cubert/profile.h). */
  cubert_status (*end)(cubert_server *server, cubert_server_stream *stream, uint64_t token,
                       cubert_profile_duration *out);
} cubert_server_profiler;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_PROFILER_H */

/* cubert — timing a region of a stream's work (timing.h). */
#include "stream/timing.h"

#include "base/log.h"
#include "cubert/server/profiler.h"

cubert_status cubert_timing_begin(cubert_server *server, cubert_server_stream *stream,
                                  uint64_t token, cubert_timing *out) {
  out->token = token;
  out->host_start_ns = 0;
  if (server->profiler) return server->profiler->begin(server, stream, token);
  /* The region starts once the stream's earlier work finished, so it covers exactly the work
     queued inside it. */
  CUBERT_RETURN_IF_ERROR(server->vtable->sync(server, stream));
  out->host_start_ns = cubert_now_ns();
  return NULL;
}

cubert_status cubert_timing_end(cubert_server *server, cubert_server_stream *stream,
                                const cubert_timing *timing, cubert_profile_duration *out) {
  if (server->profiler) return server->profiler->end(server, stream, timing->token, out);
  cubert_status s = server->vtable->sync(server, stream);
  out->method = CUBERT_TIMING_SYSTEM;
  out->start_ticks = timing->host_start_ns;
  out->end_ticks = cubert_now_ns();
  out->duration_ns = out->end_ticks - out->start_ticks;
  return s;
}

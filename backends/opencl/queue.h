/* cubert — the OpenCL server's streams (queue.c): one in-order queue per stream, the FIFO of
   commands in flight and what they pin, events, waits and profile regions. Called with the
   device lock held, except cubert_ocl_event_sync (a clWaitForEvents). */
#ifndef CUBERT_OPENCL_QUEUE_H
#define CUBERT_OPENCL_QUEUE_H

#include <stdint.h>

#include "cubert/profile.h"
#include "opencl/server.h"

cubert_status cubert_ocl_stream_create(cubert_server *server, cubert_stream_errors *errors,
                                       cubert_server_stream **out);
void cubert_ocl_stream_destroy(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_ocl_flush(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_ocl_sync(cubert_server *server, cubert_server_stream *stream);
/* Records a command just enqueued on the stream. With an event (ownership moves in): the event
   enters the FIFO and takes over the open batch (it completes after those commands); with
   event == NULL the command joins the open batch. Either way the bindings' slices are retained
   and `host_free` (a host copy of `host_bytes` bytes) is freed once the command completed.
   `profiled`: the command counts for open profile regions. When memory to remember the command
   runs out, the stream is finished instead, so nothing is released early; never fails today,
   returns a status for future growth. */
cubert_status cubert_ocl_track(cubert_server_stream *stream, cl_event event, const char *what,
                               const cubert_binding *bindings, uint32_t binding_count,
                               void *host_free, uint64_t host_bytes, int profiled);
/* True while commands should ask for an event: a profile region is open, or (PoCL only) a
   wait that may still fail is queued. */
static inline int cubert_ocl_wants_event(const cubert_server_stream *stream) {
  return stream->profile_count > 0 || stream->fallible_waits > 0;
}
/* Releases every command that completed; negative statuses become stream errors. */
void cubert_ocl_poll(cubert_server_stream *stream);
/* Sync checks the commands enqueued without an event since the last evented one through a
   marker (cubert_ocl_finish). Build with 0 to make sync a plain clFinish, e.g. to measure what
   the marker costs on a driver. */
#ifndef CUBERT_OCL_SYNC_MARKER
#define CUBERT_OCL_SYNC_MARKER 1
#endif
/* Waits for the stream's queue, then releases every command: clFinish, or a marker waited on
   when commands without events could have failed unseen (queue.c), then a poll. */
cubert_status cubert_ocl_finish(cubert_server_stream *stream);
/* Makes the stream wait for `event` with a barrier, tracked like any command so that a failed
   event becomes an error of this stream. */
cubert_status cubert_ocl_wait_cl_event(cubert_server_stream *stream, cl_event event,
                                       const char *what);
cubert_status cubert_ocl_event_record(cubert_server *server, cubert_server_stream *stream,
                                      cubert_event **out);
cubert_status cubert_ocl_event_wait(cubert_server *server, cubert_server_stream *stream,
                                    cubert_event *event);
cubert_status cubert_ocl_event_sync(cubert_server *server, cubert_event *event);
int cubert_ocl_event_done(cubert_server *server, cubert_event *event);
void cubert_ocl_event_release(cubert_server *server, cubert_event *event);
cubert_status cubert_ocl_profile_begin(cubert_server *server, cubert_server_stream *stream,
                                       uint64_t token);
cubert_status cubert_ocl_profile_end(cubert_server *server, cubert_server_stream *stream,
                                     uint64_t token, cubert_profile_duration *out);

#endif /* CUBERT_OPENCL_QUEUE_H */

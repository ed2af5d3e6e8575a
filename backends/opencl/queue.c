/* cubert — OpenCL streams: one in-order command queue each, the commands in flight, events
   between streams, and profiling.

   Completion tracking (see README.md). Launch latency is a headline figure, and on NVIDIA an
   event costs 2 us (9 us on a profiling queue) and clGetEventInfo 1.5 us, against 11 us for a
   whole launch + clFinish. So the hot commands (launches, small writes) are enqueued without
   an event: they pin their slices into the stream's open batch, which is released after the
   next clFinish (sync), or handed to the next command that has an event anyway (it completes
   after them, in-order queue), or closed with a marker once it holds many pins. Events in
   flight form a FIFO that completes in order, so a poll stops at the first one still running.
   We poll rather than use clSetEventCallback: callbacks run on driver threads, which would
   release slices concurrently with the core's allocator and need a lock on the FIFO; polling
   keeps everything under the device lock.

   Asynchronous errors: a negative event status is pushed into the stream's error queue
   (server.h), as is an error returned by clFinish. A wait on another event (another stream's,
   a user event) puts that event, or on PoCL the wait's own barrier event, into the FIFO, so a
   failed dependency is always seen. A command without an
   event that fails by itself is seen through a later evented command enqueued before the
   failure (a batch marker, any command with an event: in an in-order queue it fails too), or
   through the marker that sync enqueues when such commands are left unobserved
   (cubert_ocl_finish), or through an error of the wait itself: PoCL's clFinish returns
   CL_SUCCESS even after a command failed. */
#include "opencl/queue.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cubert/config.h"
#include "opencl/errors.h"
#include "opencl/interop.h"
#include "opencl/launch.h"
#include "opencl/program.h"
#include "opencl/server.h"

/* A batch is closed with a marker past this many pins or host bytes, so that a stream that
   only flushes still releases memory. */
#define BATCH_MAX_PINS 256u
#define BATCH_MAX_HOST_BYTES (64u << 20)

/* ---- pins -------------------------------------------------------------------------------- */

static void pins_release(cubert_ocl_pins *p) {
  for (uint32_t i = 0; i < p->slice_count; ++i) cubert_slice_release(p->slices[i]);
  for (uint32_t i = 0; i < p->free_count; ++i) free(p->frees[i]);
  p->slice_count = p->free_count = 0;
  p->free_bytes = 0;
}

static void pins_free(cubert_ocl_pins *p) {
  pins_release(p);
  free(p->slices);
  free(p->frees);
  memset(p, 0, sizeof(*p));
}

/* Makes room for `slices` more slices and one more host copy; 0 when out of memory. */
static int pins_reserve(cubert_ocl_pins *p, uint32_t slices) {
  if (p->slice_count + slices > p->slice_capacity) {
    uint32_t cap = p->slice_capacity ? p->slice_capacity : 8;
    while (cap < p->slice_count + slices) cap *= 2;
    cubert_slice **grown = realloc(p->slices, cap * sizeof(*grown));
    if (!grown) return 0;
    p->slices = grown;
    p->slice_capacity = cap;
  }
  if (p->free_count == p->free_capacity) {
    uint32_t cap = p->free_capacity ? p->free_capacity * 2 : 4;
    void **grown = realloc(p->frees, cap * sizeof(*grown));
    if (!grown) return 0;
    p->frees = grown;
    p->free_capacity = cap;
  }
  return 1;
}

static int batch_empty(const cubert_server_stream *stream) {
  return stream->batch.slice_count == 0 && stream->batch.free_count == 0;
}

/* ---- the FIFO of events ------------------------------------------------------------------ */

/* Reports a finished command's status: errors go to the stream's queue. In an in-order queue
   every command depends on the one before it, so once a command failed the following failures
   (drivers mark them failed too, with -1 or CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) are
   consequences: only the first failure of a run of failures is reported, the cause. */
static void report_status(cubert_server_stream *stream, const char *what, int batch,
                          cl_int status) {
  if (status >= 0) {
    stream->failed_run = 0;
    return;
  }
  if (stream->failed_run) return;
  stream->failed_run = 1;
  cubert_stream_errors_push(
      stream->errors,
      cubert_ocl_exec_status(status, "%s%s on OpenCL device '%s' failed after it was queued",
                             what ? what : "a command",
                             batch ? " (or a command queued before it)" : "",
                             stream->server->base.properties.name));
}

static void pending_pop(cubert_server_stream *stream, cl_int status) {
  cubert_ocl_pending *e = &stream->pending[stream->head];
  report_status(stream, e->what, e->batch, status);
  if (e->fallible) stream->fallible_waits--;
  pins_free(&e->pins);
  if (e->event) clReleaseEvent(e->event);
  memset(e, 0, sizeof(*e));
  stream->head = (stream->head + 1) % stream->capacity;
  stream->count--;
}

static cl_int event_status(cl_event event) {
  cl_int status = CL_COMPLETE;
  cl_int err =
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
  return err != CL_SUCCESS ? err : status; /* an event we cannot query counts as failed */
}

void cubert_ocl_poll(cubert_server_stream *stream) {
  while (stream->count) {
    cl_int status = event_status(stream->pending[stream->head].event);
    if (status > CL_COMPLETE) break; /* queued, submitted or running */
    pending_pop(stream, status);
  }
}

static int pending_grow(cubert_server_stream *stream) {
  size_t cap = stream->capacity ? stream->capacity * 2 : 16;
  cubert_ocl_pending *grown = calloc(cap, sizeof(*grown));
  if (!grown) return 0;
  for (size_t i = 0; i < stream->count; ++i)
    grown[i] = stream->pending[(stream->head + i) % stream->capacity];
  free(stream->pending);
  stream->pending = grown;
  stream->head = 0;
  stream->capacity = cap;
  return 1;
}

/* Waits for everything on the stream and releases every pin: the fallback when memory to
   remember commands runs out, and the body of sync.

   Commands enqueued without an event since the last evented one (unobserved_what) are checked
   through a marker: in an in-order queue it completes after them, and PoCL fails it (-1) when
   one of them fails while the marker is queued, whereas its clFinish returns CL_SUCCESS after
   any failure. A failure that already happened before the marker was enqueued is not passed
   on to it (PoCL 3.1; README.md lists what is caught). Waiting on the marker replaces clFinish
   (its completion means every earlier command completed), and clWaitForEvents's result says
   whether it failed, so a successful sync costs one marker more than a plain clFinish and no
   status query (measured on PoCL, README.md). A stream whose last command has an event needs
   no marker: the FIFO sees that command. Nor does a stream whose queue was never handed to the
   caller (queue_shared): on PoCL only the caller's own commands fail without an event (cubert's
   waits, and the commands behind an unresolved one, carry events; a PoCL kernel does not fail
   by itself), and the marker cost 16-17 us per sync on a 16-core host's PoCL. */
cubert_status cubert_ocl_finish(cubert_server_stream *stream) {
  const char *unobserved = stream->unobserved_what;
  cl_event marker = NULL;
  cl_int err = CL_SUCCESS, marker_status = CL_COMPLETE;
  if (CUBERT_OCL_SYNC_MARKER && stream->server->sync_marker && stream->queue_shared && unobserved &&
      clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker) == CL_SUCCESS) {
    cubert_ocl_server *server = stream->server;
    if (server->sync_marker_hook) server->sync_marker_hook(server->sync_marker_user);
    cl_int wait = clWaitForEvents(1, &marker);
    if (wait != CL_SUCCESS) {
      cl_int status = event_status(marker);
      marker_status = status < 0 ? status : wait;
      /* A command that failed may complete before commands queued ahead of it finished
         running (drivers fail dependents at once): wait for all of them before any pin is
         released. */
      err = clFinish(stream->queue);
    }
    clReleaseEvent(marker);
  } else {
    err = clFinish(stream->queue);
  }
  stream->unobserved_what = NULL;
  while (stream->count) pending_pop(stream, event_status(stream->pending[stream->head].event));
  /* After the FIFO: an earlier evented command that failed is the cause, reported first. */
  if (marker) report_status(stream, unobserved, 1, marker_status);
  pins_release(&stream->batch);
  stream->batch_what = NULL;
  cubert_status violation = cubert_ocl_record_check(stream);
  if (violation) cubert_stream_errors_push(stream->errors, violation);
  if (err != CL_SUCCESS && !stream->failed_run) {
    stream->failed_run = 1;
    cubert_stream_errors_push(stream->errors,
                              cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                                                "clFinish on OpenCL device '%s' (a command "
                                                "queued before it failed)",
                                                stream->server->base.properties.name));
  }
  return NULL;
}

/* A zeroed entry at the FIFO's tail holding `event` (owned); NULL when out of memory. */
static cubert_ocl_pending *pending_append(cubert_server_stream *stream, cl_event event,
                                          const char *what) {
  if (stream->count == stream->capacity && !pending_grow(stream)) return NULL;
  cubert_ocl_pending *e = &stream->pending[(stream->head + stream->count) % stream->capacity];
  stream->count++;
  memset(e, 0, sizeof(*e));
  e->event = event;
  e->what = what;
  return e;
}

/* Appends `event` (owned) with the open batch's pins to the FIFO. `fallible`: a wait that
   counts in fallible_waits until it completed. 0 when out of memory. */
static int pending_push(cubert_server_stream *stream, cl_event event, const char *what, int batch,
                        int fallible) {
  cubert_ocl_pending *e = pending_append(stream, event, what);
  if (!e) return 0;
  e->batch = batch;
  e->fallible = fallible;
  if (fallible) stream->fallible_waits++;
  e->pins = stream->batch; /* the batch's arrays move to the entry */
  memset(&stream->batch, 0, sizeof(stream->batch));
  stream->batch_what = NULL;
  stream->unobserved_what = NULL; /* the event fails too if an earlier command failed */
  return 1;
}

/* Closes the open batch with a marker, so it is released once the marker completed. */
static void batch_close(cubert_server_stream *stream) {
  if (batch_empty(stream)) return;
  cl_event marker = NULL;
  const char *what = stream->batch_what;
  if (clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker) != CL_SUCCESS ||
      !pending_push(stream, marker, what, 1, 0)) {
    if (marker) clReleaseEvent(marker);
    cubert_ocl_finish(stream);
    return;
  }
  cubert_ocl_poll(stream);
}

/* Notes a command for the open profile regions: the first one inside each region, and the
   last one overall. */
static void profile_note(cubert_server_stream *stream, cl_event event) {
  for (size_t i = 0; i < stream->profile_count; ++i) {
    if (!stream->profiles[i].first) {
      clRetainEvent(event);
      stream->profiles[i].first = event;
    }
  }
  clRetainEvent(event);
  if (stream->last_event) clReleaseEvent(stream->last_event);
  stream->last_event = event;
}

static cubert_status track(cubert_server_stream *stream, cl_event event, const char *what,
                           const cubert_binding *bindings, uint32_t binding_count, void *host_free,
                           uint64_t host_bytes, int profiled, int fallible) {
  if (event && profiled && stream->profile_count) profile_note(stream, event);
  if (!event) stream->unobserved_what = what ? what : "a command";
  /* An event that takes over earlier commands' pins also reports their failures. */
  int carries = !batch_empty(stream);
  if (!pins_reserve(&stream->batch, binding_count)) {
    /* No memory to remember the command: wait for it (and all before it) instead. */
    if (event) clReleaseEvent(event);
    cubert_ocl_finish(stream);
    free(host_free);
    return NULL;
  }
  cubert_ocl_pins *p = &stream->batch;
  for (uint32_t i = 0; i < binding_count; ++i) {
    p->slices[p->slice_count++] = bindings[i].slice;
    cubert_slice_retain(bindings[i].slice);
  }
  if (host_free) {
    p->frees[p->free_count++] = host_free;
    p->free_bytes += host_bytes;
  }
  stream->batch_what = what;
  if (event) {
    if (!pending_push(stream, event, what, carries, fallible)) {
      clReleaseEvent(event);
      cubert_ocl_finish(stream);
      return NULL;
    }
    cubert_ocl_poll(stream);
  } else if (p->slice_count >= BATCH_MAX_PINS || p->free_bytes >= BATCH_MAX_HOST_BYTES ||
             p->free_count >= BATCH_MAX_PINS) {
    batch_close(stream);
  }
  return NULL;
}

cubert_status cubert_ocl_track(cubert_server_stream *stream, cl_event event, const char *what,
                               const cubert_binding *bindings, uint32_t binding_count,
                               void *host_free, uint64_t host_bytes, int profiled) {
  return track(stream, event, what, bindings, binding_count, host_free, host_bytes, profiled, 0);
}

/* ---- streams ----------------------------------------------------------------------------- */

cubert_status cubert_ocl_stream_create(cubert_server *base, cubert_stream_errors *errors,
                                       cubert_server_stream **out) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  *out = NULL;
  cubert_server_stream *stream = calloc(1, sizeof(*stream));
  if (!stream) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cl_int err = CL_SUCCESS;
  stream->plain_queue = clCreateCommandQueue(server->context, server->device, 0, &err);
  if (err != CL_SUCCESS || !stream->plain_queue) {
    free(stream);
    /* Drivers may cap the queues of a context (threads or rings per queue): say how many are
       open and which setting makes fewer. */
    size_t open = 0;
    for (const cubert_server_stream *s = server->streams; s; s = s->next) ++open;
    return cubert_ocl_status(err, CUBERT_CODE_GENERIC,
                             "clCreateCommandQueue on '%s' with %zu queues open (one per stream "
                             "slot in use, CUBERT_MAX_STREAMS=%u, and up to three per "
                             "communicator member): the driver refused one more; lower "
                             "CUBERT_MAX_STREAMS",
                             base->properties.name, open,
                             (unsigned)cubert_config_get()->max_streams);
  }
  stream->queue = stream->plain_queue;
  stream->server = server;
  stream->errors = errors;
  stream->next = server->streams;
  if (server->streams) server->streams->prev = stream;
  server->streams = stream;
  *out = stream;
  return NULL;
}

void cubert_ocl_stream_destroy(cubert_server *base, cubert_server_stream *stream) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (!stream) return;
  cubert_ocl_finish(stream);
  pins_free(&stream->batch);
  free(stream->pending);
  for (size_t i = 0; i < stream->profile_count; ++i)
    if (stream->profiles[i].first) clReleaseEvent(stream->profiles[i].first);
  free(stream->profiles);
  if (stream->last_event) clReleaseEvent(stream->last_event);
  if (stream->record) clReleaseMemObject(stream->record);
  if (stream->profiling_queue) {
    clFinish(stream->profiling_queue);
    clReleaseCommandQueue(stream->profiling_queue);
  }
  clFinish(stream->plain_queue);
  clReleaseCommandQueue(stream->plain_queue);
  if (stream->prev) stream->prev->next = stream->next;
  if (stream->next) stream->next->prev = stream->prev;
  if (server->streams == stream) server->streams = stream->next;
  free(stream);
}

cubert_status cubert_ocl_flush(cubert_server *base, cubert_server_stream *stream) {
  batch_close(stream);
  cubert_ocl_poll(stream);
  cl_int err = clFlush(stream->queue);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "clFlush on OpenCL device '%s'",
                             base->properties.name);
  return NULL;
}

cubert_status cubert_ocl_sync(cubert_server *base, cubert_server_stream *stream) {
  cubert_status s = cubert_ocl_finish(stream);
  /* The stream's launches completed, so the code they compiled is in their programs now. */
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  cubert_ocl_external_drain(server);
  if (server->refresh_pending) cubert_ocl_programs_refresh(server);
  return s;
}

/* ---- events ------------------------------------------------------------------------------ */

cubert_status cubert_ocl_event_record(cubert_server *base, cubert_server_stream *stream,
                                      cubert_event **out) {
  *out = NULL;
  cubert_event *handle = calloc(1, sizeof(*handle));
  if (!handle) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cl_int err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &handle->event);
  if (err == CL_SUCCESS) err = clFlush(stream->queue);
  if (err != CL_SUCCESS) {
    if (handle->event) clReleaseEvent(handle->event);
    free(handle);
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                             "clEnqueueMarkerWithWaitList on OpenCL device '%s'",
                             base->properties.name);
  }
  /* The marker is not tracked here: it would close the open batch (its commands complete
     before it), but releasing those pins would cost a status query of the completed marker at
     a later poll, 1.5 us on NVIDIA (tools/gpu/event_probe.c), on every cross-stream wait of a
     producer that never syncs; the stream that waits for the marker queries it already. The
     batch stays open until this stream's next sync, flush or evented command, or its size
     bound (BATCH_MAX_PINS). */
  cubert_ocl_poll(stream);
  *out = handle;
  return NULL;
}

/* Waits on `event` (the caller keeps its reference). A wait whose barrier has no event of its
   own (every driver but PoCL): the awaited event, retained, goes into the FIFO instead, so that its
   failure is this stream's failed dependency. It carries no pins and observes none of the stream's
   own commands (they may still run when it completes), so the open batch and unobserved_what stay
   as they are. The FIFO stays in completion order: everything queued after it runs behind the
   barrier. Against a barrier with an event, on NVIDIA: no new event (+0.1 us) and no status query
   of the barrier right after it was queued (+0.2 us; tools/gpu/event_probe.c). The status query of
   the completed awaited event at the next poll or sync (1.5 us) stays: it is how a failed
   dependency is seen. */
cubert_status cubert_ocl_wait_cl_event(cubert_server_stream *stream, cl_event event,
                                       const char *what) {
  if (!stream->server->events_behind_waits) {
    cl_int err = clEnqueueBarrierWithWaitList(stream->queue, 1, &event, NULL);
    if (err != CL_SUCCESS)
      return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "clEnqueueBarrierWithWaitList (%s)",
                               what);
    clRetainEvent(event);
    if (!pending_append(stream, event, what)) {
      clReleaseEvent(event);
      cubert_ocl_finish(stream); /* no memory to remember it: wait for it now */
    }
    return NULL;
  }
  cl_event barrier = NULL;
  cl_int err = clEnqueueBarrierWithWaitList(stream->queue, 1, &event, &barrier);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "clEnqueueBarrierWithWaitList (%s)", what);
  /* PoCL: the barrier with an event, since PoCL 3.1 aborts when an event without a handle
     fails through a user event. Commands behind it carry events until it completed
     (server->events_behind_waits): its failure would otherwise propagate through two commands
     without events, which aborts PoCL 3.1. The cost, an event per command while a wait is
     unresolved, is paid only there. */
  return track(stream, barrier, what, NULL, 0, NULL, 0, 0, stream->server->events_behind_waits);
}

cubert_status cubert_ocl_event_wait(cubert_server *base, cubert_server_stream *stream,
                                    cubert_event *event) {
  (void)base;
  return cubert_ocl_wait_cl_event(stream, event->event, "a wait for another stream");
}

cubert_status cubert_ocl_event_sync(cubert_server *base, cubert_event *event) {
  (void)base;
  cl_int err = clWaitForEvents(1, &event->event);
  if (err != CL_SUCCESS && err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    return cubert_ocl_status(err, CUBERT_CODE_EXECUTION, "clWaitForEvents");
  cl_int status = event_status(event->event);
  if (status < 0) return cubert_ocl_exec_status(status, "the awaited OpenCL command");
  return NULL;
}

int cubert_ocl_event_done(cubert_server *base, cubert_event *event) {
  (void)base;
  /* An error counts as done, so that the caller's event_sync surfaces it. */
  return event_status(event->event) <= CL_COMPLETE;
}

void cubert_ocl_event_release(cubert_server *base, cubert_event *event) {
  (void)base;
  if (!event) return;
  if (event->event) clReleaseEvent(event->event);
  free(event);
}

/* ---- profiling --------------------------------------------------------------------------- */

static cubert_ocl_profile *profile_find(cubert_server_stream *stream, uint64_t token) {
  for (size_t i = 0; i < stream->profile_count; ++i)
    if (stream->profiles[i].token == token) return &stream->profiles[i];
  return NULL;
}

cubert_status cubert_ocl_profile_begin(cubert_server *base, cubert_server_stream *stream,
                                       uint64_t token) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  if (profile_find(stream, token))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "profile token %llu is already open on this stream",
                              (unsigned long long)token);
  if (stream->profile_count == stream->profile_capacity) {
    size_t cap = stream->profile_capacity ? stream->profile_capacity * 2 : 4;
    cubert_ocl_profile *grown = realloc(stream->profiles, cap * sizeof(*grown));
    if (!grown) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    stream->profiles = grown;
    stream->profile_capacity = cap;
  }
  if (server->profiling && stream->queue != stream->profiling_queue) {
    /* Switch to the profiling queue; finishing the plain one first keeps the stream in order
       (the core syncs the stream before a profile starts, so this is cheap). */
    if (!stream->profiling_queue) {
      cl_int err = CL_SUCCESS;
      stream->profiling_queue =
          clCreateCommandQueue(server->context, server->device, CL_QUEUE_PROFILING_ENABLE, &err);
      if (err != CL_SUCCESS || !stream->profiling_queue) {
        stream->profiling_queue = NULL;
        return cubert_ocl_status(err, CUBERT_CODE_PROFILE_FAILED,
                                 "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE) on '%s'",
                                 base->properties.name);
      }
    }
    cubert_ocl_finish(stream);
    stream->queue = stream->profiling_queue;
  }
  cubert_ocl_profile *p = &stream->profiles[stream->profile_count++];
  memset(p, 0, sizeof(*p));
  p->token = token;
  /* Host timing starts once earlier work is done, so it measures only the region. */
  if (!server->profiling) cubert_ocl_finish(stream);
  p->begin_ns = cubert_now_ns();
  return NULL;
}

static cubert_status event_time(cl_event event, cl_profiling_info what, cl_ulong *out) {
  cl_int err = clGetEventProfilingInfo(event, what, sizeof(*out), out, NULL);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_PROFILE_FAILED, "clGetEventProfilingInfo(%s)",
                             what == CL_PROFILING_COMMAND_START ? "CL_PROFILING_COMMAND_START"
                                                                : "CL_PROFILING_COMMAND_END");
  return NULL;
}

cubert_status cubert_ocl_profile_end(cubert_server *base, cubert_server_stream *stream,
                                     uint64_t token, cubert_profile_duration *out) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  *out = (cubert_profile_duration){.method = server->profiling ? CUBERT_TIMING_DEVICE
                                                               : CUBERT_TIMING_SYSTEM};
  cubert_ocl_profile *p = profile_find(stream, token);
  if (!p)
    return cubert_status_make(CUBERT_CODE_NOT_REGISTERED,
                              "profile token %llu was never started on this stream or already "
                              "ended",
                              (unsigned long long)token);
  cubert_ocl_finish(stream);
  cubert_status status = NULL;
  if (!server->profiling) {
    out->start_ticks = p->begin_ns;
    out->end_ticks = cubert_now_ns();
  } else if (p->first && stream->last_event) {
    /* END of the last command minus START of the first: the device time of the region, gaps
       between commands included. */
    cl_ulong start = 0, end = 0;
    status = event_time(p->first, CL_PROFILING_COMMAND_START, &start);
    if (!status) status = event_time(stream->last_event, CL_PROFILING_COMMAND_END, &end);
    if (!status) {
      out->start_ticks = start;
      out->end_ticks = end > start ? end : start;
    }
  }
  out->duration_ns = out->end_ticks - out->start_ticks;
  if (p->first) clReleaseEvent(p->first);
  *p = stream->profiles[--stream->profile_count];
  if (stream->profile_count == 0) {
    if (stream->last_event) clReleaseEvent(stream->last_event);
    stream->last_event = NULL;
    stream->queue = stream->plain_queue; /* the profiling queue was just finished */
  }
  return status;
}

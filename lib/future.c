/* cubert — asynchronous reads and syncs. A future owns the device events of its reads (one per
   handle); it is complete when every one of them is, i.e. when every destination holds its data.
   Backends without asynchronous reads (read_async NULL) read synchronously and complete the
   future at once.

   The reads of one future go to the calling stream in order, each after the cross-stream
   ordering its handle needs (stream/resolve.c), like any other command of the stream. A
   failure while queueing the k-th read leaves reads 0..k-1 in flight: the call waits for them
   before it returns the error, so no destination is written after the caller got it back.

   What a future holds until its reads completed, and gives back at that point (in
   cubert_future_wait, which release calls): the scratch handles its reads copy out of
   (strided reads, tensor_read_async.c) and one use of each pinned block a destination lies in
   (pinned_host.c), so that a block released meanwhile is freed only after the DMA into it. */
#include "future.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_scope.h"
#include "cubert/config.h"
#include "cubert/server/transfers.h"
#include "device.h"
#include "dry_run.h"
#include "handle.h"
#include "pinned_host.h"
#include "profile_log.h"
#include "stream/resolve.h"
#include "stream/slots.h"
#include "tune/scratch.h"

struct cubert_future {
  cubert_device *device; /* retained */
  cubert_event **events; /* [event_count]; NULL entries were waited for already */
  size_t event_count;
  cubert_stream_slot *slot;
  cubert_stream_id stream; /* whose errors the reads report */
  cubert_status result;
  int done;
  cubert_pinned_block **uses; /* [event_count]: the block each destination lies in, or NULL */
  cubert_handle **keep;       /* scratch handles released at completion */
  size_t keep_count;
  int sync; /* a cubert_client_sync_async future: its wait also logs the profile summary */
};

/* Gives back what the reads needed until they completed (their events were waited for). */
static void future_finish(cubert_future *f) {
  for (size_t i = 0; i < f->event_count; ++i) {
    cubert_pinned_host_unuse(f->uses[i]);
    f->uses[i] = NULL;
  }
  for (size_t i = 0; i < f->keep_count; ++i) cubert_handle_release(f->keep[i]);
  f->keep_count = 0;
}

/* Waits for and releases the events of `f` (device lock NOT held); returns the first error. */
static cubert_status events_wait(cubert_future *f) {
  cubert_server *server = f->device->server;
  cubert_status first = NULL;
  for (size_t i = 0; i < f->event_count; ++i) {
    if (!f->events[i]) continue;
    cubert_status s = server->vtable->event_sync(server, f->events[i]);
    if (s && !first)
      first = s;
    else
      cubert_status_free(s);
  }
  cubert_device_lock(f->device);
  for (size_t i = 0; i < f->event_count; ++i) {
    if (f->events[i]) server->vtable->event_release(server, f->events[i]);
    f->events[i] = NULL;
  }
  cubert_device_unlock(f->device);
  return first;
}

/* Checks the arguments of read k (named in errors as handles[k], sizes[k], dsts[k], or as
   `handle`, `size`, `dst` for the single read) and returns its binding. The caller holds `h`. */
static cubert_status read_binding(const cubert_handle_obj *h, const cubert_future_read *r, size_t k,
                                  int many, cubert_binding *out) {
  if (!r->dst && r->size)
    return many ? cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                     "dsts[%zu] is NULL but sizes[%zu] is %zu bytes", k, k, r->size)
                : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  if (r->offset > h->size || r->size > h->size - r->offset)
    return many ? cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                     "sizes[%zu] is %zu bytes, past the end of handles[%zu] (%llu "
                                     "bytes)",
                                     k, r->size, k, (unsigned long long)h->size)
                : cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                     "read of %zu bytes at offset %llu goes past the end of the "
                                     "handle (%llu bytes)",
                                     r->size, (unsigned long long)r->offset,
                                     (unsigned long long)h->size);
  *out = cubert_handle_binding(h);
  cubert_tune_scratch_apply(out); /* a candidate autotune measures reads its scratch copy */
  out->offset += r->offset;
  out->size = r->size;
  return NULL;
}

/* Queues the reads on the calling stream (the call's scope locked by the caller). */
static cubert_status queue_reads(cubert_client *client, const cubert_call *call, size_t count,
                                 const cubert_future_read *reads, cubert_handle_obj *const *objs,
                                 int many, cubert_future *f) {
  cubert_device *device = call->device;
  cubert_server *server = call->server;
  uint32_t index = call->index;
  f->slot = call->slot;
  f->stream = f->slot->owner;
  cubert_status s = NULL;
  cubert_binding *bindings = calloc(count ? count : 1, sizeof(*bindings));
  if (!bindings) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  for (size_t k = 0; k < count && !s; ++k)
    s = read_binding(objs[k], &reads[k], k, many, &bindings[k]);
  if (!s && cubert_dry_run_on(call->obj)) {
    /* Dry run: zeros, as cubert_client_read_range gives then; nothing to wait for. */
    for (size_t k = 0; k < count; ++k)
      if (reads[k].size) memset(reads[k].dst, 0, reads[k].size);
    f->done = 1;
  } else if (!s && !server->transfers) {
    /* The lock is recursive, so the synchronous reads can run under it. */
    for (size_t k = 0; k < count && !f->result; ++k)
      f->result = cubert_client_read_range(client, reads[k].handle, reads[k].offset, reads[k].dst,
                                           reads[k].size);
    f->done = 1;
  }
  for (size_t k = 0; k < count && !s && !f->done; ++k) {
    s = cubert_slot_resolve(device, index, &bindings[k], 1);
    if (!s)
      s = server->transfers->read_async(server, f->slot->stream, &bindings[k], reads[k].dst,
                                        reads[k].size, &f->events[k]);
    if (!s) {
      cubert_slot_mark_used(device, index, &bindings[k], 1);
      f->uses[k] = cubert_pinned_host_use(reads[k].dst, reads[k].size);
    }
  }
  free(bindings);
  return s;
}

/* Frees a future whose reads completed (NULL: nothing). */
static void future_free(cubert_future *f) {
  if (!f) return;
  free(f->events);
  free(f->uses);
  free(f->keep);
  free(f);
}

cubert_status cubert_future_start(cubert_client *client, size_t count,
                                  const cubert_future_read *reads, int many, cubert_handle **keep,
                                  size_t keep_count, cubert_future **out) {
  size_t n = count ? count : 1;
  cubert_future *f = calloc(1, sizeof(*f));
  cubert_handle_obj **objs = calloc(n, sizeof(*objs));
  if (f) {
    f->events = calloc(n, sizeof(*f->events));
    f->uses = calloc(n, sizeof(*f->uses));
    f->keep = keep;
    f->keep_count = keep_count;
  } else {
    for (size_t i = 0; i < keep_count; ++i) cubert_handle_release(keep[i]);
    free(keep);
  }
  cubert_status s = NULL;
  if (!out)
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  else
    *out = NULL;
  if (!s && (!f || !objs || !f->events || !f->uses))
    s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cubert_call call = {0};
  if (!s) s = cubert_call_open(client, &call);
  size_t held = 0;
  for (; !s && held < count; ++held) {
    char what[48];
    snprintf(what, sizeof(what), many ? "handles[%zu]" : "handle", held);
    s = cubert_handle_check(call.obj, reads[held].handle, what, &objs[held]);
    if (s) break;
  }
  if (!s) {
    f->device = call.device;
    f->event_count = count;
    s = cubert_call_lock(&call);
    if (!s) s = queue_reads(client, &call, count, reads, objs, many, f);
    cubert_call_unlock(&call);
    /* Reads queued before a failure still write their destinations: wait for them. */
    if (s) cubert_status_free(events_wait(f));
  }
  for (size_t k = 0; k < held; ++k) cubert_handle_release(reads[k].handle);
  free(objs);
  if (!s) cubert_device_retain(f->device);
  cubert_call_leave(&call, NULL);
  if (f && (s || f->done)) future_finish(f);
  if (s) {
    future_free(f);
    return s;
  }
  *out = f;
  return NULL;
}

/* The public forms with parallel arrays. */
static cubert_status read_many(cubert_client *client, size_t count, cubert_handle *const *handles,
                               void *const *dsts, const size_t *sizes, int many,
                               cubert_future **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (count && (!handles || !dsts || !sizes))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "handles, dsts and sizes must be non-NULL for count %zu", count);
  cubert_future_read *reads = calloc(count ? count : 1, sizeof(*reads));
  if (!reads) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  for (size_t k = 0; k < count; ++k)
    reads[k] = (cubert_future_read){handles[k], 0, dsts[k], sizes[k]};
  cubert_status s = cubert_future_start(client, count, reads, many, NULL, 0, out);
  free(reads);
  return s;
}

cubert_status cubert_client_read_async(cubert_client *client, cubert_handle *handle, void *dst,
                                       size_t size, cubert_future **out) {
  cubert_handle *const handles[1] = {handle};
  void *const dsts[1] = {dst};
  const size_t sizes[1] = {size};
  return read_many(client, 1, handles, dsts, sizes, 0, out);
}

cubert_status cubert_client_read_range_async(cubert_client *client, cubert_handle *handle,
                                             uint64_t offset, void *dst, size_t size,
                                             cubert_future **out) {
  const cubert_future_read read = {handle, offset, dst, size};
  return cubert_future_start(client, 1, &read, 0, NULL, 0, out);
}

cubert_status cubert_client_read_many_async(cubert_client *client, size_t count,
                                            cubert_handle *const *handles, void *const *dsts,
                                            const size_t *sizes, cubert_future **out) {
  return read_many(client, count, handles, dsts, sizes, 1, out);
}

/* The sync future: one event recorded at the stream's current end (a flush). Nothing to check
   but the client and `out`; the stream's asynchronous errors come from the wait, as from
   cubert_client_sync. */
cubert_status cubert_client_sync_async(cubert_client *client, cubert_future **out) {
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  cubert_future *f = calloc(1, sizeof(*f));
  if (f) {
    f->events = calloc(1, sizeof(*f->events));
    f->uses = calloc(1, sizeof(*f->uses));
  }
  if (!f || !f->events || !f->uses) {
    future_free(f);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  cubert_call call;
  cubert_status s = cubert_call_enter(client, &call);
  if (s) {
    future_free(f);
    return s;
  }
  f->device = call.device;
  f->slot = call.slot;
  f->stream = call.slot->owner;
  f->sync = 1;
  f->event_count = 1;
  s = call.server->vtable->event_record(call.server, call.slot->stream, &f->events[0]);
  if (!s) cubert_device_retain(f->device);
  s = cubert_call_leave(&call, s);
  if (s) {
    future_free(f);
    return s;
  }
  *out = f;
  return NULL;
}

cubert_status cubert_future_wait(cubert_future *f) {
  if (!f) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "future is NULL");
  if (!f->done) {
    cubert_status s = events_wait(f);
    cubert_device_lock(f->device);
    cubert_status errors = cubert_stream_take_errors(f->device, f->stream, f->slot);
    if (f->sync && cubert_config_get()->profile_level >= CUBERT_PROFILE_BASIC)
      cubert_profile_log_summary(f->device);
    cubert_device_unlock(f->device);
    if (errors) {
      cubert_status_free(s);
      s = errors;
    }
    f->result = s;
    f->done = 1;
    future_finish(f);
  }
  cubert_status result = f->result;
  f->result = NULL;
  return result;
}

cubert_status cubert_future_poll(cubert_future *f, int *out_ready) {
  if (!f || !out_ready)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "future and out_ready must be non-NULL");
  if (f->done) {
    *out_ready = 1;
    return NULL;
  }
  cubert_server *server = f->device->server;
  /* Reads of one stream complete in order: the last one decides (checked first, so that a
     future whose reads are all done answers with one query), then the others for backends
     whose events are not ordered. */
  int ready = 1;
  for (size_t i = f->event_count; i-- > 0 && ready;)
    if (f->events[i] && !server->vtable->event_done(server, f->events[i])) ready = 0;
  *out_ready = ready;
  return NULL;
}

void cubert_future_release(cubert_future *f) {
  if (!f) return;
  cubert_status_free(cubert_future_wait(f));
  cubert_device_release(f->device);
  future_free(f);
}

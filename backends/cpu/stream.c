/* cubert CPU server — streams: creation, launches, reads, writes, flush and sync.

   A launch is asynchronous: it copies the description into a record (bindings retained until
   the launch finished), queues it, and starts it at once when the stream is idle. Reads and
   writes wait for the stream's earlier work and copy on the calling thread: the memory is host
   memory, so a staged asynchronous copy would only add a copy. An asynchronous read is a
   record of its own: it returns at once, and the thread that completes the stream's previous
   command (a worker, usually) copies the bytes when the read reaches the head of the queue;
   its event is the stream's command count after it. */
#include "cpu/stream.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cpu/events.h"
#include "cpu/scheduler.h"
#include "cpu/server.h"
#include "cubert/config.h"

/* Commands a stream may have queued before a launch waits for some to finish. Without a bound, a
   loop of launches that never syncs would grow the queue (and its records) without limit. */
#define CUBERT_CPU_MAX_QUEUED 65536u

cubert_status cubert_cpu_stream_create(cubert_server *server, cubert_stream_errors *errors,
                                       cubert_server_stream **out) {
  *out = NULL;
  cubert_cpu_device *d = cubert_cpu_device_of(server);
  cubert_server_stream *s = cubert_cpu_alloc_lines(sizeof *s);
  if (!s)
    return cubert_status_set_size(
        cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation of a %zu-byte stream failed",
                           sizeof *s),
        sizeof *s);
  memset(s, 0, sizeof *s);
  s->device = d;
  s->errors = errors;
  atomic_init(&s->refs, 1);
  atomic_init(&s->submitted, 0);
  atomic_init(&s->completed, 0);
  atomic_init(&s->blocked_waiters, 0);

  pthread_mutex_lock(&d->registry_lock);
  uint32_t slot = 0;
  while (slot < CUBERT_CPU_MAX_STREAMS && d->streams[slot]) ++slot;
  if (slot == CUBERT_CPU_MAX_STREAMS) {
    pthread_mutex_unlock(&d->registry_lock);
    free(s);
    return cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                           "the CPU server has %u streams open, its maximum: one per stream slot "
                           "in use (CUBERT_MAX_STREAMS, now %u, at most %u) and up to three "
                           "per communicator member on this device; release communicators or "
                           "lower CUBERT_MAX_STREAMS",
                           (unsigned)CUBERT_CPU_MAX_STREAMS,
                           (unsigned)cubert_config_get()->max_streams,
                           (unsigned)CUBERT_MAX_STREAMS_LIMIT),
        CUBERT_CPU_MAX_STREAMS + 1u, CUBERT_CPU_MAX_STREAMS);
  }
  s->slot = slot;
  d->streams[slot] = s;
  if (slot + 1 > d->stream_high) d->stream_high = slot + 1;
  if (slot / 64 + 1 > atomic_load(&d->mask_words)) atomic_store(&d->mask_words, slot / 64 + 1);
  pthread_mutex_unlock(&d->registry_lock);
  *out = s;
  return NULL;
}

void cubert_cpu_stream_destroy(cubert_server *server, cubert_server_stream *s) {
  if (!s) return;
  cubert_cpu_device *d = cubert_cpu_device_of(server);
  cubert_cpu_wait(d, s, atomic_load(&s->submitted));
  pthread_mutex_lock(&d->registry_lock);
  d->streams[s->slot] = NULL;
  pthread_mutex_unlock(&d->registry_lock);
  cubert_cpu_stream_drop_spares(s);
  /* Take the lock once: the completer of the last command stores the counter under the lock,
     and its release of the lock is its last touch of the stream. */
  cubert_cpu_lock_acquire(&s->lock);
  cubert_cpu_lock_release(&s->lock);
  cubert_cpu_stream_unref(s);
}

cubert_status cubert_cpu_launch(cubert_server *server, cubert_server_stream *s,
                                const cubert_launch *launch) {
  cubert_cpu_device *d = cubert_cpu_device_of(server);
  const cubert_kernel_def *kernel = launch->kernel;
  /* The core validated the launch (lib/launch.c: a CPU implementation, the arrays, the units
     per cube within the device's limit), as server.h's launch contract says. */
  uint64_t units_per_cube = (uint64_t)launch->cube_dim.x * launch->cube_dim.y * launch->cube_dim.z;

  /* Bound the queue: wait (helping) until half of the allowance finished. The completion
     counter is written by workers at every completion, so it is read only when a stale copy
     says the bound may be reached. */
  uint64_t submitted = atomic_load_explicit(&s->submitted, memory_order_relaxed);
  if (submitted - s->completed_seen >= CUBERT_CPU_MAX_QUEUED) {
    s->completed_seen = atomic_load(&s->completed);
    if (submitted - s->completed_seen >= CUBERT_CPU_MAX_QUEUED) {
      cubert_cpu_wait(d, s, submitted - CUBERT_CPU_MAX_QUEUED / 2);
      s->completed_seen = atomic_load(&s->completed);
    }
  }

  cubert_cpu_job *job = cubert_cpu_job_obtain(s, launch->binding_count, launch->info_count);
  if (!job)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a launch record for kernel \"%s\" (%u bindings, "
                              "%u info words) failed",
                              kernel->name ? kernel->name : "(unnamed)", launch->binding_count,
                              launch->info_count);
  job->kind = CUBERT_CPU_JOB_LAUNCH;
  job->kernel = kernel;
  memcpy(job->cube_count, launch->cube_count, sizeof job->cube_count);
  job->cube_dim[0] = launch->cube_dim.x;
  job->cube_dim[1] = launch->cube_dim.y;
  job->cube_dim[2] = launch->cube_dim.z;
  job->units_per_cube = units_per_cube;
  job->dynamic_bytes = launch->dynamic_shared_bytes;
  job->dynamic_offset = 0;
  job->shared_bytes = kernel->shared_bytes;
  if (job->dynamic_bytes) {
    job->dynamic_offset = (kernel->shared_bytes + CUBERT_DYNAMIC_SHARED_ALIGN - 1) &
                          ~(uint64_t)(CUBERT_DYNAMIC_SHARED_ALIGN - 1);
    job->shared_bytes = job->dynamic_offset + job->dynamic_bytes;
  }
  job->cube_mode =
      (kernel->flags & (CUBERT_KERNEL_SYNC_CUBE | CUBERT_KERNEL_PHASED)) || job->shared_bytes > 0;
  job->mode = (uint32_t)launch->mode;
  job->shuffle = launch->mode == CUBERT_EXECUTION_VALIDATE && cubert_config_get()->validate_shuffle;
  for (uint32_t i = 0; i < launch->binding_count; ++i) {
    const cubert_binding *b = &launch->bindings[i];
    job->bindings[i] = *b;
    job->buffers[i] = cubert_binding_host_ptr(b);
    job->buffer_bytes[i] = b->size;
    cubert_slice_retain(b->slice);
  }
  if (launch->info_count) memcpy(job->info, launch->info, launch->info_count * sizeof(uint64_t));
  if (launch->dynamic_count) {
    job->has_dynamic_count = 1;
    job->dynamic_count = *launch->dynamic_count;
    cubert_slice_retain(job->dynamic_count.slice);
  }
  cubert_cpu_stream_submit(s, job);
  return NULL;
}

static cubert_status check_copy(const cubert_binding *b, uint64_t size, const char *what) {
  if (size > b->size)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s of %llu bytes is larger than the binding (%llu bytes)", what,
                              (unsigned long long)size, (unsigned long long)b->size);
  if (size && !cubert_binding_host_ptr(b))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "%s: the binding's page has no host memory", what);
  return NULL;
}

cubert_status cubert_cpu_read(cubert_server *server, cubert_server_stream *s,
                              const cubert_binding *src, void *dst, uint64_t size) {
  CUBERT_RETURN_IF_ERROR(check_copy(src, size, "read"));
  cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
  if (size) memcpy(dst, cubert_binding_host_ptr(src), size);
  return NULL;
}

cubert_status cubert_cpu_read_async(cubert_server *server, cubert_server_stream *s,
                                    const cubert_binding *src, void *dst, uint64_t size,
                                    cubert_event **out_event) {
  *out_event = NULL;
  CUBERT_RETURN_IF_ERROR(check_copy(src, size, "read"));
  cubert_cpu_job *job = cubert_cpu_job_obtain(s, 1, 0);
  if (!job)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a read record (%llu bytes) failed",
                              (unsigned long long)size);
  job->kind = CUBERT_CPU_JOB_READ;
  job->bindings[0] = (cubert_binding){src->slice, src->offset, size};
  job->buffers[0] = size ? cubert_binding_host_ptr(src) : NULL;
  job->buffer_bytes[0] = size;
  job->read_dst = dst;
  cubert_slice_retain(src->slice);
  cubert_cpu_stream_submit(s, job);
  /* Recorded after the submit, so the event's target counts the read's record. */
  cubert_event *event = NULL;
  cubert_status st = cubert_cpu_event_record(server, s, &event);
  if (st) {
    /* The read is queued and runs anyway: finish it before `dst` goes back to the caller. */
    cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
    return st;
  }
  *out_event = event;
  return NULL;
}

cubert_status cubert_cpu_write(cubert_server *server, cubert_server_stream *s,
                               const cubert_binding *dst, const void *src, uint64_t size) {
  CUBERT_RETURN_IF_ERROR(check_copy(dst, size, "write"));
  cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
  if (size) memcpy(cubert_binding_host_ptr(dst), src, size);
  cubert_cpu_undefined_remove(&cubert_cpu_device_of(server)->undefined,
                              (uintptr_t)cubert_binding_host_ptr(dst), size);
  return NULL;
}

/* The memory is host memory: the write itself is a memcpy, done at once (after the stream's
   earlier work), and the event completes with it. */
cubert_status cubert_cpu_write_async(cubert_server *server, cubert_server_stream *s,
                                     const cubert_binding *dst, const void *src, uint64_t size,
                                     cubert_event **out_event) {
  *out_event = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_cpu_write(server, s, dst, src, size));
  return cubert_cpu_event_record(server, s, out_event);
}

cubert_status cubert_cpu_copy(cubert_server *server, cubert_server_stream *s,
                              const cubert_binding *src, const cubert_binding *dst) {
  (void)server;
  CUBERT_RETURN_IF_ERROR(check_copy(src, src->size, "copy source"));
  CUBERT_RETURN_IF_ERROR(check_copy(dst, src->size, "copy destination"));
  cubert_cpu_job *job = cubert_cpu_job_obtain(s, 2, 0);
  if (!job)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation of a copy record (%llu bytes) failed",
                              (unsigned long long)src->size);
  job->kind = CUBERT_CPU_JOB_COPY;
  const cubert_binding *b[2] = {src, dst};
  for (int i = 0; i < 2; ++i) {
    job->bindings[i] = (cubert_binding){b[i]->slice, b[i]->offset, src->size};
    job->buffers[i] = src->size ? cubert_binding_host_ptr(b[i]) : NULL;
    job->buffer_bytes[i] = src->size;
    cubert_slice_retain(b[i]->slice);
  }
  cubert_cpu_stream_submit(s, job);
  return NULL;
}

cubert_status cubert_cpu_flush(cubert_server *server, cubert_server_stream *s) {
  (void)server;
  /* Work is published when queued; nothing is held back. A caller polling flush for the result
     of its work may share a core with the worker that runs it (a busy machine): give it the
     core rather than spin it away. */
  if (atomic_load(&s->completed) < atomic_load(&s->submitted)) sched_yield();
  return NULL;
}

cubert_status cubert_cpu_sync(cubert_server *server, cubert_server_stream *s) {
  cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
  return NULL;
}

/* cubert — large host transfers through pinned memory.

   Drivers copy pageable memory through their own small pinned buffer, one piece at a time:
   on an NVIDIA H200, a 256 MiB clEnqueueWriteBuffer from malloc'd memory moves ~7 GB/s while
   the link moves 55 GB/s from pinned memory. So a large transfer on a device with its own
   memory (internal.h: CUBERT_OCL_STAGING_MIN_WRITE/READ) is cut into chunks that pass through a
   pinned buffer (CL_MEM_ALLOC_HOST_PTR, mapped once per server): the host copies chunk i+1 into a
   free slot while the DMA of chunk i runs. One thread copies at ~10 GB/s on such hosts, which would
   cap the pipeline there, so each chunk's host copy is shared by a team of threads (half the
   CPUs, at most 16: writes of 256 MiB at 43-46 GB/s on a 32-CPU H200 host, 29-35 with 8).

   Slots: each slot remembers the event of the last transfer that used it and is reused only
   after that event completed. All of this runs under the device lock; the copy threads only
   copy bytes. On host-unified devices (PoCL, integrated GPUs) none of this is used: the
   driver's write is already a memcpy. */
#include "opencl/staging.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "base/thread_team.h"
#include "opencl/errors.h"
#include "opencl/queue.h"
#include "opencl/server.h"

#ifndef STAGING_SLOT_BYTES
#define STAGING_SLOT_BYTES (8u << 20) /* per slot; CUBERT_OCL_STAGING_SLOTS slots */
#endif
#ifndef STAGING_MIN_CHUNK
/* Below this, per-command cost and thread wake-ups outweigh the overlap (measured: 256 KiB
   chunks lost to the driver's pageable path up to 8 MiB, 1 MiB chunks won from 2 MiB reads). */
#define STAGING_MIN_CHUNK (1u << 20)
#endif
#ifndef STAGING_MAX_THREADS
/* Copying threads, the caller included. 16: on the two-H200 host (32 CPUs) a 256 MiB write from
   pageable memory moved 43-46 GB/s with 16 threads against 29-35 with 8 (bench_to_client
   --copy-threads, one run, 2026-11-27). */
#define STAGING_MAX_THREADS 16
#endif
/* Copies below this size are not worth waking threads for (a wake-up costs ~10 us). */
#define PARALLEL_COPY_MIN (1u << 20)

/* ---- the copy threads -------------------------------------------------------------------- */

/* Half the CPUs this process may run on (the other half keeps the driver's threads and the
   rest of the program going), within [2, STAGING_MAX_THREADS] copying threads: even on a
   small host, two copies in flight beat one (and the team is always exercised). */
static size_t copy_thread_count(void) {
  size_t n = cubert_thread_team_cpus() / 2;
  if (n < 2) n = 2;
  if (n > STAGING_MAX_THREADS) n = STAGING_MAX_THREADS;
  return n;
}

typedef struct copy_job {
  char *dst;
  const char *src;
  size_t size;
} copy_job;

/* Member `index` of `count` copies its whole pages' share. */
static void copy_part(void *arg, size_t index, size_t count) {
  const copy_job *job = arg;
  size_t part = ((job->size + count - 1) / count + 4095) & ~(size_t)4095;
  size_t begin = index * part;
  if (begin >= job->size) return;
  size_t n = job->size - begin < part ? job->size - begin : part;
  memcpy(job->dst + begin, job->src + begin, n);
}

static void parallel_copy(cubert_thread_team *team, void *dst, const void *src, size_t size) {
  if (cubert_thread_team_size(team) < 2 || size < PARALLEL_COPY_MIN) {
    memcpy(dst, src, size);
    return;
  }
  copy_job job = {dst, src, size};
  cubert_thread_team_run(team, copy_part, &job);
}

/* ---- the pinned buffer ------------------------------------------------------------------- */

static cubert_status staging_ensure(cubert_ocl_server *server) {
  cubert_ocl_staging *st = &server->staging;
  if (st->host) return NULL;
  size_t total = (size_t)STAGING_SLOT_BYTES * CUBERT_OCL_STAGING_SLOTS;
  cl_int err = CL_SUCCESS;
  st->map_queue = clCreateCommandQueue(server->context, server->device, 0, &err);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                             "clCreateCommandQueue for the staging buffer");
  st->buffer =
      clCreateBuffer(server->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, total, NULL, &err);
  if (err == CL_SUCCESS)
    st->host = clEnqueueMapBuffer(st->map_queue, st->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                  total, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS || !st->host) {
    cubert_status s = cubert_status_set_size(
        cubert_ocl_status(err, CUBERT_CODE_OUT_OF_MEMORY,
                          "pinned staging buffer of %zu bytes (CL_MEM_ALLOC_HOST_PTR)", total),
        total);
    cubert_ocl_staging_release(server);
    return s;
  }
  st->slot_bytes = STAGING_SLOT_BYTES;
  st->pool = cubert_thread_team_create(st->copy_threads ? st->copy_threads : copy_thread_count());
  /* NULL: inline copies */
  return NULL;
}

void cubert_ocl_staging_release(cubert_ocl_server *server) {
  cubert_ocl_staging *st = &server->staging;
  for (int i = 0; i < CUBERT_OCL_STAGING_SLOTS; ++i) {
    if (st->events[i]) {
      clWaitForEvents(1, &st->events[i]);
      clReleaseEvent(st->events[i]);
      st->events[i] = NULL;
    }
  }
  if (st->host) {
    cl_event unmap = NULL;
    if (clEnqueueUnmapMemObject(st->map_queue, st->buffer, st->host, 0, NULL, &unmap) ==
        CL_SUCCESS) {
      clWaitForEvents(1, &unmap);
      clReleaseEvent(unmap);
    }
    st->host = NULL;
  }
  if (st->buffer) clReleaseMemObject(st->buffer);
  if (st->map_queue) clReleaseCommandQueue(st->map_queue);
  cubert_thread_team_destroy(st->pool);
  st->pool = NULL;
  st->buffer = NULL;
  st->map_queue = NULL;
}

void cubert_ocl_server_set_copy_threads(cubert_server *base, size_t threads) {
  cubert_ocl_staging *st = &cubert_ocl_server_of(base)->staging;
  st->copy_threads = threads;
  if (!st->host) return; /* staging_ensure makes the team */
  cubert_thread_team_destroy(st->pool);
  st->pool = cubert_thread_team_create(threads ? threads : copy_thread_count());
}

/* Waits until the slot's last transfer finished, so its host memory may be reused. */
static void slot_wait(cubert_ocl_staging *st, uint32_t slot) {
  if (!st->events[slot]) return;
  clWaitForEvents(1, &st->events[slot]);
  clReleaseEvent(st->events[slot]);
  st->events[slot] = NULL;
}

static char *slot_host(const cubert_ocl_staging *st, uint32_t slot) {
  return st->host + (size_t)slot * st->slot_bytes;
}

/* Chunks of about a quarter of the transfer (so a small one still overlaps copy and DMA),
   within [STAGING_MIN_CHUNK, slot size]. */
static size_t chunk_bytes(const cubert_ocl_staging *st, uint64_t size) {
  uint64_t chunk = (size / 4 + 4095) & ~(uint64_t)4095;
  if (chunk < STAGING_MIN_CHUNK) chunk = STAGING_MIN_CHUNK;
  if (chunk > st->slot_bytes) chunk = st->slot_bytes;
  return (size_t)chunk;
}

/* Records a chunk's event in its slot and as a command in flight on the stream (the last
   chunk of a write also pins the binding's slice). */
static cubert_status slot_note(cubert_server_stream *stream, cubert_ocl_staging *st, uint32_t slot,
                               cl_event event, const char *what, const cubert_binding *binding) {
  st->events[slot] = event;
  clRetainEvent(event);
  return cubert_ocl_track(stream, event, what, binding, binding ? 1 : 0, NULL, 0, 1);
}

cubert_status cubert_ocl_staged_write(cubert_ocl_server *server, cubert_server_stream *stream,
                                      const cubert_binding *dst, const void *src, uint64_t size) {
  CUBERT_RETURN_IF_ERROR(staging_ensure(server));
  cubert_ocl_staging *st = &server->staging;
  size_t chunk = chunk_bytes(st, size);
  cl_mem page = (cl_mem)dst->slice->page->native;
  for (uint64_t done = 0; done < size;) {
    size_t n = size - done < chunk ? (size_t)(size - done) : chunk;
    uint32_t slot = st->next;
    st->next = (slot + 1) % CUBERT_OCL_STAGING_SLOTS;
    slot_wait(st, slot);
    parallel_copy(st->pool, slot_host(st, slot), (const char *)src + done, n);
    cl_event event = NULL;
    cl_int err = clEnqueueWriteBuffer(stream->queue, page, CL_FALSE, (size_t)(dst->offset + done),
                                      n, slot_host(st, slot), 0, NULL, &event);
    if (err != CL_SUCCESS)
      return cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                               "clEnqueueWriteBuffer of %zu staged bytes at offset %llu", n,
                               (unsigned long long)(dst->offset + done));
    /* Submit now: the DMA of this chunk runs while the host fills the next slot. */
    clFlush(stream->queue);
    done += n;
    CUBERT_RETURN_IF_ERROR(slot_note(stream, st, slot, event, "write", done == size ? dst : NULL));
  }
  return NULL;
}

cubert_status cubert_ocl_staged_read(cubert_ocl_server *server, cubert_server_stream *stream,
                                     const cubert_binding *src, void *dst, uint64_t size) {
  CUBERT_RETURN_IF_ERROR(staging_ensure(server));
  cubert_ocl_staging *st = &server->staging;
  size_t chunk = chunk_bytes(st, size);
  uint64_t chunks = (size + chunk - 1) / chunk;
  cl_mem page = (cl_mem)src->slice->page->native;
  uint32_t first = st->next;
  cubert_status status = NULL;
  /* Chunk i lives in slot (first + i) % slots; up to every slot is in flight. */
  uint64_t issued = 0;
  for (uint64_t i = 0; i < chunks && !status; ++i) {
    for (; issued < chunks && issued < i + CUBERT_OCL_STAGING_SLOTS && !status; ++issued) {
      uint32_t slot = (uint32_t)((first + issued) % CUBERT_OCL_STAGING_SLOTS);
      slot_wait(st, slot);
      uint64_t off = issued * chunk;
      size_t n = size - off < chunk ? (size_t)(size - off) : chunk;
      cl_event event = NULL;
      cl_int err = clEnqueueReadBuffer(stream->queue, page, CL_FALSE, (size_t)(src->offset + off),
                                       n, slot_host(st, slot), 0, NULL, &event);
      if (err != CL_SUCCESS) {
        status = cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                                   "clEnqueueReadBuffer of %zu staged bytes at offset %llu", n,
                                   (unsigned long long)(src->offset + off));
        break;
      }
      clFlush(stream->queue);
      status = slot_note(stream, st, slot, event, "read", NULL);
    }
    if (status) break;
    uint32_t slot = (uint32_t)((first + i) % CUBERT_OCL_STAGING_SLOTS);
    cl_event event = st->events[slot];
    cl_int err = clWaitForEvents(1, &event);
    cl_int exec = CL_COMPLETE;
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
      err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec), &exec, NULL);
    if (err != CL_SUCCESS || exec < 0) {
      status =
          err != CL_SUCCESS
              ? cubert_ocl_status(err, CUBERT_CODE_EXECUTION,
                                  "clWaitForEvents in a staged read of %llu bytes",
                                  (unsigned long long)size)
              : cubert_ocl_exec_status(exec, "staged read of %llu bytes at offset %llu",
                                       (unsigned long long)size, (unsigned long long)src->offset);
      break;
    }
    uint64_t off = i * chunk;
    size_t n = size - off < chunk ? (size_t)(size - off) : chunk;
    parallel_copy(st->pool, (char *)dst + off, slot_host(st, slot), n);
  }
  st->next = (uint32_t)((first + issued) % CUBERT_OCL_STAGING_SLOTS);
  cubert_ocl_poll(stream);
  return status;
}

/* cubert — large host transfers through pinned memory.

   Drivers copy pageable memory through their own small pinned buffer, one piece at a time:
   on an NVIDIA H200, a 256 MiB clEnqueueWriteBuffer from malloc'd memory moves ~7 GB/s while
   the link moves 55 GB/s from pinned memory. So a large transfer on a device with its own
   memory (internal.h: CUBERT_OCL_STAGING_MIN_WRITE/READ) is cut into chunks that pass through a
   pinned buffer (CL_MEM_ALLOC_HOST_PTR, mapped once per server): the host copies chunk i+1 into a
   free slot while the DMA of chunk i runs. One thread copies at ~10 GB/s on such hosts, which would
   cap the pipeline there, so each chunk's host copy is shared by a few threads (8 threads: ~34 GB/s
   measured).

   Slots: each slot remembers the event of the last transfer that used it and is reused only
   after that event completed. All of this runs under the device lock; the copy threads only
   copy bytes. On host-unified devices (PoCL, integrated GPUs) none of this is used: the
   driver's write is already a memcpy. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef STAGING_SLOT_BYTES
#define STAGING_SLOT_BYTES (8u << 20) /* per slot; CUBERT_OCL_STAGING_SLOTS slots */
#endif
#ifndef STAGING_MIN_CHUNK
/* Below this, per-command cost and thread wake-ups outweigh the overlap (measured: 256 KiB
   chunks lost to the driver's pageable path up to 8 MiB, 1 MiB chunks won from 2 MiB reads). */
#define STAGING_MIN_CHUNK (1u << 20)
#endif
#ifndef STAGING_MAX_THREADS
#define STAGING_MAX_THREADS 8 /* copying threads, the caller included */
#endif
/* Copies below this size are not worth waking threads for (a wake-up costs ~10 us). */
#define PARALLEL_COPY_MIN (1u << 20)

/* ---- the copy threads -------------------------------------------------------------------- */

struct cubert_ocl_copy_pool {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  pthread_t threads[STAGING_MAX_THREADS];
  uint32_t thread_count, next_index;
  uint64_t generation;
  int stop;
  /* the current job: part i of `parts` is copied by thread i (the caller is part 0) */
  char *dst;
  const char *src;
  size_t size, part;
  uint32_t remaining;
};

static void copy_part(const cubert_ocl_copy_pool *pool, uint32_t index) {
  size_t begin = (size_t)index * pool->part;
  if (begin >= pool->size) return;
  size_t n = pool->size - begin < pool->part ? pool->size - begin : pool->part;
  memcpy(pool->dst + begin, pool->src + begin, n);
}

static void *copy_worker(void *arg) {
  cubert_ocl_copy_pool *pool = arg;
  pthread_mutex_lock(&pool->mu);
  uint32_t index = ++pool->next_index; /* 1..thread_count */
  /* Jobs posted before this thread ran must still be seen: start from generation 0, not from
     the current one. */
  uint64_t seen = 0;
  for (;;) {
    while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->work, &pool->mu);
    if (pool->stop) break;
    seen = pool->generation;
    pthread_mutex_unlock(&pool->mu);
    copy_part(pool, index); /* the job fields do not change until remaining reaches 0 */
    pthread_mutex_lock(&pool->mu);
    if (--pool->remaining == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

/* Half the CPUs this process may run on (the other half keeps the driver's threads and the
   rest of the program going), within [2, STAGING_MAX_THREADS] copying threads: even on a
   small host, two copies in flight beat one (and the pool is always exercised). */
static uint32_t copy_thread_count(void) {
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  int n = cpus / 2;
  if (n < 2) n = 2;
  if (n > STAGING_MAX_THREADS) n = STAGING_MAX_THREADS;
  return (uint32_t)n;
}

static cubert_ocl_copy_pool *copy_pool_create(void) {
  uint32_t workers = copy_thread_count() - 1;
  if (workers == 0) return NULL;
  cubert_ocl_copy_pool *pool = calloc(1, sizeof(*pool));
  if (!pool) return NULL;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->work, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (uint32_t i = 0; i < workers; ++i) {
    if (pthread_create(&pool->threads[i], NULL, copy_worker, pool) != 0) break;
    pool->thread_count++;
  }
  return pool;
}

static void copy_pool_destroy(cubert_ocl_copy_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mu);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mu);
  for (uint32_t i = 0; i < pool->thread_count; ++i) pthread_join(pool->threads[i], NULL);
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->work);
  pthread_cond_destroy(&pool->done);
  free(pool);
}

static void parallel_copy(cubert_ocl_copy_pool *pool, void *dst, const void *src, size_t size) {
  if (!pool || pool->thread_count == 0 || size < PARALLEL_COPY_MIN) {
    memcpy(dst, src, size);
    return;
  }
  uint32_t parts = pool->thread_count + 1;
  pthread_mutex_lock(&pool->mu);
  pool->dst = dst;
  pool->src = src;
  pool->size = size;
  pool->part = ((size + parts - 1) / parts + 4095) & ~(size_t)4095; /* whole pages each */
  pool->remaining = pool->thread_count;
  pool->generation++;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mu);
  copy_part(pool, 0);
  pthread_mutex_lock(&pool->mu);
  while (pool->remaining) pthread_cond_wait(&pool->done, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
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
  st->pool = copy_pool_create(); /* NULL: single-threaded copies */
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
  copy_pool_destroy(st->pool);
  st->pool = NULL;
  st->buffer = NULL;
  st->map_queue = NULL;
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

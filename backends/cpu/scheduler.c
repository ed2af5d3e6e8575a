/* cubert CPU server — the scheduler: records, per-stream order, publication, chunk claiming,
   completion and waiting. README.md explains the design; the comments here say why each piece
   is the way it is.

   Locks: each stream's `lock` guards its queue, `running`, `published` and `blocked_on`, and is
   the only lock under which the stream's publication slot is written. The device's registry
   lock guards stream registration. No code path holds two stream locks, or a stream lock and
   the registry lock, at once. Kernels never run under a lock. */
#include "cpu/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "cpu/order.h"
#include "cpu/san_buffers.h"
#include "cpu/san_private.h"
#include "cpu/sanitize.h"
#include "cpu/server.h"
#include "cpu/trap.h"
#include "cubert/config.h"

/* How long a host thread in sync/event_sync polls before sleeping, in ns. Long enough that a
   launch + sync loop never sleeps between short kernels; short enough not to hog a core while
   a long kernel finishes on the workers. */
#define CUBERT_CPU_HOST_SPIN_NS 200000u

/* The grace (CUBERT_CPU_GRACE_NS, in internal.h because the idle loop uses it too): workers
   leave a small launch published by its submitter to that thread for a moment. A thread that
   launches is usually about to sync, and running the launch there costs no thread hop: its
   record and data are in that thread's cache, the waiter sees the completion without a
   transfer, and a few tiny chunks are not fought over by every idle worker. Once the thread
   claimed a chunk, workers that look join; it calls them in if it is still busy after
   CUBERT_CPU_CALL_NS; when nobody syncs, workers start the launch after the grace, which is
   little next to the wake-up of a sleeping worker. Launches of big chunks, and launches
   published by a completing participant (queued behind others), are taken at once. */

/* One-chunk launches a participant runs in a row on the stream whose launch it completed. */
#define CUBERT_CPU_INLINE_RUNS 256u

/* How long a host thread runs a launch alone before calling in the workers, in ns (see
   run_job): shorter than the grace, long enough that a launch of tiny chunks is done alone. */
#define CUBERT_CPU_CALL_NS 1000u

/* Smallest chunk, in units, when the launch has enough units for every thread to get one: a
   claim on a line every thread is writing costs a good fraction of a microsecond, so chunks
   of a few nanoseconds of work each would be all overhead. */
#define CUBERT_CPU_MIN_CHUNK_UNITS 4096u

/* ---- the claim word ------------------------------------------------------------------------- */

static inline uint32_t claim_next(uint64_t w) {
  return (uint32_t)(w & 0xffff);
}
static inline uint32_t claim_count(uint64_t w) {
  return (uint32_t)((w >> 16) & 0xffff);
}
static inline int claim_cube(uint64_t w) {
  return (int)((w >> 32) & 1);
}
static inline uint32_t claim_generation(uint64_t w) {
  return (uint32_t)(w >> 33);
}
static inline uint64_t claim_make(uint32_t generation, int cube, uint32_t count, uint32_t next) {
  return ((uint64_t)generation << 33) | ((uint64_t)(cube != 0) << 32) | ((uint64_t)count << 16) |
         next;
}

/* Starts a new generation of `job` with `count` chunks, `next` of them already taken. Release:
   the description written before it is visible to whoever claims a chunk of it. */
static void claim_start(cubert_cpu_job *job, uint32_t count, uint32_t next) {
  uint64_t old = atomic_load_explicit(&job->claim, memory_order_relaxed);
  uint32_t generation = (claim_generation(old) + 1) & 0x7fffffffu;
  atomic_store_explicit(&job->claim, claim_make(generation, job->cube_mode, count, next),
                        memory_order_release);
}

/* Takes the next chunk of the generation in *word. Losers of a race re-read the word and stop
   when the generation moved on, so a stale pointer never claims work of a later launch. */
static int claim_chunk(cubert_cpu_job *job, uint64_t *word, uint32_t *out_chunk) {
  uint64_t w = *word;
  const uint32_t generation = claim_generation(w);
  while (claim_next(w) < claim_count(w)) {
    if (atomic_compare_exchange_weak_explicit(&job->claim, &w, w + 1, memory_order_acquire,
                                              memory_order_relaxed)) {
      *out_chunk = claim_next(w);
      *word = w + 1;
      return 1;
    }
    if (claim_generation(w) != generation) return 0;
  }
  return 0;
}

/* ---- records -------------------------------------------------------------------------------- */

static void jobs_push_free(cubert_cpu_device *d, cubert_cpu_job *job) {
  /* Treiber push; the consumer takes the whole stack with an exchange, so there is no ABA. */
  cubert_cpu_job *head = atomic_load_explicit(&d->free_jobs, memory_order_relaxed);
  do {
    job->next = head;
  } while (!atomic_compare_exchange_weak_explicit(&d->free_jobs, &head, job, memory_order_release,
                                                  memory_order_relaxed));
}

/* Points the record's arrays at inline or heap storage big enough for the counts. */
static int job_arrays(cubert_cpu_job *job, uint32_t bindings, uint32_t info) {
  if (bindings <= CUBERT_CPU_INLINE_BINDINGS && info <= CUBERT_CPU_INLINE_INFO) {
    job->bindings = job->inline_bindings;
    job->buffers = job->inline_buffers;
    job->buffer_bytes = job->inline_buffer_bytes;
    job->info = job->inline_info;
    return 0;
  }
  if (bindings > job->heap_binding_capacity || info > job->heap_info_capacity) {
    uint32_t nb = bindings > job->heap_binding_capacity ? bindings : job->heap_binding_capacity;
    uint32_t ni = info > job->heap_info_capacity ? info : job->heap_info_capacity;
    size_t per_binding = sizeof(cubert_binding) + sizeof(void *) + sizeof(uint64_t);
    void *block = malloc((size_t)nb * per_binding + (size_t)ni * sizeof(uint64_t) + 1);
    if (!block) return -1;
    free(job->heap_arrays);
    job->heap_arrays = block;
    job->heap_binding_capacity = nb;
    job->heap_info_capacity = ni;
  }
  char *p = job->heap_arrays;
  size_t nb = job->heap_binding_capacity;
  job->bindings = (cubert_binding *)p;
  job->buffers = (void **)(p + nb * sizeof(cubert_binding));
  job->buffer_bytes = (uint64_t *)(p + nb * (sizeof(cubert_binding) + sizeof(void *)));
  job->info = (uint64_t *)(p + nb * (sizeof(cubert_binding) + sizeof(void *) + sizeof(uint64_t)));
  return 0;
}

cubert_cpu_job *cubert_cpu_job_obtain(cubert_server_stream *s, uint32_t binding_count,
                                      uint32_t info_count) {
  cubert_cpu_device *d = s->device;
  cubert_cpu_job *job = s->spare;
  if (!job) {
    /* Take every record freed since the last refill at once (one atomic per batch). */
    job = atomic_exchange_explicit(&d->free_jobs, NULL, memory_order_acquire);
    if (!job) {
      job = cubert_cpu_alloc_lines(sizeof *job);
      if (!job) return NULL;
      memset(job, 0, sizeof *job);
      pthread_mutex_lock(&d->jobs_lock);
      job->all_next = d->all_jobs;
      d->all_jobs = job;
      pthread_mutex_unlock(&d->jobs_lock);
    }
  }
  s->spare = job->next;
  if (job_arrays(job, binding_count, info_count) != 0) {
    job->next = s->spare;
    s->spare = job;
    return NULL;
  }
  job->next = NULL;
  job->stream = s;
  job->submitter = cubert_stream_errors_submitter(s->errors);
  job->kind = CUBERT_CPU_JOB_LAUNCH;
  job->kernel = NULL;
  job->binding_count = binding_count;
  job->info_count = info_count;
  job->has_dynamic_count = 0;
  job->skip_error = NULL;
  job->wait_stream = NULL;
  job->wait_target = 0;
  job->read_dst = NULL;
  return job;
}

void cubert_cpu_stream_drop_spares(cubert_server_stream *s) {
  for (cubert_cpu_job *job = s->spare, *next; job; job = next) {
    next = job->next;
    jobs_push_free(s->device, job);
  }
  s->spare = NULL;
}

void cubert_cpu_jobs_free_all(cubert_cpu_device *d) {
  for (cubert_cpu_job *job = d->all_jobs, *next; job; job = next) {
    next = job->all_next;
    free(job->heap_arrays);
    free(job);
  }
  d->all_jobs = NULL;
  atomic_store(&d->free_jobs, NULL);
}

/* Drops what a finished command holds: its bindings, or the stream it waited for. */
static void job_release_holds(cubert_cpu_job *job) {
  if (job->kind == CUBERT_CPU_JOB_WAIT) {
    cubert_cpu_stream_unref(job->wait_stream);
    job->wait_stream = NULL;
    return;
  }
  for (uint32_t i = 0; i < job->binding_count; ++i) cubert_slice_release(job->bindings[i].slice);
  if (job->has_dynamic_count) cubert_slice_release(job->dynamic_count.slice);
}

void cubert_cpu_job_fail(cubert_cpu_job *job, const char *reason) {
  if (atomic_exchange_explicit(&job->failed, 1, memory_order_relaxed)) return;
  const char *name = job->kernel && job->kernel->name ? job->kernel->name : "(unnamed)";
  cubert_stream_errors_push_for(
      job->stream->errors, job->submitter,
      cubert_status_make(CUBERT_CODE_GENERIC, "CPU kernel \"%s\" failed: %s", name,
                         reason ? reason : "(no reason given)"));
}

void cubert_cpu_job_abandon(cubert_cpu_job *job, cubert_status error) {
  atomic_store_explicit(&job->abandoned, 1, memory_order_relaxed);
  if (atomic_exchange_explicit(&job->failed, 1, memory_order_relaxed)) {
    cubert_status_free(error);
    return;
  }
  cubert_stream_errors_push_for(job->stream->errors, job->submitter, error);
}

void cubert_cpu_fail(const cubert_cpu_ctx *ctx, const char *reason) {
  const cubert_cpu_call *call = ctx ? ctx->priv_ : NULL;
  if (call && call->job) cubert_cpu_job_fail(call->job, reason);
}

/* ---- streams -------------------------------------------------------------------------------- */

void cubert_cpu_stream_ref(cubert_server_stream *s) {
  atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void cubert_cpu_stream_unref(cubert_server_stream *s) {
  if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  free(s);
}

/* Makes `job` visible to participants through the stream's slot; `graced`: published by its
   submitter (see CUBERT_CPU_GRACE_NS). Stream lock held. */
static void publish(cubert_cpu_device *d, cubert_server_stream *s, cubert_cpu_job *job,
                    int graced) {
  atomic_store_explicit(&job->published_ns, graced ? cubert_now_ns() : 0, memory_order_relaxed);
  atomic_store(&d->slots[s->slot], job);
  atomic_fetch_add(graced ? &d->graced_seq : &d->publish_seq, 1);
  if (!s->published) {
    atomic_fetch_or(&d->active[s->slot / 64], 1ull << (s->slot % 64));
    s->published = 1;
  }
}

static void unpublish(cubert_cpu_device *d, cubert_server_stream *s) {
  if (!s->published) return;
  atomic_store(&d->slots[s->slot], NULL);
  atomic_fetch_and(&d->active[s->slot / 64], ~(1ull << (s->slot % 64)));
  s->published = 0;
}

/* Items (units, or cubes in cube mode) per chunk of a launch of `items` on `threads` threads;
   *out_least: the smallest chunk its guided tail may use. About CHUNKS_PER_PARTICIPANT chunks
   per thread: enough that a thread finishing early finds more work (load balance), few enough
   that each chunk is a long contiguous range (streaming bandwidth, vectorised loops, one claim
   per chunk). Smaller launches get chunks of at least MIN_CHUNK_UNITS units, but never fewer
   chunks than threads (units may be long). Unit chunks above one cache line's worth of bytes are
   rounded to 64 units so neighbouring chunks never write one line. */
static uint64_t chunk_size(const cubert_cpu_job *job, uint64_t items, uint64_t threads,
                           uint64_t *out_least) {
  uint64_t target = threads * CUBERT_CPU_CHUNKS_PER_PARTICIPANT;
  if (target > CUBERT_CPU_MAX_CHUNKS) target = CUBERT_CPU_MAX_CHUNKS;
  uint64_t chunk = (items + target - 1) / target;
  if (!job->cube_mode && chunk < CUBERT_CPU_MIN_CHUNK_UNITS) {
    uint64_t per_thread = (items + threads - 1) / threads;
    chunk = per_thread < CUBERT_CPU_MIN_CHUNK_UNITS ? per_thread : CUBERT_CPU_MIN_CHUNK_UNITS;
  }
  if (!job->cube_mode && chunk > 64) chunk = (chunk + 63) & ~(uint64_t)63;
  /* A sanitized chunk sets up shadows of its own (sanitize.c): at least MIN_CHUNK_UNITS units
     each, whole cubes, so a small launch runs on one thread in cube order (the report a
     sequential run gives) and a big one on every participant. */
  uint64_t least = job->cube_mode ? 1 : CUBERT_CPU_MIN_CHUNK_UNITS;
  if (cubert_cpu_san_wanted(job)) {
    least = job->cube_mode
                ? (CUBERT_CPU_MIN_CHUNK_UNITS + job->units_per_cube - 1) / job->units_per_cube
                : CUBERT_CPU_MIN_CHUNK_UNITS;
    if (chunk < least) chunk = least;
  }
  *out_least = least;
  /* A seeded order must repeat from run to run: one participant runs the whole launch. */
  return job->shuffle || chunk > items ? items : chunk;
}

/* Fills the run-time shape of a launch that is about to start. Returns its chunk count, or 0
   when it completes at once (pending error, nothing to run, or too big). */
static uint32_t job_prepare(cubert_cpu_device *d, cubert_server_stream *s, cubert_cpu_job *job) {
  /* Work behind a failed operation of its submitter does not run: its input may be garbage
     (another stream id sharing the slot has its own data). */
  if (cubert_stream_errors_pending_for(s->errors, job->submitter)) return 0;
  if (job->has_dynamic_count) {
    /* Read now, after every earlier command of the stream finished (it may have written it). */
    uint32_t xyz[3];
    memcpy(xyz, cubert_binding_host_ptr(&job->dynamic_count), sizeof xyz);
    memcpy(job->cube_count, xyz, sizeof xyz);
  }
  uint64_t cubes = (uint64_t)job->cube_count[0] * job->cube_count[1];
  uint64_t units = 0;
  int overflow = __builtin_mul_overflow(cubes, (uint64_t)job->cube_count[2], &cubes) ||
                 __builtin_mul_overflow(cubes, job->units_per_cube, &units) ||
                 units > (uint64_t)INT64_MAX;
  if (overflow) {
    const char *name = job->kernel->name ? job->kernel->name : "(unnamed)";
    job->skip_error = cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_UNITS,
                           "kernel \"%s\": cube count (%u, %u, %u) x cube dim (%u, %u, %u) is "
                           "more than 2^63 units, the CPU server's limit",
                           name, job->cube_count[0], job->cube_count[1], job->cube_count[2],
                           job->cube_dim[0], job->cube_dim[1], job->cube_dim[2]),
        UINT64_MAX, (uint64_t)INT64_MAX);
    return 0;
  }
  if (units == 0) return 0;
  const uint64_t items = job->cube_mode ? cubes : units;
  const uint64_t threads = d->caller_helps ? d->threads : d->worker_count;
  uint64_t least;
  const uint64_t chunk = chunk_size(job, items, threads, &least);
  uint64_t count = (items + chunk - 1) / chunk;
  job->item_count = items;
  job->chunk_items = chunk;
  job->head_chunks = (uint32_t)count;
  job->tail_begin = items;
  job->tail_chunk_items = chunk;
  /* A guided tail: the last round of chunks (one per thread) is cut CUBERT_CPU_TAIL_SPLIT times
     finer. With equal chunks the threads finish up to a whole chunk apart, and the last one
     streams alone meanwhile (measured: 0.5-1.3 ms of a 27 ms add over 64 Mi floats on 2
     threads); finer chunks at the end shrink that gap while the bulk keeps long ranges and few
     claims. Only when the finer chunks stay above the minimum chunk (units) or are whole cubes. */
  uint64_t fine = chunk / CUBERT_CPU_TAIL_SPLIT;
  if (!job->cube_mode) fine &= ~(uint64_t)63;
  if (count >= 2 * threads && fine >= least) {
    uint64_t head = count - threads;
    uint64_t tail = (items - head * chunk + fine - 1) / fine;
    if (head + tail <= CUBERT_CPU_MAX_CHUNKS) {
      job->head_chunks = (uint32_t)head;
      job->tail_begin = head * chunk;
      job->tail_chunk_items = fine;
      count = head + tail;
    }
  }
  atomic_store_explicit(&job->done_chunks, 0, memory_order_relaxed);
  atomic_store_explicit(&job->failed, 0, memory_order_relaxed);
  atomic_store_explicit(&job->abandoned, 0, memory_order_relaxed);
  atomic_store_explicit(&job->san_state, 0, memory_order_relaxed);
  job->san_launch = NULL;
  job->san_twin = NULL;
  return (uint32_t)count;
}

/* What advance_locked decided. */
typedef enum step_kind {
  STEP_IDLE,      /* nothing to start (queue empty, or blocked on a wait) */
  STEP_PUBLISHED, /* the head launch is published for every participant */
  STEP_FINISH,    /* the head completes without running (satisfied wait, skipped launch) */
  STEP_INLINE,    /* the head is a one-chunk launch the stepping participant runs itself */
} step_kind;

/* Starts the head of the queue if it can. Stream lock held, nothing running. The started
   command becomes `running`; *out_job receives it, *out_chunks its chunk count. */
static step_kind advance_locked(cubert_cpu_device *d, cubert_server_stream *s, int may_inline,
                                int graced, cubert_cpu_job **out_job, uint32_t *out_chunks) {
  cubert_cpu_job *job = s->head;
  *out_job = job;
  *out_chunks = 0;
  if (!job) return STEP_IDLE;
  if (job->kind == CUBERT_CPU_JOB_WAIT) {
    cubert_server_stream *target = job->wait_stream;
    /* Announce the block before checking the target's counter; the target's completer bumps
       its counter before reading blocked_waiters, so one of the two sees the other. */
    if (!s->blocked_on) {
      s->blocked_on = target;
      atomic_fetch_add(&target->blocked_waiters, 1);
    }
    if (atomic_load(&target->completed) < job->wait_target) return STEP_IDLE;
    atomic_fetch_sub(&target->blocked_waiters, 1);
    s->blocked_on = NULL;
  }
  s->head = job->next;
  if (!s->head) s->tail = NULL;
  job->next = NULL;
  s->running = job;
  uint32_t chunks = job->kind == CUBERT_CPU_JOB_LAUNCH ? job_prepare(d, s, job) : 0;
  if (chunks == 0) return STEP_FINISH;
  *out_chunks = chunks;
  /* A one-chunk launch behind a launch that just finished (a chain of small kernels) costs
     least on the thread that finished the previous one: nothing to publish, nobody to wake, and
     its data is in that thread's cache. */
  if (chunks == 1 && may_inline && !job->cube_mode) {
    claim_start(job, 1, 1);
    return STEP_INLINE;
  }
  claim_start(job, chunks, 0);
  /* Only small launches are left to their submitter for a moment: a launch of big chunks keeps
     every thread busy anyway, and would only lose the grace. */
  int small = job->cube_mode ? chunks == 1 : job->chunk_items < CUBERT_CPU_MIN_CHUNK_UNITS;
  publish(d, s, job, graced && small);
  return STEP_PUBLISHED;
}

/* A copy on the device: the bytes, and what the sanitizer knows about them (bytes copied from
   memory nothing wrote stay unwritten, so that a read of them is still reported). */
static void copy_job_run(cubert_cpu_device *d, cubert_cpu_job *job) {
  uint64_t size = job->bindings[0].size;
  memcpy(job->buffers[1], job->buffers[0], size);
  if (!atomic_load_explicit(&d->undefined.nonempty, memory_order_relaxed)) return;
  uintptr_t src = (uintptr_t)job->buffers[0], dst = (uintptr_t)job->buffers[1];
  uint8_t *bits = calloc((size_t)((size + 7) / 8), 1);
  if (bits && cubert_cpu_undefined_load(&d->undefined, src, size, bits))
    cubert_cpu_undefined_store(&d->undefined, dst, size, bits);
  else
    cubert_cpu_undefined_remove(&d->undefined, dst, size); /* never report falsely */
  free(bits);
}

static void recheck_blocked(cubert_cpu_device *d);
static void run_chunk(cubert_cpu_participant *part, cubert_cpu_job *job, uint64_t chunk);

/* Finishes `finished` (the stream's running command, or NULL) and starts what follows. Runs on
   the participant that completed the last chunk (`part`, which may run one-chunk successors
   itself), on the submitting thread, or on a rechecker (part NULL). */
static void stream_step(cubert_server_stream *s, cubert_cpu_job *finished, int recheck,
                        cubert_cpu_participant *part) {
  cubert_cpu_device *d = s->device;
  int progressed = 0, waited_on = 0;
  /* Inline runs in a row before the next one-chunk launch is published instead: a worker that
     follows one busy stream forever would starve the launches of other streams. */
  uint32_t inline_budget = CUBERT_CPU_INLINE_RUNS;
  for (;;) {
    if (finished) {
      /* An asynchronous read copies here, once every earlier command of the stream completed,
         and before the counter moves, so its event completes with the data in place. Nothing
         is handed out behind a failed command (its output may be garbage). */
      if (finished->kind == CUBERT_CPU_JOB_READ && finished->bindings[0].size &&
          !cubert_stream_errors_pending_for(s->errors, finished->submitter))
        memcpy(finished->read_dst, finished->buffers[0], finished->bindings[0].size);
      if (finished->kind == CUBERT_CPU_JOB_COPY && finished->bindings[0].size &&
          !cubert_stream_errors_pending_for(s->errors, finished->submitter))
        copy_job_run(d, finished);
      /* What a launch the sanitizer did not watch may have written is written from now on
         (a watched one stored what it left unwritten itself: san_buffers.c). */
      if (finished->kind == CUBERT_CPU_JOB_LAUNCH && finished->san_launch)
        cubert_cpu_san_launch_finish(finished);
      else if (finished->kind == CUBERT_CPU_JOB_LAUNCH &&
               atomic_load_explicit(&d->undefined.nonempty, memory_order_relaxed) &&
               !cubert_cpu_san_wanted(finished))
        cubert_cpu_san_launch_wrote(finished);
      if (finished->skip_error) {
        cubert_stream_errors_push_for(s->errors, finished->submitter, finished->skip_error);
        finished->skip_error = NULL;
      }
      /* Before the counter moves: a sync that returns has every binding released. */
      job_release_holds(finished);
    }
    step_kind kind = STEP_IDLE;
    cubert_cpu_job *next = NULL;
    uint32_t chunks = 0;
    cubert_cpu_lock_acquire(&s->lock);
    if (finished) {
      s->running = NULL;
      atomic_store(&s->completed, atomic_load_explicit(&s->completed, memory_order_relaxed) + 1);
      /* Read here, under the lock: once the counter reached the submitted count a waiter may
         destroy the stream, so nothing after the unlock may touch it. */
      waited_on = atomic_load(&s->blocked_waiters) > 0;
      progressed = 1;
    }
    if (!s->running) {
      kind = advance_locked(d, s, part != NULL && inline_budget > 0, 0, &next, &chunks);
      if (kind != STEP_PUBLISHED) unpublish(d, s);
    }
    cubert_cpu_lock_release(&s->lock);
    if (finished) jobs_push_free(d, finished);
    if (kind == STEP_PUBLISHED) cubert_cpu_ec_notify(&d->work_ec, chunks);
    if (kind == STEP_INLINE) {
      run_chunk(part, next, 0);
      --inline_budget;
    }
    if (kind != STEP_FINISH && kind != STEP_INLINE) break;
    finished = next;
  }
  if (progressed) {
    cubert_cpu_ec_notify(&d->done_ec, UINT64_MAX);
    if (recheck && waited_on) recheck_blocked(d);
  }
}

/* Gives streams blocked on a wait another chance after some stream made progress. Repeats while
   it unblocks something, since finishing a wait is progress that can unblock another stream.
   Rare (only when a stream that others wait for completes something), so it simply visits every
   registered stream, in batches so that no stream lock is taken under the registry lock. */
static void recheck_blocked(cubert_cpu_device *d) {
  enum { BATCH = 64 };
  int progress;
  do {
    progress = 0;
    uint32_t next = 0;
    for (;;) {
      cubert_server_stream *batch[BATCH];
      uint32_t n = 0;
      pthread_mutex_lock(&d->registry_lock);
      for (; next < d->stream_high && n < BATCH; ++next) {
        cubert_server_stream *s = d->streams[next];
        if (!s) continue;
        cubert_cpu_stream_ref(s);
        batch[n++] = s;
      }
      pthread_mutex_unlock(&d->registry_lock);
      if (n == 0) break;
      for (uint32_t k = 0; k < n; ++k) {
        cubert_server_stream *s = batch[k];
        cubert_cpu_lock_acquire(&s->lock);
        int blocked = s->blocked_on != NULL && s->running == NULL;
        cubert_cpu_lock_release(&s->lock);
        if (blocked) {
          uint64_t before = atomic_load(&s->completed);
          stream_step(s, NULL, 0, NULL);
          if (atomic_load(&s->completed) != before) progress = 1;
        }
        cubert_cpu_stream_unref(s);
      }
    }
  } while (progress);
}

void cubert_cpu_stream_signal(cubert_server_stream *s) {
  cubert_cpu_device *d = s->device;
  cubert_cpu_lock_acquire(&s->lock);
  atomic_store(&s->completed, atomic_load_explicit(&s->completed, memory_order_relaxed) + 1);
  /* After the counter (seq_cst): a blocker announces itself before reading the counter. */
  int waited_on = atomic_load(&s->blocked_waiters) > 0;
  cubert_cpu_lock_release(&s->lock);
  cubert_cpu_ec_notify(&d->done_ec, UINT64_MAX);
  if (waited_on) recheck_blocked(d);
}

void cubert_cpu_stream_submit(cubert_server_stream *s, cubert_cpu_job *job) {
  cubert_cpu_device *d = s->device;
  atomic_store_explicit(&s->submitted,
                        atomic_load_explicit(&s->submitted, memory_order_relaxed) + 1,
                        memory_order_release);
  step_kind kind = STEP_IDLE;
  cubert_cpu_job *next = NULL;
  uint32_t chunks = 0;
  cubert_cpu_lock_acquire(&s->lock);
  if (s->tail)
    s->tail->next = job;
  else
    s->head = job;
  s->tail = job; /* A launch is asynchronous: the submitting thread never runs it here (may_inline =
    0), but it gets a head start if it syncs soon (graced = 1). */
  if (!s->running) kind = advance_locked(d, s, 0, 1, &next, &chunks);
  cubert_cpu_lock_release(&s->lock);
  if (kind == STEP_PUBLISHED) cubert_cpu_ec_notify(&d->work_ec, chunks);
  if (kind == STEP_FINISH) stream_step(s, next, 1, NULL);
}

/* ---- running chunks ------------------------------------------------------------------------ */

/* Says where the participant's cube runner lives, before it claims a cube-mode chunk: a worker
   owns one; a host thread borrows one of the device's helper runners. 0 when every helper runner
   is taken: the host thread then leaves cube launches to the workers. Allocates nothing — the
   runner is created (participant_runner) only once a chunk was claimed, so that a refused
   allocation always fails the launch that needed it, never a visit that then claims nothing. */
static int participant_reserve(cubert_cpu_device *d, cubert_cpu_participant *part) {
  if (part->is_worker || part->helper_runner >= 0) return 1;
  for (int i = 0; i < CUBERT_CPU_HELPER_RUNNERS; ++i) {
    cubert_cpu_helper_runner *h = &d->helper_runners[i];
    if (atomic_load_explicit(&h->busy, memory_order_relaxed) ||
        atomic_exchange_explicit(&h->busy, 1, memory_order_acquire))
      continue;
    part->helper_runner = i;
    part->runner = h->runner;
    return 1;
  }
  return 0;
}

/* The participant's runner (reserved by participant_reserve), created on first use. */
static cubert_status participant_runner(cubert_cpu_participant *part, const char *kernel_name) {
  if (part->runner) return NULL;
  cubert_cpu_device *d = part->device;
  cubert_cpu_runner *runner = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_cpu_runner_create(d->base.properties.hardware.max_units_per_cube,
                                                  &d->fail_allocations, kernel_name, &runner));
  part->runner = runner;
  if (!part->is_worker) d->helper_runners[part->helper_runner].runner = runner;
  return NULL;
}

void cubert_cpu_participant_finish(cubert_cpu_participant *part) {
  if (part->is_worker) {
    cubert_cpu_runner_destroy(part->runner);
  } else if (part->helper_runner >= 0) {
    atomic_store_explicit(&part->device->helper_runners[part->helper_runner].busy, 0,
                          memory_order_release);
  }
  part->runner = NULL;
  part->helper_runner = -1;
}

/* Validate mode with CUBERT_VALIDATE_SEED, a kernel without cubes of its own (UNIT_KERNEL):
   one call of `fn` per unit, the launch's units in the seeded order, so units of one cube and
   of different cubes interleave as they may on a GPU. */
static void run_units_shuffled(cubert_cpu_kernel_fn fn, cubert_cpu_ctx *ctx, uint64_t begin,
                               uint64_t end) {
  cubert_cpu_order order;
  cubert_cpu_order_init(&order, cubert_config_get()->validate_seed, 0, end - begin);
  for (uint64_t k = 0; k < end - begin; ++k) {
    ctx->unit_begin = begin + cubert_cpu_order_at(&order, k);
    ctx->unit_end = ctx->unit_begin + 1;
    fn(ctx);
  }
}

/* Items [*out_begin, *out_end) of chunk `chunk`: head chunks of chunk_items, then tail chunks
   of tail_chunk_items. */
static void chunk_range(const cubert_cpu_job *job, uint64_t chunk, uint64_t *out_begin,
                        uint64_t *out_end) {
  uint64_t begin, end;
  if (chunk < job->head_chunks) {
    begin = chunk * job->chunk_items;
    end = begin + job->chunk_items;
  } else {
    begin = job->tail_begin + (chunk - job->head_chunks) * job->tail_chunk_items;
    end = begin + job->tail_chunk_items;
  }
  if (end > job->item_count) end = job->item_count;
  *out_begin = begin;
  *out_end = end;
}

/* A run of a chunk's items (or of the whole launch, for the private-memory check) once its
   resources are ready: what run_trapped's body needs. `san`: the kernel sanitizer's state when
   it runs, else NULL; `fibers`: each cube through the fiber runner (its units meet at
   barriers). */
typedef struct items_run {
  cubert_cpu_participant *part;
  cubert_cpu_job *job;
  cubert_cpu_kernel_fn fn;
  cubert_cpu_ctx *ctx;
  cubert_cpu_san *san;
  cubert_cpu_trap *trap;
  int fibers;
  uint64_t begin, end;
} items_run;

/* Cubes [begin, end) of a cube-mode chunk: one call per cube, or each through the fiber runner
   when its units meet at barriers; in a shuffled order in validate mode. */
static void run_cubes(const items_run *run) {
  cubert_cpu_job *job = run->job;
  cubert_cpu_ctx *ctx = run->ctx;
  const uint64_t units = job->units_per_cube, begin = run->begin, end = run->end;
  cubert_cpu_order cubes = {0};
  uint16_t unit_order[CUBERT_CPU_MAX_UNITS_PER_CUBE];
  if (job->shuffle)
    cubert_cpu_order_init(&cubes, cubert_config_get()->validate_seed, 0, end - begin);
  for (uint64_t k = begin; k < end; ++k) {
    if (run->san && cubert_cpu_san_stopped(run->san)) break; /* a wild access: nothing more */
    uint64_t cube = k;
    if (job->shuffle) {
      /* The cube's units in the order of (seed, cube), for the fiber ring (fiber.c). */
      cube = begin + cubert_cpu_order_at(&cubes, k - begin);
      cubert_cpu_order_fill_u16(cubert_config_get()->validate_seed, cube + 1, (uint32_t)units,
                                unit_order);
    }
    uint64_t first = cube * units;
    run->trap->cube_first = first;
    if (run->san) cubert_cpu_san_cube(run->san, first, job->shuffle ? unit_order : NULL);
    if (!run->fibers) {
      /* One call per cube: no barrier to honour, but shared memory is the cube's. */
      ctx->unit_begin = first;
      ctx->unit_end = first + units;
      run->fn(ctx);
      continue;
    }
    cubert_status s = cubert_cpu_runner_run_cube(run->part->runner, run->fn, ctx, job, first,
                                                 (uint32_t)units, job->shuffle ? unit_order : NULL);
    if (s) {
      cubert_cpu_job_fail(job, cubert_status_message(s));
      cubert_status_free(s);
    }
  }
}

/* The items of `run`, as units or as cubes. */
static void run_trapped(void *arg) {
  const items_run *run = arg;
  if (run->job->cube_mode) {
    run_cubes(run);
  } else if (run->job->shuffle) {
    run_units_shuffled(run->fn, run->ctx, run->begin, run->end);
  } else {
    run->ctx->unit_begin = run->begin;
    run->ctx->unit_end = run->end;
    run->fn(run->ctx);
  }
}

/* Runs the items of `run` on this thread, an integer division fault of the kernel ending them as
   the launch's error (trap.c). */
static void run_guarded(items_run *run) {
  cubert_cpu_trap trap;
  run->trap = &trap;
  if (cubert_cpu_trap_run(&trap, run_trapped, run))
    cubert_cpu_trap_fail(&trap, run->job, run->ctx, run->begin, run->end);
}

/* The context of a run of `job`'s items; `call` is its report target. */
static cubert_cpu_ctx launch_ctx(const cubert_cpu_job *job, cubert_cpu_call *call) {
  *call = (cubert_cpu_call){(cubert_cpu_job *)job, NULL};
  return (cubert_cpu_ctx){
      .cube_count = {job->cube_count[0], job->cube_count[1], job->cube_count[2]},
      .cube_dim = {job->cube_dim[0], job->cube_dim[1], job->cube_dim[2]},
      .buffers = job->buffers,
      .buffer_bytes = job->buffer_bytes,
      .info = job->info,
      .buffer_count = job->binding_count,
      .info_count = job->info_count,
      .priv_ = call,
      .mode = job->mode,
      .dynamic_shared_offset = job->dynamic_offset,
      .dynamic_shared_bytes = job->dynamic_bytes,
  };
}

/* Items (units, or cubes in cube mode) [begin, end) of `job`. `twin`: a run of the private-memory
   check after the launch (san_private.c), with its function and buffer copies, the sanitizer
   quiet and the mode checked (nothing it meets is reported); NULL: a chunk of the launch. */
static void run_items(cubert_cpu_participant *part, cubert_cpu_job *job, uint64_t begin,
                      uint64_t end, const cubert_cpu_san_twin *twin) {
  const cubert_kernel_def *kernel = job->kernel;
  cubert_cpu_call call;
  cubert_cpu_ctx ctx = launch_ctx(job, &call);
  if (twin) {
    ctx.buffers = twin->buffers;
    ctx.mode = CUBERT_EXECUTION_CHECKED;
  }
  /* Validate mode with the kernel sanitizer: the kernel's sanitize copy runs, its shared memory
     between redzones (sanitize.c). */
  cubert_cpu_kernel_fn fn = kernel->cpu;
  cubert_cpu_san san;
  const int sanitize = cubert_cpu_san_wanted(job);
  const uint64_t redzone =
      sanitize && job->shared_bytes ? cubert_cpu_san_redzone(job->shared_bytes) : 0;
  if (sanitize) fn = twin ? twin->fn : kernel->cpu_sanitize;
  if (!job->cube_mode) {
    if (sanitize && !cubert_cpu_san_begin(&san, job, NULL, 0, 1, 0)) {
      cubert_cpu_job_fail(job, "the kernel sanitizer could not allocate its shadow memory");
      return;
    }
    if (twin) cubert_cpu_san_quiet(&san, twin->regions);
    run_guarded(&(items_run){part, job, fn, &ctx, sanitize ? &san : NULL, NULL, 0, begin, end});
    if (sanitize) cubert_cpu_san_end(&san);
    return;
  }
  /* A launch some participant could not get resources for is dropped as a whole from there on
     (cubes already run stay run: a failed launch's output is undefined, as on a GPU). */
  if (atomic_load_explicit(&job->abandoned, memory_order_relaxed)) return;
  const uint64_t units = job->units_per_cube;
  const int fibers = units > 1 && (kernel->flags & CUBERT_KERNEL_SYNC_CUBE);
  /* The runner, its fibers, stacks and shared buffer are allocated here, inside the launch that
     needs them (once per participant and size, then reused), so a refusal is this launch's
     OUT_OF_MEMORY on its stream, reported before any of this chunk's cubes runs. */
  cubert_status s = NULL;
  if (fibers || job->shared_bytes) {
    s = participant_runner(part, kernel->name);
    if (!s)
      s = cubert_cpu_runner_prepare(part->runner, fibers ? (uint32_t)units : 0,
                                    job->shared_bytes + 2 * redzone, kernel->name, &ctx.shared);
    if (s) {
      cubert_cpu_job_abandon(job, s);
      return;
    }
  }
  if (sanitize) {
    if (ctx.shared) ctx.shared = (char *)ctx.shared + redzone;
    if (!cubert_cpu_san_begin(&san, job, job->shared_bytes ? ctx.shared : NULL, job->shared_bytes,
                              (uint32_t)units, fibers)) {
      cubert_cpu_job_fail(job, "the kernel sanitizer could not allocate its shadow memory");
      return;
    }
    if (twin) cubert_cpu_san_quiet(&san, twin->regions);
  }
  run_guarded(&(items_run){part, job, fn, &ctx, sanitize ? &san : NULL, NULL, fibers, begin, end});
  if (sanitize) cubert_cpu_san_end(&san);
}

static void run_chunk(cubert_cpu_participant *part, cubert_cpu_job *job, uint64_t chunk) {
  uint64_t begin, end;
  chunk_range(job, chunk, &begin, &end);
  run_items(part, job, begin, end, job->san_twin);
}

/* The private-memory check's runs of the whole launch (san_private.c) on this thread, in one
   order: the zeroed copy, then, when an output differs, the filled one. */
static void check_private(cubert_cpu_participant *part, cubert_cpu_job *job) {
  cubert_cpu_san_twin twin;
  if (!cubert_cpu_san_private_begin(&twin, job)) return;
  cubert_cpu_call call;
  const cubert_cpu_ctx ctx = launch_ctx(job, &call);
  do run_items(part, job, 0, job->item_count, &twin);
  while (cubert_cpu_san_private_next(&twin, job, &ctx));
  cubert_cpu_san_private_end(&twin);
}

/* A sanitized launch whose last chunk (`count` of them) this participant ran. The zeroed copy's
   run is the launch's chunks again, claimed by every participant (the private-memory check costs
   one more parallel run, not a run on one thread): returns 1 when it armed it, the launch then
   completing when its last chunk is done. After it, an output that differs from the launch's is
   confirmed by check_private's runs in one order (the two runs compared must have run their
   atomics alike), before the launch completes. A launch with atomic accesses to buffers, whose
   outputs may show the order of its cubes, goes to check_private at once. Returns 0: nothing
   more to run. */
static int private_pass(cubert_cpu_device *d, cubert_cpu_participant *part, cubert_cpu_job *job,
                        uint32_t count) {
  cubert_cpu_san_twin *twin = job->san_twin;
  if (!twin && atomic_load_explicit(&job->san_launch->atomics, memory_order_relaxed)) {
    check_private(part, job);
    return 0;
  }
  if (!twin) {
    twin = malloc(sizeof *twin);
    if (!twin || !cubert_cpu_san_private_begin(twin, job)) {
      free(twin);
      return 0;
    }
    job->san_twin = twin;
    atomic_store_explicit(&job->done_chunks, 0, memory_order_relaxed);
    claim_start(job, count, 0); /* release: the twin is seen by whoever claims a chunk */
    atomic_fetch_add(&d->publish_seq, 1);
    cubert_cpu_ec_notify(&d->work_ec, count);
    return 1;
  }
  job->san_twin = NULL;
  cubert_cpu_call call;
  const cubert_cpu_ctx ctx = launch_ctx(job, &call);
  const int differs = cubert_cpu_san_private_next(twin, job, &ctx);
  cubert_cpu_san_private_end(twin);
  free(twin);
  if (differs) check_private(part, job);
  return 0;
}

/* Runs chunks of `job` (read from a slot, possibly stale) until none is left to claim. */
static int run_job(cubert_cpu_device *d, cubert_cpu_participant *part, cubert_cpu_job *job) {
  /* A plain read first: most visits find nothing left, and only they stay off the line. */
  uint64_t word = atomic_load_explicit(&job->claim, memory_order_acquire);
  if (claim_next(word) >= claim_count(word)) return 0;
  if (part->is_worker && claim_next(word) == 0) {
    uint64_t published = atomic_load_explicit(&job->published_ns, memory_order_relaxed);
    uint64_t until = published + CUBERT_CPU_GRACE_NS;
    if (published && cubert_now_ns() < until) {
      if (!part->grace_until_ns || until < part->grace_until_ns) part->grace_until_ns = until;
      return 0;
    }
  }
  if (claim_cube(word) && !participant_reserve(d, part)) return 0;
  uint32_t ran = 0, chunk;
  /* A successful claim pins the generation: the launch cannot complete (and the record cannot
     be recycled) before this participant reports its chunks below. */
  uint64_t first_ns = 0;
  int called = part->is_worker || claim_count(word) == 1;
  while (claim_chunk(job, &word, &chunk)) {
    /* A host thread that is still busy with a launch after CUBERT_CPU_CALL_NS calls in the
       workers waiting out its grace; a launch it finishes sooner costs no other thread. */
    if (!called) {
      uint64_t now = cubert_now_ns();
      if (!first_ns) {
        first_ns = now;
      } else if (now - first_ns >= CUBERT_CPU_CALL_NS) {
        atomic_fetch_add(&d->publish_seq, 1);
        called = 1;
      }
    }
    run_chunk(part, job, chunk);
    ++ran;
  }
  if (!ran) return 0;
  /* One add per participant, not per chunk; whoever completes the count finishes the launch. */
  uint32_t count = claim_count(word);
  if (atomic_fetch_add_explicit(&job->done_chunks, ran, memory_order_acq_rel) + ran == count) {
    /* Workers, and a host thread on its own stream, run one-chunk successors inline. */
    int may_inline = part->is_worker || part->prefer == job->stream;
    if (job->san_launch && private_pass(d, part, job, count)) return 1;
    stream_step(job->stream, job, 1, may_inline ? part : NULL);
  }
  return 1;
}

/* Calls run_job on each published slot of `bits` (a word of `active`), lowest first. */
static int scan_bits(cubert_cpu_device *d, cubert_cpu_participant *part, uint64_t bits,
                     uint32_t word) {
  while (bits) {
    uint32_t slot = word * 64 + (uint32_t)__builtin_ctzll(bits);
    bits &= bits - 1;
    cubert_cpu_job *job = atomic_load(&d->slots[slot]);
    if (job && run_job(d, part, job)) return 1;
  }
  return 0;
}

int cubert_cpu_try_work(cubert_cpu_device *d, cubert_cpu_participant *part) {
  part->grace_until_ns = 0;
  if (part->prefer) {
    cubert_cpu_job *job = atomic_load(&d->slots[part->prefer->slot]);
    if (job && run_job(d, part, job)) return 1;
  }
  uint32_t words = atomic_load_explicit(&d->mask_words, memory_order_acquire);
  uint32_t start = part->index % 64;
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t bits = atomic_load(&d->active[w]);
    if (!bits) continue;
    /* Each participant starts at its own bit so that concurrent launches of different streams
       spread over the participants instead of all piling onto the lowest slot. */
    uint64_t high = start ? bits & (~0ull << start) : bits;
    if (scan_bits(d, part, high, w) || scan_bits(d, part, bits & ~high, w)) return 1;
  }
  return 0;
}

int cubert_cpu_work_available(cubert_cpu_device *d) {
  uint32_t words = atomic_load_explicit(&d->mask_words, memory_order_acquire);
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t bits = atomic_load(&d->active[w]);
    while (bits) {
      uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
      bits &= bits - 1;
      cubert_cpu_job *job = atomic_load(&d->slots[slot]);
      if (!job) continue;
      uint64_t word = atomic_load_explicit(&job->claim, memory_order_relaxed);
      if (claim_next(word) < claim_count(word)) return 1;
    }
  }
  return 0;
}

/* ---- waiting -------------------------------------------------------------------------------- */

void cubert_cpu_wait(cubert_cpu_device *d, cubert_server_stream *s, uint64_t target) {
  if (atomic_load_explicit(&s->completed, memory_order_acquire) >= target) return;
  cubert_cpu_participant part = {.device = d, .index = s->slot, .helper_runner = -1, .prefer = s};
  uint64_t spin_start = 0;
  uint32_t spins = 0;
  while (atomic_load_explicit(&s->completed, memory_order_acquire) < target) {
    /* The waiting thread is a full participant: it runs chunks (its own stream's first) rather
       than idling while the workers do the work, which also saves the wake-up hop. */
    if (d->caller_helps && cubert_cpu_try_work(d, &part)) {
      spin_start = 0;
      continue;
    } /* With one kernel thread in all the caller does not help, and it may share the worker's
    core (a cpubind of one core): it sleeps at once rather than compete for the core. */
    if (d->caller_helps) {
      if ((++spins & 15) != 0) {
        cubert_cpu_relax();
        continue;
      }
      uint64_t now = cubert_now_ns();
      if (!spin_start) spin_start = now;
      if (now - spin_start < CUBERT_CPU_HOST_SPIN_NS) continue;
    }
    uint32_t key = cubert_cpu_ec_prepare(&d->done_ec);
    if (atomic_load(&s->completed) >= target) {
      cubert_cpu_ec_cancel(&d->done_ec);
      break;
    }
    cubert_cpu_ec_wait(&d->done_ec, key);
    spin_start = 0;
  }
  cubert_cpu_participant_finish(&part);
}

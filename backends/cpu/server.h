/* cubert CPU server — the server's objects (server.c creates and destroys the device; see
   README.md).

   device (cubert_cpu_device) owns the worker pool, one publication slot per stream, the records
   of every launch ever queued (recycled, freed at destroy) and a few helper runners.
   stream (cubert_server_stream) is an in-order queue of records with completion counters.
   job (cubert_cpu_job) is one queued command: a launch, or a wait for another stream. */
#ifndef CUBERT_CPU_SERVER_H
#define CUBERT_CPU_SERVER_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu/api.h"
#include "cpu/eventcount.h"
#include "cpu/fiber.h"
#include "cpu/topology.h"
#include "cpu/undefined.h"
#include "cubert/config.h"
#include "cubert/server.h"

enum {
  CUBERT_CPU_LINE = 64, /* cache line bytes: claim counters sit alone on one */
  /* Publication slots: every stream slot the core may make (CUBERT_MAX_STREAMS, at most
     CUBERT_MAX_STREAMS_LIMIT) plus as many again for the communicators' private streams (up to
     three per member on this device). 64 KiB of pointers each for slots[] and streams[]. */
  CUBERT_CPU_MAX_STREAMS = 2 * CUBERT_MAX_STREAMS_LIMIT,
  CUBERT_CPU_MASK_WORDS = CUBERT_CPU_MAX_STREAMS / 64,
  CUBERT_CPU_CHUNKS_PER_PARTICIPANT = 8,
  CUBERT_CPU_TAIL_SPLIT = 4, /* the last round of chunks is cut this much finer (scheduler.c) */
  CUBERT_CPU_MAX_CHUNKS = 0xffff, /* the claim word holds 16-bit chunk indexes */
  CUBERT_CPU_HELPER_RUNNERS = 4,  /* host threads that can run SYNC_CUBE cubes at once */
  CUBERT_CPU_GRACE_NS = 2000,     /* head start of a launching thread, in ns (scheduler.c) */
  CUBERT_CPU_INLINE_BINDINGS = 8, /* arrays kept inside the record; larger launches allocate */
  CUBERT_CPU_INLINE_INFO = 16,
  CUBERT_CPU_MAX_UNITS_PER_CUBE = 1024,
};

typedef struct cubert_cpu_device cubert_cpu_device;
typedef struct cubert_cpu_job cubert_cpu_job;

/* Pause hint for spin loops. */
#if defined(__x86_64__) || defined(__i386__)
#define cubert_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cubert_cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cubert_cpu_relax() ((void)0)
#endif

/* The stream lock: a test-and-test-and-set spin lock that yields after a while. Its critical
   sections are a few pointer updates, and the submitter and the completing worker take it once
   per launch each: a pthread mutex would put both to sleep in the kernel whenever they meet,
   which costs microseconds per launch. Yielding bounds the waste when the holder is preempted. */
typedef struct cubert_cpu_lock {
  _Atomic int held;
} cubert_cpu_lock;

static inline void cubert_cpu_lock_acquire(cubert_cpu_lock *lock) {
  for (unsigned spins = 0;;) {
    if (!atomic_exchange_explicit(&lock->held, 1, memory_order_acquire)) return;
    while (atomic_load_explicit(&lock->held, memory_order_relaxed)) {
      if (++spins < 256)
        cubert_cpu_relax();
      else
        sched_yield();
    }
  }
}

static inline void cubert_cpu_lock_release(cubert_cpu_lock *lock) {
  atomic_store_explicit(&lock->held, 0, memory_order_release);
}

typedef enum cubert_cpu_job_kind {
  CUBERT_CPU_JOB_LAUNCH = 0,
  CUBERT_CPU_JOB_WAIT = 1, /* completes when wait_stream->completed >= wait_target */
  /* An asynchronous read: copies bindings[0] to read_dst when it reaches the head of the queue
     (on the thread that completed the previous command), unless an error is pending. */
  CUBERT_CPU_JOB_READ = 2,
  /* A copy on the device: bindings[0] to bindings[1] when it reaches the head of the queue,
     unless an error is pending. */
  CUBERT_CPU_JOB_COPY = 3,
} cubert_cpu_job_kind;

/* One queued command. Records are type-stable: they are recycled through the device's free
   stack and freed only when the device is destroyed, so a participant holding a stale pointer
   read from a slot can still read and CAS the claim word safely (see README.md "Records"). */
struct cubert_cpu_job {
  /* The claim word, read by every idle participant and CASed by claimers: a line of its own.
     Bits 0-15: next chunk to claim; 16-31: chunk count; 32: cube mode; 33-63: generation,
     bumped each time the record starts a launch, so a claim on a stale pointer fails. */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t claim;
  /* Chunks finished: the participant that completes the count finishes the launch. */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t done_chunks;
  _Atomic uint32_t failed;       /* a failure of this launch was reported */
  _Atomic uint32_t abandoned;    /* its execution resources were refused: cubes left are skipped */
  _Atomic uint64_t published_ns; /* when the launch was published (a hint for workers) */

  /* Description: written before publication, read-only while published. */
  _Alignas(CUBERT_CPU_LINE) cubert_cpu_job_kind kind;
  cubert_server_stream *stream;
  uint64_t submitter;       /* the stream id that queued it: its errors go to that id */
  cubert_cpu_job *next;     /* stream queue, free stack or spare list */
  cubert_cpu_job *all_next; /* the device's list of every record */
  const cubert_kernel_def *kernel;
  uint32_t cube_count[3], cube_dim[3];
  int cube_mode; /* each cube runs on one participant (SYNC_CUBE, PHASED or shared memory) */
  uint32_t mode; /* cubert_execution_mode of the launch */
  /* Shared memory per cube: the static struct, then the dynamic array at dynamic_offset (the
     struct rounded up to CUBERT_DYNAMIC_SHARED_ALIGN); shared_bytes covers both. */
  uint64_t shared_bytes;
  uint64_t dynamic_offset;
  uint64_t dynamic_bytes;
  /* Validate mode with CUBERT_VALIDATE_SEED: one chunk, its cubes and units in the seeded
     order (order.h). */
  int shuffle;
  uint64_t units_per_cube;
  uint64_t item_count;  /* units, or cubes in cube mode */
  uint64_t chunk_items; /* items per chunk, for chunks [0, head_chunks) */
  uint64_t tail_begin;  /* = head_chunks * chunk_items: where the tail's smaller chunks start */
  uint64_t tail_chunk_items; /* items per chunk from chunk head_chunks on */
  uint32_t head_chunks;
  uint32_t binding_count, info_count;
  int has_dynamic_count;
  cubert_binding dynamic_count;
  cubert_binding *bindings;
  void **buffers;
  uint64_t *buffer_bytes;
  uint64_t *info;
  void *heap_arrays; /* arrays of launches larger than the inline ones, kept for reuse */
  uint32_t heap_binding_capacity, heap_info_capacity;
  cubert_status skip_error; /* reported when the launch is dropped at activation */
  /* Validate mode with the kernel sanitizer: the launch's buffer shadow (san_buffers.c), built
     by the first participant that runs a chunk, freed when the launch finishes. */
  _Atomic uint32_t san_state;
  struct cubert_cpu_san_launch *san_launch;
  /* The private-memory check's zeroed run of the finished launch, whose chunks every
     participant claims like the launch's (scheduler.c); NULL: the launch's own chunks. */
  struct cubert_cpu_san_twin *san_twin;
  cubert_server_stream *wait_stream;
  uint64_t wait_target;
  void *read_dst; /* CUBERT_CPU_JOB_READ: the host destination of bindings[0] */
  cubert_binding inline_bindings[CUBERT_CPU_INLINE_BINDINGS];
  void *inline_buffers[CUBERT_CPU_INLINE_BINDINGS];
  uint64_t inline_buffer_bytes[CUBERT_CPU_INLINE_BINDINGS];
  uint64_t inline_info[CUBERT_CPU_INLINE_INFO];
};

struct cubert_server_stream {
  cubert_cpu_device *device;
  cubert_stream_errors *errors;
  _Atomic uint32_t refs; /* the core's, plus one per event and per wait record naming it */
  uint32_t slot;         /* index of its publication slot */

  /* Queue state, under `lock`: pushed by the submitting thread, popped by whoever finishes the
     running command. */
  cubert_cpu_lock lock;
  cubert_cpu_job *head, *tail;      /* queued, not started */
  cubert_cpu_job *running;          /* the started command, or NULL */
  int published;                    /* the slot holds a job of this stream */
  cubert_server_stream *blocked_on; /* head is a wait for this stream, not yet satisfied */

  /* Submit side: touched only by the thread submitting to this stream (the core serialises
     those with its device lock). A line of its own, away from the lock the workers take.
     `submitted` counts the commands queued so far (others read it for events). */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t submitted;
  uint64_t completed_seen; /* a recent value of `completed` (queue bound) */
  cubert_cpu_job *spare;   /* records ready for the next launches */

  /* Completion side: its own cache line, polled by waiters. */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t completed; /* commands finished, in order */
  _Atomic uint32_t blocked_waiters; /* streams blocked on a wait for this stream */
};

/* One thread that runs chunks: a worker, or a host thread waiting in sync/event_sync. */
typedef struct cubert_cpu_participant {
  cubert_cpu_device *device;
  uint32_t index; /* where it starts scanning the slots (spreads participants) */
  int is_worker;
  cubert_server_stream *prefer; /* a host thread's stream: it runs that stream's work first */
  int helper_runner;            /* index of a borrowed helper runner, -1 when none */
  cubert_cpu_runner *runner;    /* fibers + shared memory for cube-mode launches, or NULL until
                                   a cube-mode launch first needs it */
  /* Workers: when the small launches they left to the launching thread (see run_job) become
     theirs to take, in cubert_now_ns() time; 0 when none. */
  uint64_t grace_until_ns;
} cubert_cpu_participant;

typedef struct cubert_cpu_worker {
  _Alignas(CUBERT_CPU_LINE) cubert_cpu_participant part;
  pthread_t thread;
  uint32_t core; /* topology core it is pinned to */
  int pinned;
} cubert_cpu_worker;

typedef struct cubert_cpu_helper_runner {
  _Atomic int busy;
  cubert_cpu_runner *runner;
} cubert_cpu_helper_runner;

struct cubert_cpu_device {
  cubert_server base; /* first member: the core sees a cubert_server */
  cubert_cpu_topology topology;
  uint32_t threads;      /* threads that run kernels: workers + the waiting caller */
  uint32_t worker_count; /* pinned workers */
  int caller_helps;      /* host threads in sync run chunks too */
  cubert_cpu_worker *workers;
  _Atomic int stopping;

  cubert_cpu_eventcount work_ec; /* workers sleep here when no chunk is claimable */
  cubert_cpu_eventcount done_ec; /* host waiters sleep here; notified on every completion */

  /* Publication: slot i holds the running launch of the stream with slot i; bit i of `active`
     says the slot is worth a look. Written under that stream's lock, read by everyone. */
  _Atomic(cubert_cpu_job *) slots[CUBERT_CPU_MAX_STREAMS];
  /* Bumped at every publication: idle workers poll this one line instead of the slots, so the
     lines a launch writes (slot, mask, claim word) are not shared by every spinning thread. */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t publish_seq;
  _Atomic uint64_t graced_seq; /* publications by a submitter: workers look after the grace */
  _Alignas(CUBERT_CPU_LINE) _Atomic uint64_t active[CUBERT_CPU_MASK_WORDS];
  _Atomic uint32_t mask_words; /* words of `active` in use */

  pthread_mutex_t registry_lock; /* streams[] and slot allocation */
  cubert_server_stream *streams[CUBERT_CPU_MAX_STREAMS];
  uint32_t stream_high; /* 1 + highest slot ever used */

  _Atomic(cubert_cpu_job *) free_jobs; /* Treiber stack: pushed by anyone, taken whole */
  pthread_mutex_t jobs_lock;           /* all_jobs */
  cubert_cpu_job *all_jobs;

  cubert_cpu_helper_runner helper_runners[CUBERT_CPU_HELPER_RUNNERS];
  _Atomic uint64_t next_storage_id;
  cubert_cpu_undefined undefined; /* buffer bytes nothing wrote yet (the kernel sanitizer) */
  /* Test-only: execution-time allocations still to refuse (cubert_cpu_debug_fail_allocations). */
  _Atomic uint32_t fail_allocations;
};

/* Cache-line aligned allocation (C11 aligned_alloc wants the size rounded to the alignment). */
static inline void *cubert_cpu_alloc_lines(size_t bytes) {
  size_t rounded = (bytes + CUBERT_CPU_LINE - 1) & ~(size_t)(CUBERT_CPU_LINE - 1);
  return rounded >= bytes ? aligned_alloc(CUBERT_CPU_LINE, rounded ? rounded : CUBERT_CPU_LINE)
                          : NULL;
}

static inline cubert_cpu_device *cubert_cpu_device_of(cubert_server *server) {
  return (cubert_cpu_device *)server;
}

#endif /* CUBERT_CPU_SERVER_H */

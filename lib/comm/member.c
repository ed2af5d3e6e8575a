/* cubert — a member thread's share of a job: the chunk pipeline.

   For chunk k every local member stages its input out of its device (several chunks ahead,
   CUBERT_COMM_DEPTH slots), then all of them meet: each combines its part of the chunk through
   the transport (in-process: part m reduces 1/N of the elements over all members' inputs and
   writes them to every member's output buffer), they meet again, and each stages the result
   into its device. The meeting points are counters per member (out_done, part_done, in_done)
   under comm->mu. A failure anywhere sets job->failed; everyone stops at the next meeting
   point, waits for its own copies in flight and leaves.

   Stage-ins are started, not waited for: the member goes on to chunk k+1's combination while
   chunk k's write is on its way, and waits for it only when its slot comes round again (chunk
   k + CUBERT_COMM_DEPTH). When every member receives the same result (all_reduce, broadcast,
   all_gather) the combination writes it once, into the communicator's shared slot, and every
   staged member writes its device from there.

   Bytes per member and collective (all_reduce of S bytes): S device->host and S host->device,
   whatever N: the staged-copy peak of the device is the bound, and per-member bandwidth does
   not fall with N (README.md: why not a device ring). */
#include "comm/member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "base/thread_team.h"
#include "comm/device_combine.h"
#include "comm/engine.h"
#include "comm/legs.h"
#include "comm/submit.h"
#include "cubert/config.h"
#include "trace.h"

static int needs_input(const cubert_comm *comm, const comm_job *job, size_t m) {
  size_t rank = comm->rank + m;
  switch (job->kind) {
    case CUBERT_COMM_BROADCAST:
      return rank == job->root;
    case CUBERT_COMM_RECV:
      return 0;
    case CUBERT_COMM_SEND:
      return rank == job->self;
    default:
      return 1;
  }
}

static int needs_output(const cubert_comm *comm, const comm_job *job, size_t m) {
  size_t rank = comm->rank + m;
  switch (job->kind) {
    case CUBERT_COMM_REDUCE:
      return rank == job->root;
    case CUBERT_COMM_BROADCAST:
      return rank != job->root;
    case CUBERT_COMM_SEND:
      return 0;
    case CUBERT_COMM_RECV:
      return rank == job->self;
    default:
      return 1;
  }
}

/* ---- CUBERT_TRACE: the phases of each chunk ------------------------------------------------ */

/* A member thread's phases appear in its device's track group (trace.c), on track
   COMM_TRACE_TRACK + its rank (the streams' tracks are their slot numbers): where the time of a
   collective goes, chunk by chunk. */
#define COMM_TRACE_TRACK 1000u

typedef struct phase_clock {
  int on;
  uint64_t start; /* host ns the current phase began */
} phase_clock;

static phase_clock phase_start(void) {
  const char *path = cubert_config_get()->trace_path;
  phase_clock c = {.on = path && *path};
  if (c.on) c.start = cubert_now_ns();
  return c;
}

/* Ends the current phase as `what` and starts the next. */
static void phase_end(phase_clock *c, const cubert_comm *comm, const comm_job *job, size_t m,
                      const char *what) {
  if (!c->on) return;
  uint64_t now = cubert_now_ns();
  char name[96];
  snprintf(name, sizeof name, "%s #%llu: %s", cubert_comm_kind_name(job->kind),
           (unsigned long long)job->sequence, what);
  cubert_trace_record(comm->members[m].device, name, c->start, now - c->start,
                      COMM_TRACE_TRACK + (uint32_t)(comm->rank + m));
  c->start = now;
}

/* ---- the combination of one chunk, split over the member's team --------------------------- */

typedef struct team_combine {
  cubert_comm *comm;
  const cubert_comm_chunk *chunk;
  size_t member, count;
  cubert_status errors[CUBERT_COMM_MAX_THREADS];
} team_combine;

/* Team member `index` combines part member * count + index of local_count * count, where count
   is the communicator's team size (every member thread splits alike, or the parts of the
   kinds that split by piece would not cover the chunk); a team that started more threads
   leaves the extra ones idle. */
static void team_combine_part(void *arg, size_t index, size_t started) {
  (void)started;
  team_combine *t = arg;
  cubert_comm_transport *tr = t->comm->transport;
  t->errors[index] = index < t->count
                         ? tr->vtable->combine(tr, t->chunk, t->member * t->count + index,
                                               t->comm->local_count * t->count)
                         : NULL;
}

static cubert_status combine(cubert_comm *comm, const cubert_comm_chunk *chunk, size_t m) {
  cubert_thread_team *team = comm->members[m].team;
  size_t count = comm->team_size;
  if (count < 2 || chunk->count * chunk->elem_size < CUBERT_COMM_SPLIT_MIN)
    return comm->transport->vtable->combine(comm->transport, chunk, m, comm->local_count);
  team_combine t = {.comm = comm, .chunk = chunk, .member = m, .count = count};
  cubert_thread_team_run(team, team_combine_part, &t);
  count = cubert_thread_team_size(team);
  cubert_status s = NULL;
  for (size_t i = 0; i < count; ++i) {
    if (!s)
      s = t.errors[i];
    else
      cubert_status_free(t.errors[i]);
  }
  return s;
}

int cubert_comm_job_direct(const cubert_comm *comm, const comm_job *job) {
  for (size_t i = 0; i < comm->local_count; ++i) {
    const comm_leg *leg = &job->legs[i];
    if (needs_input(comm, job, i) && !cubert_comm_input_direct(job, leg)) return 0;
    if (needs_output(comm, job, i) && !cubert_comm_output_direct(job, leg)) return 0;
  }
  return 1;
}

static void *input_at(const cubert_comm *comm, const comm_job *job, size_t i, size_t k) {
  const comm_leg *leg = &job->legs[i];
  if (!needs_input(comm, job, i)) return NULL;
  if (cubert_comm_input_direct(job, leg))
    return cubert_comm_host_at(&leg->src, k * job->chunk * job->es);
  return comm->members[i].in_buf[k % CUBERT_COMM_DEPTH];
}

/* The member whose output slot the combination writes for every staged member, or
   local_count when each member has its own (kinds whose members receive different results, a
   communicator without shared slots, or no staged output). */
static size_t shared_writer(const cubert_comm *comm, const comm_job *job) {
  if (!comm->shared_out[0] ||
      (job->kind != CUBERT_COMM_ALL_REDUCE && job->kind != CUBERT_COMM_BROADCAST &&
       job->kind != CUBERT_COMM_ALL_GATHER))
    return comm->local_count;
  for (size_t i = 0; i < comm->local_count; ++i)
    if (needs_output(comm, job, i) && !cubert_comm_output_direct(job, &job->legs[i])) return i;
  return comm->local_count;
}

/* Where the combination writes member i's output of chunk k: its device memory in place, its
   staging slot, the shared slot (the shared writer), or nowhere (the other staged members of
   a shared result, and members without output). */
static void *output_at(const cubert_comm *comm, const comm_job *job, size_t i, size_t k,
                       size_t writer) {
  const comm_leg *leg = &job->legs[i];
  if (!needs_output(comm, job, i)) return NULL;
  if (cubert_comm_output_direct(job, leg))
    return cubert_comm_host_at(&leg->dst, k * job->chunk * job->es);
  if (writer < comm->local_count)
    return i == writer ? comm->shared_out[k % CUBERT_COMM_DEPTH] : NULL;
  return comm->members[i].out_buf[k % CUBERT_COMM_DEPTH];
}

static cubert_status stage_out(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                               comm_copy *reads) {
  comm_leg *leg = &job->legs[m];
  if (!needs_input(comm, job, m) || cubert_comm_input_direct(job, leg)) return NULL;
  comm_member *mem = &comm->members[m];
  size_t offset = 0, n = 0, es = job->es;
  cubert_comm_chunk_span(job, k, &offset, &n);
  char *host = mem->in_buf[k % CUBERT_COMM_DEPTH];
  for (size_t p = 0; p < job->pieces_in; ++p)
    CUBERT_RETURN_IF_ERROR(cubert_comm_leg_read(mem, &leg->src, (p * job->count + offset) * es,
                                                host + p * n * es, n * es, &reads[p]));
  return NULL;
}

static cubert_status stage_in(cubert_comm *comm, comm_job *job, size_t m, size_t k, size_t writer,
                              comm_copy *writes) {
  comm_leg *leg = &job->legs[m];
  if (!needs_output(comm, job, m) || cubert_comm_output_direct(job, leg)) return NULL;
  comm_member *mem = &comm->members[m];
  size_t offset = 0, n = 0, es = job->es;
  cubert_comm_chunk_span(job, k, &offset, &n);
  const char *host = writer < comm->local_count ? comm->shared_out[k % CUBERT_COMM_DEPTH]
                                                : mem->out_buf[k % CUBERT_COMM_DEPTH];
  for (size_t p = 0; p < job->pieces_out; ++p)
    CUBERT_RETURN_IF_ERROR(cubert_comm_leg_write(mem, &leg->dst, (p * job->count + offset) * es,
                                                 host + p * n * es, n * es, &writes[p]));
  return NULL;
}

/* Waits for the stage-in of one slot (job->pieces_out copies); the first error. */
static cubert_status wait_copies(comm_member *mem, comm_copy *copies, size_t count) {
  cubert_status s = NULL;
  for (size_t i = 0; i < count; ++i) {
    cubert_status e = cubert_comm_leg_wait(mem, &copies[i]);
    if (!s)
      s = e;
    else
      cubert_status_free(e);
  }
  return s;
}

static size_t leg_field(const comm_leg *leg, int which) {
  return which == 0 ? leg->out_done : which == 1 ? leg->part_done : leg->in_done;
}

/* Waits until every leg's counter `which` (0 out_done, 1 part_done, 2 in_done) reached
   `target`. 0 when the job failed meanwhile. */
static int wait_all(cubert_comm *comm, comm_job *job, int which, size_t target) {
  int ok = 1;
  pthread_mutex_lock(&comm->mu);
  for (;;) {
    if (atomic_load(&job->failed)) {
      ok = 0;
      break;
    }
    size_t i = 0;
    while (i < comm->local_count && leg_field(&job->legs[i], which) >= target) ++i;
    if (i == comm->local_count) break;
    pthread_cond_wait(&comm->cv, &comm->mu);
  }
  pthread_mutex_unlock(&comm->mu);
  return ok;
}

static void progress(cubert_comm *comm, size_t *field, size_t value) {
  pthread_mutex_lock(&comm->mu);
  *field = value;
  pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
}

/* The job for messages: the send or recv with its ranks and tag, else the collective's
   sequence number. */
static void job_label(const comm_job *job, char *buf, size_t size) {
  if (job->kind == CUBERT_COMM_SEND)
    snprintf(buf, size, "the send from rank %zu to rank %zu (tag %d, call #%llu)", job->self,
             job->peer, job->tag, (unsigned long long)job->sequence);
  else if (job->kind == CUBERT_COMM_RECV)
    snprintf(buf, size, "the recv at rank %zu from rank %zu (tag %d, call #%llu)", job->self,
             job->peer, job->tag, (unsigned long long)job->sequence);
  else
    snprintf(buf, size, "collective #%llu", (unsigned long long)job->sequence);
}

/* The start of a member's run: the caller's earlier work on src and dst (its stream, and the
   streams its stream waited for) is done before any byte moves; then the staging copies of
   `depth` slots (`pieces` reads and `pieces_out` writes each). A failure fails the job (the
   arrays may be NULL then, and the run goes on to meet the other members). */
static void member_begin(cubert_comm *comm, comm_job *job, size_t m, size_t pieces,
                         size_t pieces_out, comm_copy **out_reads, comm_copy **out_writes) {
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  const size_t depth = CUBERT_COMM_DEPTH;
  cubert_status s = NULL;
  if (leg->ready) {
    s = mem->server->vtable->event_sync(mem->server, leg->ready);
    /* A server may complete the event behind a failed command and report the failure only to
       the stream's error queue (the CPU server does): the queue decides too. The failure stays
       queued for the stream's next flush, sync or read. */
    if (!s && cubert_stream_errors_pending_for(leg->errors, leg->stream))
      s = cubert_status_make(CUBERT_CODE_EXECUTION,
                             "a command queued before it on stream %llu failed (that stream's "
                             "next flush, sync or read returns the error)",
                             (unsigned long long)leg->stream);
    if (s) {
      char what[96];
      job_label(job, what, sizeof what);
      s = cubert_status_wrap(CUBERT_CODE_EXECUTION, s,
                             "%s: member %zu's stream had failed before it, so the job moved no "
                             "data",
                             what, comm->rank + m);
    }
  }
  comm_copy *reads = NULL, *writes = NULL;
  if (!s && job->chunks) {
    reads = calloc(depth * pieces, sizeof *reads);
    writes = calloc(depth * (pieces_out ? pieces_out : 1), sizeof *writes);
    if (!reads || !writes)
      s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  if (s) cubert_comm_job_fail(comm, job, s);
  *out_reads = reads;
  *out_writes = writes;
}

/* The host combine's pointer arrays (room for local_count each); a failure fails the job. */
static void host_arrays(cubert_comm *comm, comm_job *job, const void ***out_ins, void ***out_outs) {
  *out_ins = calloc(comm->local_count ? comm->local_count : 1, sizeof **out_ins);
  *out_outs = calloc(comm->local_count ? comm->local_count : 1, sizeof **out_outs);
  if (!*out_ins || !*out_outs)
    cubert_comm_job_fail(comm, job,
                         cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed"));
}

/* Stage-outs run ahead: the reads of chunks *next_out.. up to (not including) chunk `until`
   start into their slots (on the device's path when `on_device`) (`pieces` reads each, slot j %
   depth). Slot j % depth was last read by chunk j - depth's parts, which every member finished
   before this thread's part of the current chunk (wait_all in the caller). */
static cubert_status stage_outs_ahead(cubert_comm *comm, comm_job *job, size_t m, int on_device,
                                      size_t until, comm_copy *reads, size_t pieces,
                                      size_t *next_out) {
  const size_t depth = CUBERT_COMM_DEPTH;
  cubert_status s = NULL;
  while (!s && *next_out < job->chunks && *next_out < until) {
    comm_copy *slot_reads = &reads[(*next_out % depth) * pieces];
    s = on_device ? cubert_comm_device_stage_out(comm, job, m, *next_out, slot_reads)
                  : stage_out(comm, job, m, *next_out, slot_reads);
    ++*next_out;
  }
  return s;
}

/* Chunk k combined on the host: every local member's input and output of the chunk (`ins`,
   `outs`: room for local_count each) through the transport's combine. */
static cubert_status host_combine(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                  size_t writer, const void **ins, void **outs) {
  size_t offset = 0, n = 0;
  cubert_comm_chunk_span(job, k, &offset, &n);
  for (size_t i = 0; i < comm->local_count; ++i) {
    ins[i] = input_at(comm, job, i, k);
    outs[i] = output_at(comm, job, i, k, writer);
  }
  cubert_comm_chunk chunk = {
      .kind = job->kind,
      .dtype = job->dtype,
      .op = job->op,
      .elem_size = job->es,
      .root = job->root,
      .peer = job->peer,
      .self = job->self,
      .message = job->message,
      .tag = job->tag,
      .sequence = job->sequence,
      .index = k,
      .chunks = job->chunks,
      .offset = offset,
      .count = n,
      .total = job->count,
      .in = ins,
      .out = outs,
  };
  return combine(comm, &chunk, m);
}

/* Chunk k's part on the device, started; *part is the part in flight (chunk k - 1's, waited
   for here first when there is one) and holds chunk k's on return. */
static cubert_status device_part(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                 comm_copy *part) {
  comm_member *mem = &comm->members[m];
  comm_copy next = {NULL};
  cubert_status s = cubert_comm_device_part(comm, job, m, k, &next);
  if (s) {
    cubert_status_free(cubert_comm_leg_wait(mem, &next));
    return s;
  }
  /* `part` (chunk k - 1) is still waited for below; keep both */
  if (k == 0) {
    *part = next;
    return NULL;
  }
  /* finish chunk k - 1 first, then hold chunk k's */
  s = cubert_comm_leg_wait(mem, part);
  *part = next;
  return s;
}

/* The end of a member's run: copies still in flight use our staging slots and the shared ones,
   so they are waited for before the slots are reused or freed (a failed job still waits; only
   the first error counts), then the member's stream is drained. */
static void member_end(cubert_comm *comm, comm_job *job, size_t m, comm_copy *reads,
                       size_t read_count, comm_copy *writes, size_t write_count) {
  comm_member *mem = &comm->members[m];
  if (reads)
    for (size_t i = 0; i < read_count; ++i)
      cubert_status_free(cubert_comm_leg_wait(mem, &reads[i]));
  if (writes) {
    cubert_status s = wait_copies(mem, writes, write_count);
    if (s) cubert_comm_job_fail(comm, job, s);
  }
  free(reads);
  free(writes);
  cubert_status s = cubert_comm_leg_drain(mem);
  if (s) cubert_comm_job_fail(comm, job, s);
}

void cubert_comm_member_run(cubert_comm *comm, comm_job *job, size_t m) {
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  size_t depth = CUBERT_COMM_DEPTH;
  const int on_device = cubert_comm_device_combine(comm, job);
  /* copies per slot: one per piece, two around the own piece with device combination */
  size_t pieces = on_device ? 2 : job->pieces_in, pieces_out = on_device ? 2 : job->pieces_out;
  size_t writer = shared_writer(comm, job);
  phase_clock clock = phase_start();
  comm_copy *reads = NULL, *writes = NULL;
  member_begin(comm, job, m, pieces, pieces_out, &reads, &writes);
  cubert_status s = NULL;
  phase_end(&clock, comm, job, m, "wait for the caller's stream");

  size_t next_out = 0;
  const void **ins = NULL;
  void **outs = NULL;
  host_arrays(comm, job, &ins, &outs);
  /* With device combination chunk k's part runs on the device while the thread finishes
     chunk k - 1 (lag 1): it waits for part k - 1, meets the others and starts that chunk's
     stage-in, then goes on to chunk k + 1. */
  const size_t lag = on_device ? 1 : 0;
  comm_copy part = {NULL}; /* the device part in flight (chunk k - 1 at the top of iteration k) */
  for (size_t k = 0; k < job->chunks + lag && !atomic_load(&job->failed); ++k) {
    s = stage_outs_ahead(comm, job, m, on_device, k + depth - lag, reads, pieces, &next_out);
    if (s) break;
    if (k < job->chunks) {
      for (size_t p = 0; p < pieces && !s; ++p)
        s = cubert_comm_leg_wait(mem, &reads[(k % depth) * pieces + p]);
      if (s) break;
      phase_end(&clock, comm, job, m, "stage out (wait for the read)");
      progress(comm, &leg->out_done, k + 1);
      /* Inputs of chunk k are in. The output slots of chunk k (this member's, the others', the
         shared one) are free once every member's stage-in of chunk k - depth completed: first
         our own, then everyone's. */
      if (!wait_all(comm, job, 0, k + 1)) break;
      if (k >= depth) {
        s = wait_copies(mem, &writes[(k % depth) * pieces_out], pieces_out);
        if (s) break;
        progress(comm, &leg->in_done, k + 1 - depth);
        if (!wait_all(comm, job, 2, k + 1 - depth)) break;
      }
      phase_end(&clock, comm, job, m, "wait for every member's input and free slots");
      if (on_device) {
        s = device_part(comm, job, m, k, &part);
        if (s) break;
        phase_end(&clock, comm, job, m, "combine on the device (the previous chunk's part)");
      } else {
        s = host_combine(comm, job, m, k, writer, ins, outs);
        if (s) break;
        phase_end(&clock, comm, job, m, "combine");
      }
    } else {
      /* the last chunk's device part */
      s = cubert_comm_leg_wait(mem, &part);
      if (s) break;
      phase_end(&clock, comm, job, m, "combine on the device (the last chunk's part)");
    }
    if (k < lag) continue;
    /* chunk d = k - lag: every member's part is in the shared slot; its stage-in starts */
    size_t d = k - lag;
    progress(comm, &leg->part_done, d + 1);
    if (!wait_all(comm, job, 1, d + 1)) break;
    phase_end(&clock, comm, job, m, "wait for every member's part");
    comm_copy *slot_writes = &writes[(d % depth) * pieces_out];
    s = on_device ? cubert_comm_device_stage_in(comm, job, m, d, slot_writes)
                  : stage_in(comm, job, m, d, writer, slot_writes);
    if (s) break;
    phase_end(&clock, comm, job, m, "stage in (start the write)");
  }
  cubert_status_free(cubert_comm_leg_wait(mem, &part));
  if (s) cubert_comm_job_fail(comm, job, s);
  member_end(comm, job, m, reads, depth * pieces, writes, depth * pieces_out);
  free(ins);
  free(outs);
  phase_end(&clock, comm, job, m, "wait for the last writes");
}

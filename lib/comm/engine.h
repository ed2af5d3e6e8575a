/* cubert — the communicator engine (engine.c): the communicator, its members and its jobs, and the
   worker that runs the jobs in order (internal; README.md explains the design).

   A communicator has one WORKER thread and one MEMBER thread per local member. A call
   (submit.c) validates, orders the collective on each member client's calling stream (an
   event "src ready" recorded on that stream, then a gate the stream waits for) and queues a
   job. The worker (engine.c) takes jobs in order and hands each to every member thread at
   once; member threads (member.c) move the job's chunks: stage out of the device into host
   memory (legs.c), combine through the transport (transport.h), stage back in. When every
   member thread is done the worker opens the gates (with the job's error, if any). */
#ifndef CUBERT_COMM_ENGINE_H
#define CUBERT_COMM_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/thread_team.h"
#include "comm/transport.h"
#include "cubert/comm.h"
#include "cubert/server.h"
#include "cubert/server/gates.h"
#include "cubert/stream.h"
#include "device.h"

/* Chunks in flight per member: the stage-out of chunk k+1.. overlaps the combine and the
   stage-in of chunk k. */
#define CUBERT_COMM_DEPTH 4
/* Bytes of one member's staged chunk (default; CUBERT_COMM_CHUNK_BYTES overrides it). On two
   H200s the device combination moved 256 MiB at 25 GB/s in 4 MiB chunks, 35 GB/s in 8 MiB and
   33 GB/s in 16 MiB (docs/benchmarks-history.md, "Collectives in one process"): per-chunk costs
   (meetings, command latencies) are paid 32 times per 256 MiB instead of 64. */
#define CUBERT_COMM_CHUNK_BYTES (8u << 20)
/* At most this many threads combine one member's part (CUBERT_COMM_THREADS may ask for up to
   this many); chunks below CUBERT_COMM_SPLIT_MIN bytes are combined by the member thread alone
   (a wake-up costs ~10 us). */
#define CUBERT_COMM_MAX_THREADS 16
#define CUBERT_COMM_SPLIT_MIN (256u << 10)

typedef struct comm_member {
  cubert_client *client; /* retained */
  cubert_device *device;
  cubert_server *server;
  /* Private streams of the member's device: stage-outs on one, stage-ins on the other, so
     the two directions overlap (and never queue behind the caller's gated stream). */
  cubert_server_stream *out_stream, *in_stream;
  cubert_stream_errors *out_errors, *in_errors;
  /* Host staging, CUBERT_COMM_DEPTH slots each of buf_bytes: pinned for this device where
     the server offers it (server->pinned), else aligned host memory. */
  void *in_buf[CUBERT_COMM_DEPTH], *out_buf[CUBERT_COMM_DEPTH];
  size_t buf_bytes;
  int pinned; /* the buffers came from host_alloc */
  pthread_t thread;
  uint64_t seen; /* the last job generation this member thread ran */
  /* Threads that share this member thread's part of each chunk's combination (the member
     thread is one of them; NULL: it combines alone). */
  cubert_thread_team *team;
  /* Device combination (README.md), where the server has comm_reduce (in-process
     communicators only): a third private stream that stages the other members' pieces into
     `scratch` (one chunk of device memory, held through `scratch_handle`), reduces and reads
     the result back; scratch.slice is NULL without it. */
  cubert_server_stream *combine_stream;
  cubert_stream_errors *combine_errors;
  cubert_handle *scratch_handle;
  cubert_binding scratch;
} comm_member;

/* One job's work for one local member. */
typedef struct comm_leg {
  cubert_binding src, dst;
  int has_src, has_dst;
  cubert_event *ready; /* on the caller's stream, before the gate: src/dst's earlier users */
  cubert_gate *gate;   /* on the caller's stream */
  /* The caller's stream: its slot's error queue and its id. A failure of the stream's work
     queued before the job (pushed there, tagged with the id) fails the job before any byte of
     it moves (member.c). */
  cubert_stream_errors *errors;
  cubert_stream_id stream;
  /* progress, in chunks (comm->mu) */
  size_t out_done, part_done, in_done;
} comm_leg;

typedef struct comm_job {
  cubert_comm_kind kind;
  cubert_dtype dtype;
  cubert_reduce_op op;
  size_t es;     /* element bytes */
  size_t root;   /* rank (broadcast, reduce) */
  size_t peer;   /* rank (send, recv) */
  size_t self;   /* rank of the local member that sends / receives (send, recv) */
  void *message; /* the transport's p2p_post result (send, recv) */
  int tag;
  size_t count; /* elements per piece */
  size_t chunk; /* elements per piece per chunk */
  size_t chunks;
  size_t pieces_in, pieces_out; /* pieces per member in a staged input / output chunk */
  uint64_t sequence;
  comm_leg *legs;      /* [local_count] */
  cubert_status error; /* the first failure (comm->mu) */
  _Atomic int failed;  /* set with `error`; read without the lock to stop early */
  /* Holders of the job: the worker (until it opened the gates) and the submitting call (until
     it placed the gates, which it does after queuing the job: submit.c says why). The last
     one frees the gates, events, slices and the job (cubert_comm_job_put). */
  _Atomic int holds;
  struct comm_job *next;
} comm_job;

struct cubert_comm {
  cubert_comm_transport *transport;
  size_t size, rank, local_count;
  size_t chunk_bytes;
  /* Threads per member thread's part of a host combination: the smallest team any member
     started (thread_team.c may start fewer threads than asked), 1 without teams. */
  size_t team_size;
  int device_reduce; /* device combination allowed (CUBERT_COMM_DEVICE_REDUCE is not 0) */
  comm_member *members;
  /* Result slots every staged member's stage-in reads, for the kinds whose result is the same
     for every member (all_reduce, broadcast, all_gather): the combination writes each result
     once instead of once per member, which halves the host memory traffic of the combination
     on two devices (member.c). Pinned by the first member whose server offers host_alloc
     (shared_owner; its pinned memory is DMA'd by the other devices of the process too), or
     NULL when no member stages. */
  void *shared_out[CUBERT_COMM_DEPTH];
  comm_member *shared_owner;
  /* Held by a call while it orders its job on the members' streams and queues it, so that
     jobs are queued in the order their gates were placed. */
  pthread_mutex_t submit_mu;
  pthread_mutex_t mu; /* everything below, and the progress fields of the current job */
  pthread_cond_t cv;
  comm_job *head, *tail; /* queued jobs */
  comm_job *current;     /* the job the member threads run */
  uint64_t generation;   /* bumped when `current` is handed out */
  size_t members_done;
  uint64_t next_sequence;
  uint64_t queued, finished; /* jobs */
  int stop, members_stop;
  pthread_t worker;
  int worker_started;
  size_t members_started;
};

/* Hands a validated, ordered job to the worker (takes ownership). */
void cubert_comm_enqueue(cubert_comm *comm, comm_job *job);
/* Records `error` as the job's failure (keeps the first; ownership moves in). */
void cubert_comm_job_fail(cubert_comm *comm, comm_job *job, cubert_status error);
/* Opens every leg's gate (with a copy of the job's error), then drops the worker's hold on the
   job. No lock held. */
void cubert_comm_job_finish(cubert_comm *comm, comm_job *job);
/* Drops one hold on the job; the last frees its gates, events and slices, and the job. */
void cubert_comm_job_put(cubert_comm *comm, comm_job *job);

/* The engine's entry for a transport: a communicator whose local members are
   clients[0..local_count) (local_count == transport->local_count) and whose members talk
   through `transport` (ownership moves in, also on error: it is destroyed then). The public
   cubert_comm_create is this with the in-process transport; cubert_comm_create_mpi is this
   with the MPI one. */
cubert_status cubert_comm_create_with_transport(cubert_client *const *clients, size_t local_count,
                                                cubert_comm_transport *transport,
                                                cubert_comm **out);
/* The communicator's transport (for cubert/mpi.h's functions). */
cubert_comm_transport *cubert_comm_transport_of(cubert_comm *comm);

/* Chunk k of a job: its first element and element count (per piece). */
static inline void cubert_comm_chunk_span(const comm_job *job, size_t k, size_t *offset,
                                          size_t *n) {
  *offset = k * job->chunk;
  *n = job->count - *offset < job->chunk ? job->count - *offset : job->chunk;
}

#endif /* CUBERT_COMM_ENGINE_H */

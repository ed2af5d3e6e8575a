/* cubert — the communicator engine: creation, the worker and member threads, the job queue,
   and finishing a job (opening its gates). README.md describes the design. */
#include "comm/engine.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "base/thread_team.h"
#include "client.h"
#include "comm/inproc.h"
#include "comm/legs.h"
#include "comm/member.h"
#include "cubert/server/combine.h"
#include "cubert/server/gates.h"
#include "cubert/server/pinned.h"
#include "device.h"
#include "handle.h"
#include "stream/errors.h"

/* ---- jobs -------------------------------------------------------------------------------- */

void cubert_comm_job_fail(cubert_comm *comm, comm_job *job, cubert_status error) {
  if (!error) return;
  pthread_mutex_lock(&comm->mu);
  if (!job->error)
    job->error = error;
  else
    cubert_status_free(error);
  atomic_store(&job->failed, 1);
  pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
}

void cubert_comm_job_finish(cubert_comm *comm, comm_job *job) {
  if (job->message && comm->transport->vtable->p2p_release) {
    /* Before the next job starts: a recv queued behind this send reads how it ended. */
    pthread_mutex_lock(&comm->mu);
    comm->transport->vtable->p2p_release(comm->transport, job->kind, job->message, job->error);
    pthread_mutex_unlock(&comm->mu);
    job->message = NULL;
  }
  /* A gate not placed yet (its call is still placing the gates) opens now and lets the later
     gate_wait pass at once, with the error (server.h). */
  for (size_t i = 0; i < comm->local_count; ++i) {
    comm_leg *leg = &job->legs[i];
    cubert_server *server = comm->members[i].server;
    if (leg->gate) {
      /* comm->mu: the submitting call may still record a failure (submit.c). */
      pthread_mutex_lock(&comm->mu);
      cubert_status error = job->error ? cubert_status_clone(job->error) : NULL;
      pthread_mutex_unlock(&comm->mu);
      server->gates->open(server, leg->gate, error);
    }
  }
  cubert_comm_job_put(comm, job);
}

void cubert_comm_job_put(cubert_comm *comm, comm_job *job) {
  if (atomic_fetch_sub(&job->holds, 1) != 1) return;
  for (size_t i = 0; i < comm->local_count; ++i) {
    comm_leg *leg = &job->legs[i];
    cubert_server *server = comm->members[i].server;
    /* Without the device lock (legs.c says why): gates and events hold no server state. */
    if (leg->gate) server->gates->release(server, leg->gate);
    if (leg->ready) server->vtable->event_release(server, leg->ready);
    leg->gate = NULL;
    leg->ready = NULL;
    if (leg->has_src) cubert_slice_release(leg->src.slice);
    if (leg->has_dst) cubert_slice_release(leg->dst.slice);
    leg->has_src = leg->has_dst = 0;
  }
  cubert_status_free(job->error);
  free(job->legs);
  free(job);
}

void cubert_comm_enqueue(cubert_comm *comm, comm_job *job) {
  pthread_mutex_lock(&comm->mu);
  job->next = NULL;
  if (comm->tail)
    comm->tail->next = job;
  else
    comm->head = job;
  comm->tail = job;
  job->sequence = comm->next_sequence++;
  comm->queued++;
  pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
}

/* ---- threads ----------------------------------------------------------------------------- */

/* Takes jobs in order, hands each to every member thread, waits for them, opens the gates.
   Leaves once stopped with an empty queue (release drains the queue first). */
static void *worker_main(void *arg) {
  cubert_comm *comm = arg;
  pthread_mutex_lock(&comm->mu);
  for (;;) {
    while (!comm->head && !comm->stop) pthread_cond_wait(&comm->cv, &comm->mu);
    if (!comm->head) break;
    comm_job *job = comm->head;
    comm->head = job->next;
    if (!comm->head) comm->tail = NULL;
    comm->current = job;
    comm->members_done = 0;
    comm->generation++;
    pthread_cond_broadcast(&comm->cv);
    while (comm->members_done < comm->local_count) pthread_cond_wait(&comm->cv, &comm->mu);
    comm->current = NULL;
    pthread_mutex_unlock(&comm->mu);
    cubert_comm_job_finish(comm, job);
    pthread_mutex_lock(&comm->mu);
    comm->finished++;
    pthread_cond_broadcast(&comm->cv);
  }
  pthread_mutex_unlock(&comm->mu);
  return NULL;
}

typedef struct member_arg {
  cubert_comm *comm;
  size_t index;
} member_arg;

static void *member_main(void *arg) {
  member_arg a = *(member_arg *)arg;
  free(arg);
  cubert_comm *comm = a.comm;
  comm_member *mem = &comm->members[a.index];
  pthread_mutex_lock(&comm->mu);
  for (;;) {
    while (comm->generation == mem->seen && !comm->members_stop)
      pthread_cond_wait(&comm->cv, &comm->mu);
    if (comm->generation == mem->seen) break; /* stopped */
    mem->seen = comm->generation;
    comm_job *job = comm->current;
    pthread_mutex_unlock(&comm->mu);
    cubert_comm_member_run(comm, job, a.index);
    pthread_mutex_lock(&comm->mu);
    comm->members_done++;
    pthread_cond_broadcast(&comm->cv);
  }
  pthread_mutex_unlock(&comm->mu);
  return NULL;
}

/* ---- creation and release ---------------------------------------------------------------- */

/* A CUBERT_COMM_* size: plain decimal digits in [min, max]; unset or empty: `fallback`; a bad
   value: `fallback` with a warning, as every CUBERT_* variable (docs/environment.md). Read at
   each cubert_comm_create. */
static size_t env_size(const char *name, size_t min, size_t max, size_t fallback,
                       const char *what) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  int ok = strlen(v) <= 12;
  for (const char *p = v; ok && *p; ++p) ok = *p >= '0' && *p <= '9';
  unsigned long long n = ok ? strtoull(v, NULL, 10) : 0;
  if (ok && n >= min && n <= max) return (size_t)n;
  cubert_log(CUBERT_LOG_WARN, "config",
             "%s=\"%s\" is not valid: expected an integer in %zu..%zu (%s); using %zu", name, v,
             min, max, what, fallback);
  return fallback;
}

/* Up to 64 MiB (the staging slots are pinned memory: 12 chunks per member at most). Any size
   is safe for the device lock: the legs use read_async and write_async, which never go
   through the OpenCL server's shared staging buffer (legs.c). */
static size_t chunk_bytes_config(void) {
  return env_size("CUBERT_COMM_CHUNK_BYTES", 4096, 64u << 20, CUBERT_COMM_CHUNK_BYTES,
                  "bytes per member and chunk");
}

/* Threads per member for the host combination: CUBERT_COMM_THREADS, else a share of the CPUs:
   half of them split over the local members (the other half runs the drivers' threads and the
   staging copies), 1 to 8 each. */
static size_t team_size_config(size_t local_count) {
  size_t n = cubert_thread_team_cpus() / (2 * local_count);
  if (n < 1) n = 1;
  if (n > 8) n = 8;
  return env_size("CUBERT_COMM_THREADS", 1, CUBERT_COMM_MAX_THREADS, n,
                  "threads per member for the host reduction");
}

static void member_close(comm_member *m) {
  cubert_thread_team_destroy(m->team);
  m->team = NULL;
  if (!m->server) return;
  cubert_device_lock(m->device);
  cubert_comm_leg_buffers_free(m);
  if (m->out_stream) m->server->vtable->stream_destroy(m->server, m->out_stream);
  if (m->in_stream) m->server->vtable->stream_destroy(m->server, m->in_stream);
  if (m->combine_stream) m->server->vtable->stream_destroy(m->server, m->combine_stream);
  cubert_device_unlock(m->device);
  /* Every job drained the private streams, so nothing uses the scratch any more. */
  if (m->scratch_handle) cubert_handle_release(m->scratch_handle);
  cubert_stream_errors_destroy(m->out_errors);
  cubert_stream_errors_destroy(m->in_errors);
  cubert_stream_errors_destroy(m->combine_errors);
  m->out_stream = m->in_stream = m->combine_stream = NULL;
  m->out_errors = m->in_errors = m->combine_errors = NULL;
  m->scratch_handle = NULL;
  m->scratch.slice = NULL;
}

/* Device combination for an in-process member whose server offers it: the scratch chunk (a
   buffer of the member's client) and the third private stream. */
static cubert_status member_open_combine(comm_member *m, cubert_client *client, size_t index,
                                         size_t chunk_bytes) {
  const cubert_server_vtable *v = m->server->vtable;
  if (!m->server->combine || !m->server->transfers) return NULL;
  cubert_status s = cubert_client_empty(client, chunk_bytes, &m->scratch_handle);
  if (s)
    return cubert_status_wrap(cubert_status_code(s), s,
                              "cubert_comm_create: clients[%zu]: the %zu-byte scratch buffer of "
                              "the device combination",
                              index, chunk_bytes);
  cubert_handle_obj *o = cubert_handle_acquire(m->scratch_handle);
  if (!o) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "cubert_comm_create: scratch buffer");
  m->scratch = cubert_handle_binding(o);
  cubert_handle_release(m->scratch_handle);
  s = cubert_stream_errors_create(&m->combine_errors);
  if (s) return s;
  cubert_device_lock(m->device);
  s = v->stream_create(m->server, m->combine_errors, &m->combine_stream);
  cubert_device_unlock(m->device);
  if (s) return s;
  /* Builds the reduction kernels now (without the lock, as the member thread will call it): a
     device that cannot build them combines on the host instead of failing every job. */
  cubert_status prepared =
      m->server->combine->reduce(m->server, m->combine_stream, &m->scratch, &m->scratch,
                                 &m->scratch, 1, 0, 0, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM);
  if (prepared) {
    cubert_log(CUBERT_LOG_INFO, "comm", "clients[%zu] on '%s' combines on the host: %s", index,
               m->server->properties.name, cubert_status_message(prepared));
    cubert_status_free(prepared);
    cubert_handle_release(m->scratch_handle);
    m->scratch_handle = NULL;
    m->scratch.slice = NULL;
  }
  return NULL;
}

static cubert_status member_open(comm_member *m, cubert_client *client, size_t index,
                                 size_t chunk_bytes) {
  cubert_client_obj *c = NULL;
  cubert_status s = cubert_client_acquire(client, &c);
  if (s)
    return cubert_status_wrap(cubert_status_code(s), s, "cubert_comm_create: clients[%zu]", index);
  m->client = client; /* the acquired reference is the communicator's */
  m->device = c->device;
  m->server = c->device->server;
  const cubert_server_vtable *v = m->server->vtable;
  if (!m->server->gates)
    return cubert_status_make(
        CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
        "cubert_comm_create: clients[%zu] is on device '%s', whose server "
        "has no gates (cubert/server/gates.h) and cannot take part in collectives",
        index, m->server->properties.name);
  s = cubert_stream_errors_create(&m->out_errors);
  if (!s) s = cubert_stream_errors_create(&m->in_errors);
  if (s) return s;
  cubert_device_lock(m->device);
  s = v->stream_create(m->server, m->out_errors, &m->out_stream);
  if (!s) s = v->stream_create(m->server, m->in_errors, &m->in_stream);
  if (!s) s = cubert_comm_leg_buffers(m, chunk_bytes);
  cubert_device_unlock(m->device);
  return s;
}

/* The shared result slots (engine.h): pinned by the first member whose server offers
   host_alloc; none when no member stages (CPU servers only) or with one local member. */
static cubert_status shared_open(cubert_comm *comm) {
  if (comm->local_count < 2) return NULL;
  comm_member *owner = NULL;
  for (size_t i = 0; i < comm->local_count && !owner; ++i)
    if (comm->members[i].server->pinned) owner = &comm->members[i];
  if (!owner) return NULL;
  cubert_status s = NULL;
  cubert_device_lock(owner->device);
  for (int i = 0; i < CUBERT_COMM_DEPTH && !s; ++i)
    s = owner->server->pinned->host_alloc(owner->server, owner->buf_bytes, &comm->shared_out[i]);
  cubert_device_unlock(owner->device);
  comm->shared_owner = owner;
  return s;
}

static void shared_close(cubert_comm *comm) {
  comm_member *owner = comm->shared_owner;
  if (!owner) return;
  cubert_device_lock(owner->device);
  for (int i = 0; i < CUBERT_COMM_DEPTH; ++i) {
    if (comm->shared_out[i]) owner->server->pinned->host_free(owner->server, comm->shared_out[i]);
    comm->shared_out[i] = NULL;
  }
  cubert_device_unlock(owner->device);
  comm->shared_owner = NULL;
}

static void comm_free(cubert_comm *comm) {
  shared_close(comm);
  for (size_t i = 0; i < comm->local_count; ++i) {
    member_close(&comm->members[i]);
    if (comm->members[i].client) cubert_client_release(comm->members[i].client);
  }
  if (comm->transport) comm->transport->vtable->destroy(comm->transport);
  pthread_mutex_destroy(&comm->mu);
  pthread_mutex_destroy(&comm->submit_mu);
  pthread_cond_destroy(&comm->cv);
  free(comm->members);
  free(comm);
}

static void comm_stop(cubert_comm *comm) {
  pthread_mutex_lock(&comm->mu);
  comm->stop = 1;
  pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
  if (comm->worker_started) pthread_join(comm->worker, NULL);
  comm->worker_started = 0;
  pthread_mutex_lock(&comm->mu);
  comm->members_stop = 1;
  pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
  for (size_t i = 0; i < comm->members_started; ++i) pthread_join(comm->members[i].thread, NULL);
  comm->members_started = 0;
}

/* The arguments of cubert_comm_create_with_transport, checked before anything is built. */
static cubert_status check_create_args(cubert_client *const *clients, size_t local_count,
                                       const cubert_comm_transport *transport, cubert_comm **out) {
  if (!out)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "cubert_comm_create: out is NULL");
  if (!clients)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "cubert_comm_create: clients is NULL");
  if (local_count == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_comm_create: count is 0; a communicator needs a member");
  if (!transport)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "cubert_comm_create: no transport");
  if (transport->local_count != local_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_comm_create: %zu local clients for a transport of %zu",
                              local_count, transport->local_count);
  for (size_t i = 0; i < local_count; ++i)
    if (!clients[i])
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "cubert_comm_create: clients[%zu] is NULL", i);
  return NULL;
}

/* Opens every member on its client, and the device combination of those that reduce on their
   device. */
static cubert_status members_open(cubert_comm *comm, cubert_client *const *clients) {
  cubert_status s = NULL;
  for (size_t i = 0; !s && i < comm->local_count; ++i)
    s = member_open(&comm->members[i], clients[i], i, comm->chunk_bytes);
  /* 0: never; 1: every device whose server has comm_reduce; unset: those that are not CPUs
     (an OpenCL CPU device reduces on the cores and memory the host combination uses, and
     copies more: PoCL was 20% slower with it). */
  size_t device_reduce = env_size("CUBERT_COMM_DEVICE_REDUCE", 0, 1, 2,
                                  "1: reduce on the devices where they can, 0: on the host");
  comm->device_reduce = comm->transport->parts_split && comm->local_count > 1 && device_reduce != 0;
  for (size_t i = 0; !s && comm->device_reduce && i < comm->local_count; ++i) {
    comm_member *m = &comm->members[i];
    if (device_reduce == 2 && m->server->properties.type != CUBERT_DEVICE_TYPE_OPENCL_GPU &&
        m->server->properties.type != CUBERT_DEVICE_TYPE_OPENCL_OTHER)
      continue;
    s = member_open_combine(m, clients[i], i, comm->chunk_bytes);
  }
  return s;
}

/* One thread team per member when the transport splits its combination into parts; the
   communicator's team size is the smallest team actually started. */
static cubert_status teams_open(cubert_comm *comm) {
  size_t team = comm->transport->parts_split ? team_size_config(comm->local_count) : 1;
  comm->team_size = team;
  for (size_t i = 0; team > 1 && i < comm->local_count; ++i) {
    if (!(comm->members[i].team = cubert_thread_team_create(team)))
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    if (cubert_thread_team_size(comm->members[i].team) < comm->team_size)
      comm->team_size = cubert_thread_team_size(comm->members[i].team);
  }
  return NULL;
}

/* Starts the member threads, then the worker; comm_stop joins those that started. */
static cubert_status threads_start(cubert_comm *comm) {
  for (size_t i = 0; i < comm->local_count; ++i) {
    member_arg *a = malloc(sizeof *a);
    if (a) *a = (member_arg){comm, i};
    if (!a || pthread_create(&comm->members[i].thread, NULL, member_main, a) != 0) {
      free(a);
      return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                                "cubert_comm_create: could not start a member thread");
    }
    comm->members_started++;
  }
  if (pthread_create(&comm->worker, NULL, worker_main, comm) != 0)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "cubert_comm_create: could not start the worker thread");
  comm->worker_started = 1;
  return NULL;
}

cubert_status cubert_comm_create_with_transport(cubert_client *const *clients, size_t local_count,
                                                cubert_comm_transport *transport,
                                                cubert_comm **out) {
  if (out) *out = NULL;
  cubert_status s = check_create_args(clients, local_count, transport, out);
  cubert_comm *comm = NULL;
  if (!s && !(comm = calloc(1, sizeof *comm)))
    s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  if (s) {
    if (transport) transport->vtable->destroy(transport);
    return s;
  }
  pthread_mutex_init(&comm->mu, NULL);
  pthread_mutex_init(&comm->submit_mu, NULL);
  pthread_cond_init(&comm->cv, NULL);
  comm->transport = transport;
  comm->size = transport->size;
  comm->rank = transport->rank;
  comm->chunk_bytes = chunk_bytes_config();
  comm->members = calloc(local_count, sizeof *comm->members);
  if (!comm->members) {
    comm_free(comm);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  comm->local_count = local_count;
  s = members_open(comm, clients);
  if (!s) s = shared_open(comm);
  if (!s) s = teams_open(comm);
  if (!s) s = threads_start(comm);
  if (s) {
    comm_stop(comm);
    comm_free(comm);
    return s;
  }
  *out = comm;
  return NULL;
}

cubert_status cubert_comm_create(cubert_client *const *clients, size_t count, cubert_comm **out) {
  if (out) *out = NULL;
  if (!clients || !count || !out)
    return cubert_comm_create_with_transport(clients, count, NULL, out);
  cubert_comm_transport *t = cubert_comm_inproc_create(count);
  if (!t) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  return cubert_comm_create_with_transport(clients, count, t, out);
}

void cubert_comm_release(cubert_comm *comm) {
  if (!comm) return;
  comm_stop(comm); /* the worker drains the queue before it leaves */
  comm_free(comm);
}

size_t cubert_comm_size(const cubert_comm *comm) {
  return comm ? comm->size : 0;
}
size_t cubert_comm_local_count(const cubert_comm *comm) {
  return comm ? comm->local_count : 0;
}
size_t cubert_comm_rank(const cubert_comm *comm) {
  return comm ? comm->rank : 0;
}
cubert_comm_transport *cubert_comm_transport_of(cubert_comm *comm) {
  return comm ? comm->transport : NULL;
}

/* cubert — the device combination's steps (README.md, "Device combination"): an all_reduce of
   an in-process communicator whose members are devices that reduce (the server's comm_reduce).
   The host only relays bytes: member m stages out its chunk without its own piece, reduces
   piece m on its device from the others' staged pieces (in rank order) and reads it back into
   the shared slot, then stages in the other pieces. member.c runs these in its chunk loop. */
#include "comm/comm_internal.h"

/* 1 when every member of `job` combines on its device: an all_reduce of an in-process
   communicator whose members all stage both ways and whose servers all have comm_reduce for
   the dtype (same answer for every member thread). */
int cubert_comm_device_combine(const cubert_comm *comm, const comm_job *job) {
  if (!comm->device_reduce || job->kind != CUBERT_COMM_ALL_REDUCE || !comm->shared_out[0]) return 0;
  for (size_t i = 0; i < comm->local_count; ++i) {
    const comm_member *mem = &comm->members[i];
    const comm_leg *leg = &job->legs[i];
    if (!mem->scratch.slice || cubert_comm_input_direct(job, leg) ||
        cubert_comm_output_direct(job, leg))
      return 0;
    if (job->dtype == CUBERT_DTYPE_F64 && !(mem->server->properties.features & CUBERT_FEATURE_FP64))
      return 0;
    if (leg->src.offset % job->es || leg->dst.offset % job->es) return 0;
  }
  return 1;
}

/* Member m's piece of a chunk of n elements over `parts` members: [lo, hi). */
static void piece_of(size_t n, size_t m, size_t parts, size_t *lo, size_t *hi) {
  *lo = n * m / parts;
  *hi = n * (m + 1) / parts;
}

/* Stage-out with device combination: the chunk without member m's own piece (the others
   need it; m reduces its piece from device memory). reads[0..2). */
cubert_status cubert_comm_device_stage_out(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                           comm_copy *reads) {
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  size_t offset = 0, n = 0, lo = 0, hi = 0, es = job->es;
  cubert_comm_chunk_span(job, k, &offset, &n);
  piece_of(n, m, comm->local_count, &lo, &hi);
  char *host = mem->in_buf[k % CUBERT_COMM_DEPTH];
  CUBERT_RETURN_IF_ERROR(
      cubert_comm_leg_read(mem, &leg->src, offset * es, host, lo * es, &reads[0]));
  return cubert_comm_leg_read(mem, &leg->src, (offset + hi) * es, host + hi * es, (n - hi) * es,
                              &reads[1]);
}

/* Member m's part of chunk k on its device: the other members' pieces m go from their staging
   slots into the scratch buffer, comm_reduce writes dst's piece m (rank order), and the piece
   is read back into the shared slot for the others. All on the combine stream (in order);
   *done is the read, which completes after the rest. */
cubert_status cubert_comm_device_part(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                      comm_copy *done) {
  done->event = NULL;
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  cubert_server *server = mem->server;
  const cubert_server_vtable *v = server->vtable;
  size_t offset = 0, n = 0, lo = 0, hi = 0, es = job->es, parts = comm->local_count;
  size_t slot = k % CUBERT_COMM_DEPTH;
  cubert_comm_chunk_span(job, k, &offset, &n);
  piece_of(n, m, parts, &lo, &hi);
  size_t len = hi - lo;
  if (len == 0) return NULL;
  for (size_t r = 0, run = 0; r < parts; ++r) {
    if (r == m) continue;
    cubert_binding at = {mem->scratch.slice, mem->scratch.offset + run * len * es, len * es};
    cubert_event *e = NULL;
    CUBERT_RETURN_IF_ERROR(v->write_async(server, mem->combine_stream, &at,
                                          (const char *)comm->members[r].in_buf[slot] + lo * es,
                                          len * es, &e));
    v->event_release(server, e); /* the read below completes after it (in-order stream) */
    ++run;
  }
  cubert_binding own = {leg->src.slice, leg->src.offset + (offset + lo) * es, len * es};
  cubert_binding dst = {leg->dst.slice, leg->dst.offset + (offset + lo) * es, len * es};
  cubert_binding others = {mem->scratch.slice, mem->scratch.offset, (parts - 1) * len * es};
  CUBERT_RETURN_IF_ERROR(v->comm_reduce(server, mem->combine_stream, &dst, &own, &others, parts, m,
                                        len, job->dtype, job->op));
  return v->read_async(server, mem->combine_stream, &dst, (char *)comm->shared_out[slot] + lo * es,
                       len * es, &done->event);
}

/* Stage-in with device combination: the other members' pieces from the shared slot.
   writes[0..2). */
cubert_status cubert_comm_device_stage_in(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                          comm_copy *writes) {
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  size_t offset = 0, n = 0, lo = 0, hi = 0, es = job->es;
  cubert_comm_chunk_span(job, k, &offset, &n);
  piece_of(n, m, comm->local_count, &lo, &hi);
  const char *host = comm->shared_out[k % CUBERT_COMM_DEPTH];
  CUBERT_RETURN_IF_ERROR(
      cubert_comm_leg_write(mem, &leg->dst, offset * es, host, lo * es, &writes[0]));
  return cubert_comm_leg_write(mem, &leg->dst, (offset + hi) * es, host + hi * es, (n - hi) * es,
                               &writes[1]);
}

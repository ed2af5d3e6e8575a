/* cubert — the device combination's steps (README.md, "Device combination"): an all_reduce of
   an in-process communicator whose members are devices that reduce (the server's comm_reduce).
   The host only relays bytes: member m stages out its chunk without its own piece, reduces
   piece m on its device from the others' staged pieces (in rank order) and reads it back into
   the shared slot, then stages in the other pieces. member.c runs these in its chunk loop. */
#include "comm/device_combine.h"

#include "comm/engine.h"
#include "comm/legs.h"
#include "cubert/server/combine.h"
#include "cubert/server/transfers.h"

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

/* The copies of chunk k around member m's own piece, [0, lo) and [hi, n): out of src into its
   staging slot (stage-out: the others need them, m reduces its piece from device memory), or
   into dst from the shared slot (stage-in: the others' results). copies[0..2). */
static cubert_status around_own_piece(cubert_comm *comm, comm_job *job, size_t m, size_t k, int in,
                                      comm_copy *copies) {
  comm_member *mem = &comm->members[m];
  comm_leg *leg = &job->legs[m];
  size_t offset = 0, n = 0, lo = 0, hi = 0, es = job->es;
  cubert_comm_chunk_span(job, k, &offset, &n);
  piece_of(n, m, comm->local_count, &lo, &hi);
  size_t at[2] = {0, hi}, len[2] = {lo, n - hi};
  for (int i = 0; i < 2; ++i) {
    uint64_t device_at = (offset + at[i]) * es, bytes = len[i] * es;
    if (in) {
      const char *host = (const char *)comm->shared_out[k % CUBERT_COMM_DEPTH] + at[i] * es;
      CUBERT_RETURN_IF_ERROR(
          cubert_comm_leg_write(mem, &leg->dst, device_at, host, bytes, &copies[i]));
    } else {
      char *host = (char *)mem->in_buf[k % CUBERT_COMM_DEPTH] + at[i] * es;
      CUBERT_RETURN_IF_ERROR(
          cubert_comm_leg_read(mem, &leg->src, device_at, host, bytes, &copies[i]));
    }
  }
  return NULL;
}

cubert_status cubert_comm_device_stage_out(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                           comm_copy *reads) {
  return around_own_piece(comm, job, m, k, 0, reads);
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
  const cubert_server_transfers *io = server->transfers;
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
    CUBERT_RETURN_IF_ERROR(io->write_async(server, mem->combine_stream, &at,
                                           (const char *)comm->members[r].in_buf[slot] + lo * es,
                                           len * es, &e));
    server->vtable->event_release(server,
                                  e); /* the read below completes after it (in-order stream) */
    ++run;
  }
  cubert_binding own = {leg->src.slice, leg->src.offset + (offset + lo) * es, len * es};
  cubert_binding dst = {leg->dst.slice, leg->dst.offset + (offset + lo) * es, len * es};
  cubert_binding others = {mem->scratch.slice, mem->scratch.offset, (parts - 1) * len * es};
  CUBERT_RETURN_IF_ERROR(server->combine->reduce(server, mem->combine_stream, &dst, &own, &others,
                                                 parts, m, len, job->dtype, job->op));
  return io->read_async(server, mem->combine_stream, &dst, (char *)comm->shared_out[slot] + lo * es,
                        len * es, &done->event);
}

cubert_status cubert_comm_device_stage_in(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                          comm_copy *writes) {
  return around_own_piece(comm, job, m, k, 1, writes);
}

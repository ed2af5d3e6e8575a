/* cubert — a member's legs (legs.c): the stage-out (device -> host) and stage-in (host ->
   device) of its chunks on its private streams, its host staging slots, and where host-addressable
   memory is used in place instead. */
#ifndef CUBERT_COMM_LEGS_H
#define CUBERT_COMM_LEGS_H

#include <stddef.h>
#include <stdint.h>

#include "comm/engine.h"
#include "cubert/server.h"

/* A copy a leg started. */
typedef struct comm_copy {
  cubert_event *event; /* NULL: done (host copy, a blocking write, or nothing) */
} comm_copy;
/* Starts copying bytes [offset, offset+size) of `b` into `host` on the member's out stream
   (or copies them at once when the memory is host-addressable). */
cubert_status cubert_comm_leg_read(comm_member *m, const cubert_binding *b, uint64_t offset,
                                   void *host, uint64_t size, comm_copy *out);
/* Starts copying `host` into [offset, offset+size) of `b` on the member's in stream (write_async;
   a server without it writes before this returns; host-addressable memory is copied at once).
   `host` stays untouched until the copy is waited for. */
cubert_status cubert_comm_leg_write(comm_member *m, const cubert_binding *b, uint64_t offset,
                                    const void *host, uint64_t size, comm_copy *out);
/* Waits for a started read or write; releases its event. */
cubert_status cubert_comm_leg_wait(comm_member *m, comm_copy *c);
/* Waits for the member's in stream (every write done); the private streams' errors. */
cubert_status cubert_comm_leg_drain(comm_member *m);
/* Allocates the member's staging slots of `bytes` each (keeps bigger ones). */
cubert_status cubert_comm_leg_buffers(comm_member *m, size_t bytes);
void cubert_comm_leg_buffers_free(comm_member *m);
/* The host address of binding bytes at `offset`, or NULL when not host-addressable. */
static inline void *cubert_comm_host_at(const cubert_binding *b, uint64_t offset) {
  void *p = cubert_binding_host_ptr(b);
  return p ? (char *)p + offset : NULL;
}

/* Staged inputs and outputs of one piece are contiguous in the device buffer for these kinds,
   so host-addressable memory is used in place (no staging copy). */
static inline int cubert_comm_input_direct(const comm_job *job, const comm_leg *leg) {
  return job->kind != CUBERT_COMM_REDUCE_SCATTER && cubert_comm_host_at(&leg->src, 0) != NULL;
}
static inline int cubert_comm_output_direct(const comm_job *job, const comm_leg *leg) {
  return job->kind != CUBERT_COMM_ALL_GATHER && cubert_comm_host_at(&leg->dst, 0) != NULL;
}

#endif /* CUBERT_COMM_LEGS_H */

/* cubert — a member thread's share of a job (member.c): the chunk pipeline that stages each
   chunk out of the member's device, combines its part through the transport and stages the
   result back in. */
#ifndef CUBERT_COMM_MEMBER_H
#define CUBERT_COMM_MEMBER_H

#include <stddef.h>

#include "comm/engine.h"

/* The member thread's work on one job: member m's legs and its part of every chunk's
   combination. */
void cubert_comm_member_run(cubert_comm *comm, comm_job *job, size_t m);
/* 1 when no local member of `job` stages a chunk: every input and output it uses is host
   memory used in place (its chunk size is then not bound by the staging slots). */
int cubert_comm_job_direct(const cubert_comm *comm, const comm_job *job);

#endif /* CUBERT_COMM_MEMBER_H */

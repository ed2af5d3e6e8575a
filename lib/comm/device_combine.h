/* cubert — device combination (device_combine.c; README.md, "Device combination"): where every
   member's server can reduce on the device, each member thread stages the other members' pieces
   into device scratch, reduces there and reads its part back, instead of combining on the host. */
#ifndef CUBERT_COMM_DEVICE_COMBINE_H
#define CUBERT_COMM_DEVICE_COMBINE_H

#include <stddef.h>

#include "comm/engine.h"
#include "comm/legs.h"

/* 1 when every member of `job` combines on its device (the same answer on every member
   thread). */
int cubert_comm_device_combine(const cubert_comm *comm, const comm_job *job);
/* Chunk k's stage-out of member m without its own piece (reads[0..2)). */
cubert_status cubert_comm_device_stage_out(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                           comm_copy *reads);
/* Member m's piece of chunk k, reduced on its device and read back into the shared slot:
 *done completes after all of it. */
cubert_status cubert_comm_device_part(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                      comm_copy *done);
/* Chunk k's stage-in of member m: the other pieces, from the shared slot (writes[0..2)). */
cubert_status cubert_comm_device_stage_in(cubert_comm *comm, comm_job *job, size_t m, size_t k,
                                          comm_copy *writes);

#endif /* CUBERT_COMM_DEVICE_COMBINE_H */

/* cubert — running the candidate a test or a benchmark forced on an autotuned operation
   (cubert_ops_reduce_force_candidate, cubert_ops_softmax_force_candidate) instead of the one
   the tuner would pick (forced_candidate.c): tests that must run every geometry, benchmarks
   that time fixed choices. */
#ifndef CUBERT_OPS_FORCED_CANDIDATE_H
#define CUBERT_OPS_FORCED_CANDIDATE_H

#include "cubert/client.h"
#include "cubert/status.h"
#include "cubert/tune.h"

/* Runs candidate `index` (>= 0) of `set` for `key` and `args`, with `op` naming the operation in
   messages. A candidate unfit for this problem on this device is UNAVAILABLE, which the tests
   read as "skip this geometry": "<op>: candidate <index> does not fit" when the set has no such
   candidate or it is not valid for the key, and "... exceeds its kernel's unit limit on this
   device" when its launch fails with CUBERT_CODE_UNITS (a kernel's own per-device unit limit:
   NVIDIA runs some kernels with at most 256 units per cube). Other errors are the launch's. */
cubert_status cubert_ops_run_forced(cubert_client *client, const cubert_tune_set *set,
                                    const cubert_tune_key *key, const void *args, int index,
                                    const char *op);

#endif /* CUBERT_OPS_FORCED_CANDIDATE_H */

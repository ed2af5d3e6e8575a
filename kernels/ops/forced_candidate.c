/* cubert — the forced candidate of an autotuned operation: the tuner's choice bypassed, for
   tests that must run every geometry and benchmarks that time fixed choices. */
#include "ops/forced_candidate.h"

cubert_status cubert_ops_run_forced(cubert_client *client, const cubert_tune_set *set,
                                    const cubert_tune_key *key, const void *args, int index,
                                    const char *op) {
  const cubert_tune_candidate *c =
      index >= 0 && (uint32_t)index < set->candidate_count ? &set->candidates[index] : NULL;
  if (!c || (c->valid && !c->valid(client, key, args)))
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE, "%s: candidate %d does not fit", op, index);
  cubert_status launched = c->launch(client, args);
  if (launched && cubert_status_code(launched) == CUBERT_CODE_UNITS) {
    cubert_status_free(launched);
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "%s: candidate %d exceeds its kernel's unit limit on this device", op,
                              index);
  }
  return launched;
}

/* cubert — tuning keys and anchoring (the reference's tune/util.rs anchor()). */
#include "cubert/server.h"
#include "cubert/tune.h"

uint64_t cubert_tune_anchor(uint64_t x, uint64_t max, uint64_t min, uint64_t base) {
  if (base < 2) base = 2;
  /* Integer powers instead of the reference's ceil(b ^ ceil(log_b x)) in floating point: the
     same values for integer bases, and no rounding surprises at exact powers (4096 stays 4096). */
  uint64_t power = 1;
  while (power < x) {
    if (power > UINT64_MAX / base) {
      power = UINT64_MAX;
      break;
    }
    power *= base;
  }
  if (max && power > max) power = max;
  if (power < min) power = min;
  return power;
}

cubert_status cubert_tune_key_add(cubert_tune_key *key, uint64_t value) {
  if (!key) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "key is NULL");
  if (key->count >= CUBERT_TUNE_KEY_MAX_FIELDS)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "the tuning key already holds %u fields, the maximum",
                              (unsigned)CUBERT_TUNE_KEY_MAX_FIELDS);
  key->fields[key->count++] = value;
  return NULL;
}

cubert_status cubert_tune_key_add_anchored(cubert_tune_key *key, uint64_t value) {
  return cubert_tune_key_add(key, cubert_tune_anchor(value, 0, 1, 2));
}

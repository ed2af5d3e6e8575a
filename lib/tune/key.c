/* cubert — tuning keys and anchoring (the reference's tune/util.rs anchor(), with its autotune
   level: cubecl-architecture.md, "anchor"). */
#include <math.h>

#include "cubert/config.h"
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

static uint64_t clamp(uint64_t v, uint64_t max, uint64_t min) {
  if (max && v > max) v = max;
  return v < min ? min : v;
}

uint64_t cubert_tune_anchor_level(uint64_t x, uint64_t max, uint64_t min, uint64_t base,
                                  cubert_tune_level level) {
  if (level == CUBERT_TUNE_LEVEL_FULL) return clamp(x, max, min);
  if (level != CUBERT_TUNE_LEVEL_MINIMAL && level != CUBERT_TUNE_LEVEL_EXTENSIVE)
    return cubert_tune_anchor(x, max, min, base);
  /* A non-integer base: the reference's ceil(b ^ ceil(log_b x)) in floating point. */
  const double factor = level == CUBERT_TUNE_LEVEL_MINIMAL ? 1.25 : 0.75;
  double b = (double)(base < 2 ? 2 : base) * factor;
  if (b < 1.1) b = 1.1;
  if (x <= 1) return clamp(1, max, min);
  const double v = ceil(pow(b, ceil(log((double)x) / log(b))));
  return clamp(v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v, max, min);
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
  const cubert_tune_level level = (cubert_tune_level)cubert_config_get()->autotune_level;
  return cubert_tune_key_add(key, cubert_tune_anchor_level(value, 0, 1, 2, level));
}

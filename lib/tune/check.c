/* cubert — CUBERT_AUTOTUNE_CHECKS: the candidates of a set must compute one result, and a
   candidate that does not (a wrong tile, an unguarded edge) is a bug that a fast time would
   otherwise hide. The reference (seed-tune-tuner.rs.txt, `check_autotune_outputs`) keeps every
   candidate's output and compares them with its last candidate's, panicking on a difference.
   Here the first candidate that ran is the reference (in set order: the default, the one
   CUBERT_AUTOTUNE=off runs), each result is read back right after the candidate's warm-up and
   compared at once, so only one host copy is kept, and a disagreeing candidate is reported and
   excluded instead of aborting the program. */
#include "tune/check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cubert/config.h"

void cubert_tune_checker_init(cubert_tune_checker *checker, const cubert_tune_set *set,
                              const void *args) {
  memset(checker, 0, sizeof(*checker));
  checker->enabled = cubert_config_get()->autotune_checks && set->output;
  checker->set = set;
  checker->args = args;
}

void cubert_tune_checker_free(cubert_tune_checker *checker) {
  free(checker->reference);
  checker->reference = NULL;
}

static double element(cubert_dtype dtype, const void *base, uint64_t i) {
  if (dtype == CUBERT_DTYPE_F64) {
    double v;
    memcpy(&v, (const char *)base + i * sizeof v, sizeof v);
    return v;
  }
  float v;
  memcpy(&v, (const char *)base + i * sizeof v, sizeof v);
  return v;
}

/* The largest finite |element| of the reference, at least 1: what the tolerance is relative to
   (a norm-wise bound, so that elements near zero after cancellation are not held to a relative
   error they cannot have). */
static double scale_of(const cubert_tune_output *region, const void *ref) {
  double scale = 1.0;
  for (uint64_t i = 0; i < region->count; ++i) {
    double v = fabs(element(region->dtype, ref, i));
    if (isfinite(v) && v > scale) scale = v;
  }
  return scale;
}

uint64_t cubert_tune_first_difference(const cubert_tune_output *region, const void *ref,
                                      const void *got) {
  const cubert_dtype dtype = region->dtype;
  const uint64_t size = cubert_dtype_size(dtype) ? cubert_dtype_size(dtype) : 1;
  if (dtype != CUBERT_DTYPE_F32 && dtype != CUBERT_DTYPE_F64) {
    for (uint64_t i = 0; i < region->count; ++i)
      if (memcmp((const char *)ref + i * size, (const char *)got + i * size, size)) return i;
    return UINT64_MAX;
  }
  const double bound = region->tolerance * scale_of(region, ref);
  for (uint64_t i = 0; i < region->count; ++i) {
    double r = element(dtype, ref, i), g = element(dtype, got, i);
    if (isnan(r) && isnan(g)) continue;
    if (isinf(r) || isinf(g)) {
      if (r != g) return i;
      continue;
    }
    if (!(fabs(g - r) <= bound)) return i; /* NaN against a number fails here too */
  }
  return UINT64_MAX;
}

static uint64_t region_bytes(const cubert_tune_output *region) {
  uint64_t size = cubert_dtype_size(region->dtype);
  return region->count * (size ? size : 1);
}

/* Logs and counts a disagreement of candidate `index` at element `at` (UINT64_MAX: its result
   region itself differs from the reference's). */
static void report(cubert_tune_checker *checker, uint32_t index, const cubert_tune_output *mine,
                   const void *got, uint64_t at) {
  const cubert_tune_set *set = checker->set;
  const char *name = set->candidates[index].name;
  const char *ref_name = set->candidates[checker->reference_index].name;
  ++checker->mismatched;
  if (at == UINT64_MAX) {
    cubert_log(CUBERT_LOG_WARN, "tune",
               "%s: candidate %s excluded: its result region (%llu %s elements) is not that of "
               "%s (%llu %s elements)",
               set->name, name, (unsigned long long)mine->count, cubert_dtype_name(mine->dtype),
               ref_name, (unsigned long long)checker->region.count,
               cubert_dtype_name(checker->region.dtype));
    return;
  }
  const cubert_tune_output *r = &checker->region;
  if (r->dtype == CUBERT_DTYPE_F32 || r->dtype == CUBERT_DTYPE_F64)
    cubert_log(CUBERT_LOG_WARN, "tune",
               "%s: candidate %s excluded: its result disagrees with %s's at element %llu (%.9g "
               "against %.9g; tolerance %g of the largest element %.9g)",
               set->name, name, ref_name, (unsigned long long)at, element(r->dtype, got, at),
               element(r->dtype, checker->reference, at), r->tolerance,
               scale_of(r, checker->reference));
  else
    cubert_log(CUBERT_LOG_WARN, "tune",
               "%s: candidate %s excluded: its result differs from %s's at element %llu (%s, "
               "compared exactly)",
               set->name, name, ref_name, (unsigned long long)at, cubert_dtype_name(r->dtype));
}

cubert_status cubert_tune_check(cubert_tune_checker *checker, cubert_client *client, uint32_t index,
                                int *out_agrees) {
  *out_agrees = 1;
  cubert_tune_output mine = {0};
  if (!checker->enabled || !checker->set->output(checker->args, &mine) || !mine.handle) return NULL;
  const uint64_t bytes = region_bytes(&mine);
  void *got = malloc(bytes ? bytes : 1);
  if (!got) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  cubert_status s = cubert_client_read_range(client, mine.handle, mine.offset, got, bytes);
  if (s || !checker->reference) {
    if (!s) {
      checker->reference = got;
      checker->region = mine;
      checker->reference_index = index;
    } else {
      free(got);
    }
    return s;
  }
  uint64_t at = UINT64_MAX;
  const int same_region =
      mine.count == checker->region.count && mine.dtype == checker->region.dtype;
  if (!same_region || (at = cubert_tune_first_difference(&checker->region, checker->reference,
                                                         got)) != UINT64_MAX) {
    report(checker, index, &mine, got, same_region ? at : UINT64_MAX);
    *out_agrees = 0;
  }
  free(got);
  return NULL;
}

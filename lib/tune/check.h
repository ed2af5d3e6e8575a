/* cubert — CUBERT_AUTOTUNE_CHECKS (check.c): each measured candidate's result compared with the
   result of the first candidate that ran (the reference's `autotune-checks`). */
#ifndef CUBERT_TUNE_CHECK_H
#define CUBERT_TUNE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/tune.h"

/* The checks of one measurement. Zero-initialised by cubert_tune_checker_init. */
typedef struct cubert_tune_checker {
  int enabled; /* CUBERT_AUTOTUNE_CHECKS=1 and the set has an output function */
  const cubert_tune_set *set;
  const void *args;
  void *reference;           /* host copy of the first result read; NULL until then */
  cubert_tune_output region; /* the reference's region */
  uint32_t reference_index;  /* whose result `reference` is */
  uint64_t mismatched;       /* candidates that disagreed */
} cubert_tune_checker;

void cubert_tune_checker_init(cubert_tune_checker *checker, const cubert_tune_set *set,
                              const void *args);
/* After candidate `index`'s warm-up run (its result is in place): reads the result, keeps it as
   the reference when it is the first, else compares it. *out_agrees is 0 when it disagrees (the
   difference is logged at warn and counted), else 1. Returns the read's error, if any. */
cubert_status cubert_tune_check(cubert_tune_checker *checker, cubert_client *client, uint32_t index,
                                int *out_agrees);
void cubert_tune_checker_free(cubert_tune_checker *checker);

/* The first element of `got` that disagrees with `ref` by the rules of cubert_tune_output (tune.h),
   or UINT64_MAX when none does. Pure. */
uint64_t cubert_tune_first_difference(const cubert_tune_output *region, const void *ref,
                                      const void *got);

#endif /* CUBERT_TUNE_CHECK_H */

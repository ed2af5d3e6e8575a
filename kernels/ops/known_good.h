/* cubert — known-good defaults of the operations' tunable sets per device family
   (known_good.c): what CUBERT_AUTOTUNE=minimal takes without measuring. */
#ifndef CUBERT_OPS_KNOWN_GOOD_H
#define CUBERT_OPS_KNOWN_GOOD_H

#include <stdint.h>

#include "cubert/client.h"
#include "cubert/tune.h"

/* The first known-good candidate of `set` for the device family of `client` that `eligible`
   marks (valid for the key), or UINT32_MAX (a cubert_tune_known_good_fn for
   cubert_tune_call.known_good, lib/tune/tuner.h). */
uint32_t cubert_ops_known_good(const cubert_client *client, const cubert_tune_set *set,
                               const uint8_t *eligible);

#endif /* CUBERT_OPS_KNOWN_GOOD_H */

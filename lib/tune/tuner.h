/* cubert — the per-device autotuner (tuner.c) as the rest of the library sees it: the device
   destroys it, the operations tune with a table of known-good defaults, and profiles and traces
   label the launches it measures. The tuner is created at the first cubert_tune_execute() on a
   device; it has a mutex of its own, never the device lock (tuner.c says why). */
#ifndef CUBERT_TUNE_TUNER_H
#define CUBERT_TUNE_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"
#include "cubert/tune.h"

/* A device's tuner: its in-memory cache, counters and disk state. Created at the first
   cubert_tune_execute() on the device, destroyed with it. */
typedef struct cubert_tuner cubert_tuner;
void cubert_tuner_destroy(cubert_tuner *tuner);

/* Returns the index of the candidate of `set` known to be good on `client`'s device family
   among those marked in `eligible` (one byte per candidate: valid for the key being tuned), or
   UINT32_MAX (kernels/ops/known_good.c, say). */
typedef uint32_t (*cubert_tune_known_good_fn)(const cubert_client *client,
                                              const cubert_tune_set *set, const uint8_t *eligible);
/* What a call of the kernel library adds to cubert_tune_execute; zeroed: nothing.
   - known_good: under CUBERT_AUTOTUNE=minimal, a known-good candidate that is valid for the key
     is taken without measurement (else minimal measures group 0 as usual); full ignores it.
     Called only when a key is tuned, never on the cached path.
   - read_only, read_only_count: the buffers the candidates only read, used in place while they
     are measured (cubert_tune_execute_reading).
   - args_bytes, args_clone: how to keep `args` beyond the call, which background tuning needs
     (cubert/tune.h): args_clone returns one malloc'd block holding a deep copy (released with
     free(); NULL when out of memory), else args_bytes > 0 says `args` is a self-contained struct
     of that many bytes (values, handles and pointers to static data only) copied as it is.
     Neither: the key is measured in the call, as with CUBERT_AUTOTUNE_BACKGROUND=off. */
typedef struct cubert_tune_call {
  cubert_tune_known_good_fn known_good;
  cubert_handle *const *read_only;
  size_t read_only_count;
  size_t args_bytes;
  void *(*args_clone)(const void *args);
} cubert_tune_call;
cubert_status cubert_tune_execute_call(cubert_client *client, const cubert_tune_set *set,
                                       const cubert_tune_key *key, const void *args,
                                       const cubert_tune_call *call);

/* Stops `device`'s background tuning (tune/background.h): called when its last user client is
   released. Keys whose measurement did not end are forgotten (neither in memory nor on disk), so
   the next call, or the next process, measures them again. */
struct cubert_device;
void cubert_tuner_background_stop(struct cubert_device *device);

/* "<set>/<candidate>" while this thread runs a candidate for measurement, else NULL:
   CUBERT_PROFILE and CUBERT_TRACE label those launches as tuning runs. */
const char *cubert_tune_measuring(void);

#endif /* CUBERT_TUNE_TUNER_H */

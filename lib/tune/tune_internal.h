/* cubert — autotune internals shared by the files of lib/tune, the device (device.c) and the tests.
   Not installed. */
#ifndef CUBERT_TUNE_INTERNAL_H
#define CUBERT_TUNE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/device.h"
#include "cubert/tune.h"

#define CUBERT_TUNE_NAME_BYTES 64 /* set and candidate names: at most 63 characters */

/* One winner as the disk file records it. */
typedef struct cubert_tune_record {
  char set_name[CUBERT_TUNE_NAME_BYTES];
  uint64_t checksum;
  cubert_tune_key key;
  uint32_t winner;
  char winner_name[CUBERT_TUNE_NAME_BYTES];
  uint64_t winner_ns;
} cubert_tune_record;

/* A device's tuner (tuner.c): its in-memory cache, counters and disk state. Created at the
   first cubert_tune_execute() on the device, destroyed with it. */
typedef struct cubert_tuner cubert_tuner;
void cubert_tuner_destroy(cubert_tuner *tuner);

/* disk.c. The identity names the device, its driver and cubert's version; a file whose
   identity differs is foreign. */
char *cubert_tune_disk_identity(const cubert_client *client);
/* The same from a device's properties (cubert_devices_list's, say); NULL for NULL. */
char *cubert_tune_disk_identity_of(const cubert_device_properties *properties);
/* The cache file of an identity under `dir` (malloc'd), or NULL. */
char *cubert_tune_disk_path(const char *dir, const char *identity);
/* Validates and parses a file's bytes (text, NUL-terminated at size). NULL on success with
   *out_records (malloc'd, may be NULL when empty) and *out_count; else the reason it was
   rejected. */
const char *cubert_tune_disk_parse(const char *text, size_t size, const char *identity,
                                   cubert_tune_record **out_records, size_t *out_count);
/* Reads and parses `path`. Returns NULL (with zero records when there is no file) or the
   reason the file was rejected (and zero records). */
const char *cubert_tune_disk_load(const char *path, const char *identity,
                                  cubert_tune_record **out_records, size_t *out_count);
/* How long an update waits for the file lock before giving up with ETIMEDOUT, in ms (10 s;
   tests lower it). */
extern _Atomic uint32_t cubert_tune_disk_lock_timeout_ms;
/* Under an advisory lock on the file (other processes and threads wait): reads the current
   file (a rejected one counts as empty), replaces or adds `put` (same set name and key) and/or
   drops `drop` (same set name, checksum and key), evicting the oldest entries when the file
   holds 65,536, and rewrites it by temp + rename. Returns 0 or an errno value (ETIMEDOUT when
   the lock stayed taken for cubert_tune_disk_lock_timeout_ms); on success *out_records and
   *out_count (when non-NULL) get the merged contents and *out_rejected the reason an old file was
   discarded (or NULL). */
int cubert_tune_disk_update(const char *dir, const char *path, const char *identity,
                            const cubert_tune_record *put, const cubert_tune_record *drop,
                            cubert_tune_record **out_records, size_t *out_count,
                            const char **out_rejected);

/* Returns the index of the candidate of `set` known to be good on `client`'s device family, or
   UINT32_MAX (kernels/ops/known_good.c). */
typedef uint32_t (*cubert_tune_known_good_fn)(const cubert_client *client,
                                              const cubert_tune_set *set);
/* cubert_tune_execute with a table of known-good defaults: under CUBERT_AUTOTUNE=minimal, a
   known-good candidate that is valid for the key is taken without measurement (else minimal
   measures group 0 as usual); full ignores it. Called only when a key is tuned, never on the
   cached path. NULL known_good: cubert_tune_execute. */
cubert_status cubert_tune_execute_known(cubert_client *client, const cubert_tune_set *set,
                                        const cubert_tune_key *key, const void *args,
                                        cubert_tune_known_good_fn known_good);

/* "<set>/<candidate>" while this thread runs a candidate for measurement, else NULL:
   CUBERT_PROFILE and CUBERT_TRACE label those launches as tuning runs. */
const char *cubert_tune_measuring(void);

/* The checksum of a set: its candidates' names (in order) and its source checksum. */
uint64_t cubert_tune_set_checksum(const cubert_tune_set *set);

#endif /* CUBERT_TUNE_INTERNAL_H */

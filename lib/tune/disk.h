/* cubert — the autotuner's cache file (disk.c): the device identity that names a file, its
   path, parsing and validation, and the locked read-merge-rewrite of an update. */
#ifndef CUBERT_TUNE_DISK_H
#define CUBERT_TUNE_DISK_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/client.h"
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

/* The identity names the device, its driver and cubert's version; a file whose
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
   reason the file was rejected (and zero records): CUBERT_CACHE_UNTRUSTED_REASON
   (base/cache_file.h) when it or its folder is owned by another user or writable by group or
   others, after one warning per path. */
const char *cubert_tune_disk_load(const char *path, const char *identity,
                                  cubert_tune_record **out_records, size_t *out_count);
/* How long an update waits for the file lock before giving up with ETIMEDOUT, in ms (10 s;
   tests lower it). */
extern _Atomic uint32_t cubert_tune_disk_lock_timeout_ms;
/* Under an advisory lock on the file (other processes and threads wait): reads the current
   file (a rejected one counts as empty), replaces or adds `put` (same set name and key) and/or
   drops `drop` (same set name, checksum and key), evicting the oldest entries when the file
   holds 65,536, and rewrites it by temp + rename (file and lock file 0600, folders 0700).
   Returns 0 or an errno value (ETIMEDOUT when the lock stayed taken for
   cubert_tune_disk_lock_timeout_ms), or CUBERT_CACHE_UNTRUSTED when the folder fails the trust
   check (nothing is written; its warning was logged); on success *out_records and
   *out_count (when non-NULL) get the merged contents and *out_rejected the reason an old file was
   discarded (or NULL). */
int cubert_tune_disk_update(const char *dir, const char *path, const char *identity,
                            const cubert_tune_record *put, const cubert_tune_record *drop,
                            cubert_tune_record **out_records, size_t *out_count,
                            const char **out_rejected);

#endif /* CUBERT_TUNE_DISK_H */

/* cubert base — files of the on-disk caches (cache_file.c): where they live, a hash to key
   them, reads that never block and writes that readers never see half done. */
#ifndef CUBERT_BASE_CACHE_FILE_H
#define CUBERT_BASE_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/* On-disk caches (cache_file.c), shared by the OpenCL program cache and the autotune cache.
   None of them ever fails a user's call: callers treat every error as a cache miss. */
/** The seed that starts a cubert_fnv1a64 chain. */
#define CUBERT_FNV1A64_SEED 0xcbf29ce484222325ull
/** FNV-1a 64 over bytes, chained from `seed` (CUBERT_FNV1A64_SEED to start). */
uint64_t cubert_fnv1a64(uint64_t seed, const void *data, size_t size);
/** "<folder>/<suffix>" (malloc'd) where folder is CUBERT_CACHE_DIR, else
   $XDG_CACHE_HOME/cubert (absolute only), else $HOME/.cache/cubert; NULL when none is set. */
char *cubert_cache_dir(const char *suffix);
/** mkdir -p with mode 0755; 0 or an errno value (ENOTDIR when a non-folder is in the way). */
int cubert_cache_make_dirs(const char *dir);
/** Reads a whole regular file of min_bytes..max_bytes into a malloc'd buffer, or returns NULL
   with *out_reason set (and *out_missing when there is no file). The open never blocks and
   anything but a regular file is refused: a FIFO or device node at a cache path must not hang
   or affect the process. */
unsigned char *cubert_cache_file_read(const char *path, size_t min_bytes, size_t max_bytes,
                                      size_t *out_size, const char **out_reason, int *out_missing);
/** Writes parts[0..count) to a unique temporary file beside `path` and renames it over `path`,
   so readers (other processes included) see the old file or the new one, never a mixture,
   even if the writer is killed. 0 or an errno value; the temporary file is removed on
   failure. */
int cubert_cache_file_write(const char *path, const void *const *parts, const size_t *sizes,
                            size_t count);
/** Removes the temporary files that writers of `path` killed mid-write left behind (those whose
   process no longer exists). Best effort; for callers that serialise their writers. */
void cubert_cache_file_remove_stale(const char *path);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BASE_CACHE_FILE_H */

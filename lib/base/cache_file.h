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
/** Returned by cubert_cache_make_dirs (never an errno value) when the folder fails the trust
   check of cubert_cache_dir_check; its warning has been logged already. */
#define CUBERT_CACHE_UNTRUSTED (-1)
/** The reason cubert_cache_file_read_trusted gives for a file (or the folder of a file) that
   failed the trust check; its warning has been logged already (compare with strcmp). */
#define CUBERT_CACHE_UNTRUSTED_REASON "not trusted (another user owns it or can write it)"
/** The trust rule of every cache: a folder or file may be used only when the effective user
   (geteuid) owns it and neither group nor others may write it, so that no other user can
   plant a program binary or a tuning winner. 0 when `dir` is such a folder; else an errno
   value of stat (ENOTDIR when it is no folder) or CUBERT_CACHE_UNTRUSTED, after logging one
   warning (level warn, `category`) per folder and process that names the folder, the owner or
   mode found and the fix. */
int cubert_cache_dir_check(const char *dir, const char *category);
/** mkdir -p, each folder it creates getting mode 0700 whatever the umask, then
   cubert_cache_dir_check(dir): 0, an errno value (ENOTDIR when a non-folder is in the way) or
   CUBERT_CACHE_UNTRUSTED (nothing may be written into that folder then). */
int cubert_cache_make_dirs(const char *dir, const char *category);
/** strerror(error), or the words for CUBERT_CACHE_UNTRUSTED. */
const char *cubert_cache_error_text(int error);
/** Reads a whole regular file of min_bytes..max_bytes into a malloc'd buffer, or returns NULL
   with *out_reason set (and *out_missing when there is no file; errno then holds the cause of
   "cannot stat" or "cannot open"). The open never blocks and anything but a regular file is
   refused: a FIFO or device node at a cache path must not hang or affect the process. For
   files the caller did not find in a cache folder (a bundle): no trust check. */
unsigned char *cubert_cache_file_read(const char *path, size_t min_bytes, size_t max_bytes,
                                      size_t *out_size, const char **out_reason, int *out_missing);
/** cubert_cache_file_read for a cache file about to be used: its folder (stat) and then the
   opened file (fstat of the same descriptor that is read, so it cannot be swapped in between)
   must pass the trust rule of cubert_cache_dir_check; else *out_reason is
   CUBERT_CACHE_UNTRUSTED_REASON and one warning per path and process has been logged. */
unsigned char *cubert_cache_file_read_trusted(const char *path, const char *category,
                                              size_t min_bytes, size_t max_bytes, size_t *out_size,
                                              const char **out_reason, int *out_missing);
/** Writes parts[0..count) to a unique temporary file beside `path` and renames it over `path`,
   so readers (other processes included) see the old file or the new one, never a mixture,
   even if the writer is killed. The file gets mode 0600 whatever the umask. 0 or an errno value;
   the temporary file is removed on failure. */
int cubert_cache_file_write(const char *path, const void *const *parts, const size_t *sizes,
                            size_t count);
/** Removes the temporary files that writers of `path` killed mid-write left behind (those whose
   process no longer exists). Best effort; for callers that serialise their writers. */
void cubert_cache_file_remove_stale(const char *path);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BASE_CACHE_FILE_H */

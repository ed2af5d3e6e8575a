/** @file
   cubert — cache bundles: carry a machine's autotune and OpenCL program caches to another
   machine (issue 24 item 2, "tuning in seconds"; docs/TUNING.md, "Cache bundles").

   A cold first run spends its seconds compiling kernels and measuring tuning candidates. A
   bundle packs the files of both disk caches (under CUBERT_CACHE_DIR, docs/environment.md)
   into one file; importing it on a machine with the same device, driver and cubert version
   fills that machine's caches so that its first run measures nothing and, where the program
   cache is on, compiles nothing.

   Each entry of a bundle carries the cubert version and the device identity (backend, device
   name, driver and platform versions) of the cache file it holds. Import re-validates every
   entry against this library's version and the devices cubert lists here, and skips (counts)
   the ones that do not match: a bundle made elsewhere never puts a foreign binary or winner
   into use. Autotune entries are merged into an existing cache file (under its lock); program
   binaries are added where no file of that key exists. Import checks that an entry was made
   for this version and a device here, not who made it: importing a bundle trusts its program
   binaries and winners as if this user had compiled and measured them, so import only bundles
   from a source you trust. The files it writes are this user's (0600, folders 0700), and
   nothing is written into a cache folder that another user owns or can write (the trust rule
   of docs/environment.md, "Cache files"). Include this header itself (cubert.h does not): it
   serves deployment tools more than programs. */
#ifndef CUBERT_CACHE_BUNDLE_H
#define CUBERT_CACHE_BUNDLE_H

#include <stdint.h>

#include "cubert/export.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** What an export or import did, file by file. */
typedef struct cubert_cache_bundle_counts {
  uint32_t tune_files;    /**< autotune cache files exported, or imported (merged) */
  uint32_t program_files; /**< OpenCL program binaries exported, or imported (added) */
  uint32_t present;       /**< import: program binaries already in the cache (kept) */
  uint32_t other_version; /**< import: entries of another cubert version (skipped) */
  uint32_t other_device;  /**< import: entries of a device not found here (skipped) */
  uint32_t invalid;       /**< export: unreadable or damaged cache files left out; import:
                               entries that failed validation (skipped) */
} cubert_cache_bundle_counts;

/** Writes every valid file of this machine's autotune cache and OpenCL program cache
   (CUBERT_CACHE_DIR/tune and /opencl) into a new bundle file at `path` (replaced by rename,
   so a reader never sees half a bundle; mode 0600). Cache files that fail the trust rule are
   left out and counted as invalid. `out_counts` may be NULL. Thread-safe; reads the
   caches without locking them (their files are replaced by rename). Errors: INVALID_ARGUMENT
   for a NULL path; NOT_FOUND when no cache folder is configured; EXECUTION (with the errno
   text) when the bundle cannot be written; OUT_OF_MEMORY. */
CUBERT_API cubert_status cubert_cache_bundle_export(const char *path,
                                                    cubert_cache_bundle_counts *out_counts);

/** Reads the bundle at `path` and adds the entries that match this cubert version and a
   device cubert lists on this machine to the caches under CUBERT_CACHE_DIR; the others are
   skipped and counted in `out_counts` (may be NULL). Processes already running keep their
   in-memory caches: imported winners reach new processes. The whole bundle is parsed before
   anything is written. Thread-safe. Errors: INVALID_ARGUMENT for a NULL path, a path that
   cannot be opened or read (the message names the path and the reason, "No such file or
   directory" say) or a file that is not a complete, undamaged bundle, a malformed entry
   anywhere included (nothing is imported then); NOT_FOUND when no cache folder is configured;
   EXECUTION when a cache file cannot be written, or its folder is owned by another user or
   writable by others (the entries before it stay imported); OUT_OF_MEMORY. */
CUBERT_API cubert_status cubert_cache_bundle_import(const char *path,
                                                    cubert_cache_bundle_counts *out_counts);

CUBERT_EXTERN_C_END

#endif /* CUBERT_CACHE_BUNDLE_H */

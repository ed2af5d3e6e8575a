/* cubert — the OpenCL server's disk cache of program binaries (disk_cache.c): cache files
   keyed by program and device, written through a temporary file and rename, validated in full
   when read back. Called with the device lock held, except the pure cubert_ocl_disk_parse and
   cubert_ocl_default_cache_dir. */
#ifndef CUBERT_OPENCL_DISK_CACHE_H
#define CUBERT_OPENCL_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "opencl/program.h"
#include "opencl/server.h"

/* Disk cache of program binaries. The key text names the program and the device
   (cubert_ocl_disk_key). load: a built program from a valid file, NULL when missing,
   damaged or not trusted (owned by another user or writable by group or others, it or its
   folder: one warning per path); a damaged or untrusted file counts in stats.disk_rejected and
   is replaced by the next refresh;
   *out_size is the binary's size. refresh: reads the program's binary size back and, when it
   differs from program->disk_size (nothing stored yet, or the driver added compiled code),
   writes the binary through a temporary file and rename (mode 0600, folders 0700) and updates
   disk_size; an unwritable folder logs one warning per process and is otherwise ignored, an
   untrusted one is never written. Clears program->refresh. */
char *cubert_ocl_disk_key(const cubert_ocl_server *server, uint64_t source_hash, size_t source_len,
                          const char *options);
/* Path of the cache file for `key` into out[0..capacity); 0 when the cache is disabled or the
   path does not fit. */
int cubert_ocl_disk_path(const cubert_ocl_server *server, const char *key, char *out,
                         size_t capacity);
cl_program cubert_ocl_disk_load(cubert_ocl_server *server, const char *key, const char *options,
                                size_t *out_size);
/* Bounds of a cache file: absurd sizes from a damaged header are refused before allocating,
   and larger files are not read at all. */
#define CUBERT_OCL_DISK_MAX_BINARY_BYTES (1ull << 31)
#define CUBERT_OCL_DISK_MAX_KEY_BYTES (1u << 20)
#define CUBERT_OCL_DISK_MAX_FILE_BYTES \
  (32ull + CUBERT_OCL_DISK_MAX_KEY_BYTES + CUBERT_OCL_DISK_MAX_BINARY_BYTES)
/* Validates the bytes of a cache file held in memory against `key` (magic, format, key text in
   full, lengths against `size`, checksum of the binary): NULL and the binary's place
   data[*out_offset .. *out_offset + *out_size) when valid, else the reason (static text).
   Pure, any input is safe (tests/fuzz/fuzz_disk_cache.c). */
const char *cubert_ocl_disk_parse(const unsigned char *data, size_t size, const char *key,
                                  size_t *out_offset, size_t *out_size);
void cubert_ocl_disk_refresh(cubert_ocl_server *server, cubert_ocl_program *program);
/* Number of "cache folder unwritable" warnings logged by this process (0 or 1). */
uint32_t cubert_ocl_disk_warning_count(void);
/* The default folder: $CUBERT_CACHE_DIR, else $XDG_CACHE_HOME/cubert, else ~/.cache/cubert,
   with "/opencl" appended (malloc'd; NULL when none can be formed). */
char *cubert_ocl_default_cache_dir(void);

#endif /* CUBERT_OPENCL_DISK_CACHE_H */

/* cubert — the on-disk cache of OpenCL program binaries.

   A program's binary is only valid for the exact device, driver and platform that produced it,
   so the key text names all of them, the cubert version, the build options in effect (cubert's
   and those a driver adds from its environment) and a hash of the source. File name: FNV-1a 64 of
   the key text in hex. File layout (little-endian):

     offset 0   8 bytes  magic "CUBRTCL\0"
            8   u32      format version (1)
           12   u32      key length K
           16   u64      binary length B
           24   u64      FNV-1a 64 of the binary
           32   K bytes  key text (compared in full: a hash collision cannot load a wrong binary)
         32+K   B bytes  the binary (CL_PROGRAM_BINARIES)

   Files are written to a unique temporary name and renamed, so concurrent processes never see
   a half-written file; a reader validates everything and then clBuildProgram must accept the
   binary. Anything wrong makes the file a miss: the program is built from source and the file
   replaced. The cache is an optimisation: no failure here is ever an error to the user; an
   unwritable folder is reported once per process (CUBERT_LOG=warn). A binary runs in the
   user's context (on PoCL it carries host code), so a file or folder that another user owns
   or can write is never loaded nor written (cache_file.c, "Trust"). On PoCL the cache is off
   unless CUBERT_OPENCL_BINARY_CACHE=on (server.c says why).

   When the file is written. Some drivers compile part of the code only at the first launch
   of a kernel at a given local size: PoCL builds its work-group function then (30-50 ms per
   kernel and size on the CPU device), and its program binary bundles the kernel cache folder
   of the program, so a binary taken after that launch loads and runs with no compilation at
   all, while one taken right after clBuildProgram compiles again in every new process. PoCL
   also serializes a program's binary once, at the first query, and returns those bytes ever
   after (a program made from a binary returns the bytes it was made from). Hence:
   - a program built from source is not written at build time: the first write happens at the
     first sync after one of its kernels ran (or when the program is freed, if none ran), so
     the file holds what those launches compiled;
   - the first launch at each new (kernel, local size) marks the program, and the next sync
     reads the binary size back and rewrites the file when it changed (the driver added code):
     cheap (a size query) and general, although on PoCL it only finds something new before
     the first query froze the binary;
   - the size alone decides: compiled code added to a binary makes it longer, and reading and
     hashing a multi-MiB binary at a sync for every new local size would cost milliseconds.
   A binary that changed without changing size is merely not refreshed; the file stays valid. */
#include "opencl/disk_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache_file.h"
#include "base/log.h"
#include "opencl/errors.h"
#include "opencl/program.h"
#include "opencl/server.h"

#define CACHE_MAGIC "CUBRTCL"
#define CACHE_FORMAT 1u
#define HEADER_BYTES 32u
#define MAX_BINARY_BYTES CUBERT_OCL_DISK_MAX_BINARY_BYTES
#define MAX_KEY_BYTES CUBERT_OCL_DISK_MAX_KEY_BYTES

static atomic_uint g_warnings;

uint32_t cubert_ocl_disk_warning_count(void) {
  return atomic_load(&g_warnings);
}

static void warn_once(const char *dir, const char *what, int error) {
  unsigned expected = 0;
  if (atomic_compare_exchange_strong(&g_warnings, &expected, 1u))
    cubert_log(CUBERT_LOG_WARN, "opencl",
               "the OpenCL program cache folder '%s' is not usable (%s: %s); kernels are built "
               "without the disk cache (set CUBERT_CACHE_DIR to a writable folder)",
               dir, what, strerror(error));
}

char *cubert_ocl_default_cache_dir(void) {
  return cubert_cache_dir("opencl");
}

/* Variables through which a driver adds its own options to every clBuildProgram: a binary
   built under one value is another program than one built under another (an Oclgrind run
   with --build-options -cl-opt-disable must not load the optimised binary of an earlier run,
   nor leave its own for the next), so their values are part of the key. */
static const char *const kDriverOptionVariables[] = {"OCLGRIND_BUILD_OPTIONS",
                                                     "POCL_EXTRA_BUILD_FLAGS"};
enum { DRIVER_OPTION_VARIABLES = sizeof kDriverOptionVariables / sizeof kDriverOptionVariables[0] };

char *cubert_ocl_disk_key(const cubert_ocl_server *server, uint64_t source_hash, size_t source_len,
                          const char *options) {
  const char *device = server->device_key ? server->device_key : "";
  const char *values[DRIVER_OPTION_VARIABLES];
  size_t size = strlen(device) + strlen(options) + 128;
  for (size_t i = 0; i < DRIVER_OPTION_VARIABLES; ++i) {
    values[i] = getenv(kDriverOptionVariables[i]);
    if (values[i] && !values[i][0]) values[i] = NULL; /* empty adds nothing */
    if (values[i]) size += strlen(kDriverOptionVariables[i]) + strlen(values[i]) + 8;
  }
  char *key = malloc(size);
  if (!key) return NULL;
  int used = snprintf(key, size, "%soptions %s\n", device, options);
  for (size_t i = 0; i < DRIVER_OPTION_VARIABLES; ++i)
    if (values[i])
      used += snprintf(key + used, size - (size_t)used, "env %s=%s\n", kDriverOptionVariables[i],
                       values[i]);
  snprintf(key + used, size - (size_t)used, "source-fnv1a64 %016llx\nsource-bytes %zu\n",
           (unsigned long long)source_hash, source_len);
  return key;
}

int cubert_ocl_disk_path(const cubert_ocl_server *server, const char *key, char *out,
                         size_t capacity) {
  if (!server->cache_dir) return 0;
  uint64_t h = cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, key, strlen(key));
  int n = snprintf(out, capacity, "%s/%016llx.clbin", server->cache_dir, (unsigned long long)h);
  return n > 0 && (size_t)n < capacity;
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

const char *cubert_ocl_disk_parse(const unsigned char *data, size_t size, const char *key,
                                  size_t *out_offset, size_t *out_size) {
  *out_offset = *out_size = 0;
  size_t key_len = strlen(key);
  if (size < HEADER_BYTES) return "truncated header";
  if (memcmp(data, CACHE_MAGIC, 8) != 0) return "bad magic";
  if (get_u32(data + 8) != CACHE_FORMAT) return "other format version";
  if (key_len > MAX_KEY_BYTES || get_u32(data + 12) != key_len) return "key length differs";
  uint64_t binary_len = get_u64(data + 16);
  /* No sum can wrap: key_len and binary_len are bounded far below 2^64. */
  if (binary_len == 0 || binary_len > MAX_BINARY_BYTES ||
      (uint64_t)size != HEADER_BYTES + (uint64_t)key_len + binary_len)
    return "length does not match the file size";
  if (memcmp(data + HEADER_BYTES, key, key_len) != 0) return "key text differs";
  const unsigned char *binary = data + HEADER_BYTES + key_len;
  if (cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, binary, (size_t)binary_len) != get_u64(data + 24))
    return "checksum mismatch";
  *out_offset = HEADER_BYTES + key_len;
  *out_size = (size_t)binary_len;
  return NULL;
}

cl_program cubert_ocl_disk_load(cubert_ocl_server *server, const char *key, const char *options,
                                size_t *out_size) {
  *out_size = 0;
  char path[4096];
  if (!cubert_ocl_disk_path(server, key, path, sizeof(path))) return NULL;
  size_t file_size = 0, offset = 0, size = 0;
  const char *reason = NULL;
  int missing = 0;
  unsigned char *data = cubert_cache_file_read_trusted(
      path, "opencl", HEADER_BYTES, CUBERT_OCL_DISK_MAX_FILE_BYTES, &file_size, &reason, &missing);
  if (data) reason = cubert_ocl_disk_parse(data, file_size, key, &offset, &size);
  if (reason) {
    free(data);
    if (!missing) {
      server->stats.disk_rejected++;
      cubert_log(CUBERT_LOG_INFO, "opencl", "program cache file '%s' rejected (%s); rebuilding",
                 path, reason);
    }
    return NULL;
  }
  cl_int err = CL_SUCCESS, binary_status = CL_SUCCESS;
  const unsigned char *bin = data + offset;
  cl_program program = clCreateProgramWithBinary(server->context, 1, &server->device, &size, &bin,
                                                 &binary_status, &err);
  free(data);
  if (err == CL_SUCCESS && binary_status == CL_SUCCESS)
    err = clBuildProgram(program, 1, &server->device, options, NULL, NULL);
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    if (program) clReleaseProgram(program);
    server->stats.disk_rejected++;
    cubert_log(CUBERT_LOG_INFO, "opencl",
               "program cache file '%s' rejected by the driver (%s); rebuilding", path,
               cubert_ocl_error_name(err != CL_SUCCESS ? err : binary_status));
    return NULL;
  }
  server->stats.disk_hits++;
  *out_size = size;
  return program;
}

void cubert_ocl_disk_refresh(cubert_ocl_server *server, cubert_ocl_program *program) {
  char path[4096];
  program->refresh = 0;
  const char *key = program->disk_key;
  if (!key || !cubert_ocl_disk_path(server, key, path, sizeof(path))) return;
  server->stats.disk_checks++;
  size_t size = 0;
  cl_int err =
      clGetProgramInfo(program->program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL);
  /* No binary from this driver: nothing to cache. */
  if (err != CL_SUCCESS || size == 0 || size > MAX_BINARY_BYTES) return;
  /* Nothing was added since the file was written or loaded. */
  if (size == program->disk_size) return;
  unsigned char *binary = malloc(size);
  if (!binary) return;
  if (clGetProgramInfo(program->program, CL_PROGRAM_BINARIES, sizeof(binary), &binary, NULL) !=
      CL_SUCCESS) {
    free(binary);
    return;
  }
  int error = cubert_cache_make_dirs(server->cache_dir, "opencl");
  if (error) {
    /* A folder that others can write was reported by the trust check already. */
    if (error != CUBERT_CACHE_UNTRUSTED) warn_once(server->cache_dir, "mkdir", error);
    free(binary);
    return;
  }
  unsigned char header[HEADER_BYTES];
  size_t key_len = strlen(key);
  memcpy(header, CACHE_MAGIC, 8);
  put_u32(header + 8, CACHE_FORMAT);
  put_u32(header + 12, (uint32_t)key_len);
  put_u64(header + 16, size);
  put_u64(header + 24, cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, binary, size));
  const void *parts[] = {header, key, binary};
  const size_t sizes[] = {HEADER_BYTES, key_len, size};
  error = cubert_cache_file_write(path, parts, sizes, 3);
  free(binary);
  if (error) {
    warn_once(server->cache_dir, "write a file", error);
    return;
  }
  server->stats.disk_writes++;
  if (program->disk_size) server->stats.disk_refreshes++;
  program->disk_size = size;
}

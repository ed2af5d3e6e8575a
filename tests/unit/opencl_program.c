/* The OpenCL server's programs: build options, the in-memory cache, the disk cache of program
   binaries (hits, every kind of damage, an unwritable folder, the write after the first
   launches and the refresh after launches at new local sizes), binaries another user could
   have planted (never loaded), the modes of what the cache writes, compilation errors with the
   build log, required features, and kernels without OpenCL source. */
#include "base/config.h"
#include "core_capture.h"
#include "cubert/kernels.h"
#include "opencl/build_log.h"
#include "opencl/device.h"
#include "opencl/disk_cache.h"
#include "opencl/kernel_source.h"
#include "opencl/program.h"
#include "opencl_test.h"

static const char *kFillSource =
    "__kernel void fill(__global int *out) { out[get_global_id(0)] = 7; }\n";

static cubert_kernel_def fill_def(void) {
  cubert_kernel_def def = {.name = "fill", .opencl_source = kFillSource, .opencl_entry = "fill"};
  return def;
}

static void cache_path(cubert_server *server, const cubert_kernel_def *def,
                       cubert_execution_mode mode, char *out, size_t capacity) {
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  char *options = cubert_ocl_build_options(def, mode);
  size_t len = strlen(def->opencl_source);
  char *key = cubert_ocl_disk_key(s, cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, def->opencl_source, len),
                                  len, options);
  cr_assert(cubert_ocl_disk_path(s, key, out, capacity));
  free(key);
  free(options);
}

static unsigned char *read_all(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
  cr_assert_eq(fread(data, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  *out_size = (size_t)size;
  return data;
}

static void write_all(const char *path, const unsigned char *data, size_t size) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, size, f), size);
  fclose(f);
}

/* Runs `def` over 16 units in cubes of `local` units (a divisor of 16), then syncs, and checks
   that every unit wrote 7. */
static void run_fill_local(cubert_server *server, const cubert_kernel_def *def, uint32_t local) {
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, def, 16 / local, local, 64);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  int values[16] = {0};
  OCL_OK(server->vtable->sync(server, f.st.stream));
  OCL_OK(server->vtable->read(server, f.st.stream, &f.ob, values, sizeof(values)));
  for (int i = 0; i < 16; ++i)
    cr_expect_eq(values[i], 7, "local size %u: unit %d wrote %d", local, i, values[i]);
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  ocl_test_fixture_release(&f);
}

static void run_fill(cubert_server *server, const cubert_kernel_def *def) {
  run_fill_local(server, def, 4);
}

/* No temporary files (names holding "tmp") are left behind in `dir`. */
static void expect_no_temp_files(const char *dir) {
  char listing[4200];
  snprintf(listing, sizeof(listing), "ls %s | grep -c tmp", dir);
  FILE *p = popen(listing, "r");
  int tmp_files = -1;
  cr_assert_eq(fscanf(p, "%d", &tmp_files), 1);
  pclose(p);
  cr_expect_eq(tmp_files, 0);
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The program of `def` in `mode` in the server's in-memory cache. */
static cubert_ocl_program *find_program(cubert_server *server, const cubert_kernel_def *def,
                                        cubert_execution_mode mode) {
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(cubert_ocl_server_of(server), def, mode, &k));
  return k->program;
}

/* Whether bytes[0..size) contain `text`. */
static int contains(const unsigned char *bytes, size_t size, const char *text) {
  size_t n = strlen(text);
  for (size_t i = 0; i + n <= size; ++i)
    if (memcmp(bytes + i, text, n) == 0) return 1;
  return 0;
}

Test(opencl_program, build_options) {
  cubert_kernel_def def = fill_def();
  def.opencl_options = "-DWIDTH=4";
  char *checked = cubert_ocl_build_options(&def, CUBERT_EXECUTION_CHECKED);
  char *validate = cubert_ocl_build_options(&def, CUBERT_EXECUTION_VALIDATE);
  char *unchecked = cubert_ocl_build_options(&def, CUBERT_EXECUTION_UNCHECKED);
  cr_expect_str_eq(checked, "-cl-std=CL1.2 -DCUBERT_CHECKED=1 -DCUBERT_MODE=0 -DWIDTH=4");
  cr_expect_str_eq(
      validate, "-cl-std=CL1.2 -DCUBERT_CHECKED=1 -DCUBERT_VALIDATE=1 -DCUBERT_MODE=1 -DWIDTH=4");
  cr_expect_str_eq(unchecked, "-cl-std=CL1.2 -DCUBERT_MODE=2 -DWIDTH=4");
  free(checked);
  free(validate);
  free(unchecked);
  def.opencl_options = NULL;
  char *plain = cubert_ocl_build_options(&def, CUBERT_EXECUTION_UNCHECKED);
  cr_expect_str_eq(plain, "-cl-std=CL1.2 -DCUBERT_MODE=2");
  free(plain);
}

/* -cl-nv- options (kernel.h) are dropped for compilers other than NVIDIA's, whatever their
   place; the other options keep their order and single spaces. */
Test(opencl_program, vendor_options_are_dropped_elsewhere) {
  char a[] = "-cl-std=CL1.2 -cl-nv-maxrregcount=128 -DW=4  -cl-nv-verbose";
  cubert_ocl_drop_options(a, "-cl-nv-");
  cr_expect_str_eq(a, "-cl-std=CL1.2 -DW=4");
  char b[] = "-cl-nv-verbose -DX=1";
  cubert_ocl_drop_options(b, "-cl-nv-");
  cr_expect_str_eq(b, "-DX=1");
  char c[] = "-cl-nv-verbose";
  cubert_ocl_drop_options(c, "-cl-nv-");
  cr_expect_str_eq(c, "");
  char d[] = "-cl-std=CL1.2 -cl-nvx -DY";
  cubert_ocl_drop_options(d, "-cl-nv-");
  cr_expect_str_eq(d, "-cl-std=CL1.2 -cl-nvx -DY");
}

Test(opencl_program, memory_cache_shares_programs_and_kernels) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def a = fill_def(), b = fill_def();
  cubert_ocl_kernel *ka = NULL, *ka2 = NULL, *kb = NULL, *ku = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &a, CUBERT_EXECUTION_CHECKED, &ka));
  OCL_OK(cubert_ocl_kernel_get(s, &a, CUBERT_EXECUTION_CHECKED, &ka2));
  cr_expect_eq(ka, ka2, "the same definition gives the same kernel object");
  OCL_OK(cubert_ocl_kernel_get(s, &b, CUBERT_EXECUTION_CHECKED, &kb));
  cr_expect_eq(kb, ka, "another definition with the same source and entry shares the kernel");
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.builds_from_source, 1);
  cr_expect_eq(stats.memory_hits, 1);
  /* Another mode means other build options: another program. */
  OCL_OK(cubert_ocl_kernel_get(s, &a, CUBERT_EXECUTION_UNCHECKED, &ku));
  cr_expect_neq(ku, ka);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).builds_from_source, 2);
  ocl_test_server_destroy(server);
}

Test(opencl_program, disk_cache_hit_after_the_memory_cache_is_gone) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
  cubert_ocl_cache_stats st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.builds_from_source, 1);
  cr_expect_eq(st.disk_writes, 0, "written after the first launch, not at build time");
  cr_expect_eq(st.disk_hits, 0);
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  cr_expect_not(file_exists(path));
  run_fill(server, &def);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1, "written at the sync");
  size_t size = 0;
  unsigned char *data = read_all(path, &size);
  cr_expect_eq(memcmp(data, "CUBRTCL", 8), 0, "magic");
  cr_expect_gt(size, 32);
  free(data);
  /* What a second process sees: no programs in memory, the file on disk. */
  cubert_ocl_server_clear_program_cache(server);
  OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
  st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.disk_hits, 1);
  cr_expect_eq(st.builds_from_source, 1, "no rebuild from source");
  cr_expect_eq(st.disk_rejected, 0);
  run_fill(server, &def); /* the program loaded from its binary runs */
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1,
               "a loaded binary that did not grow is not written again");
  /* The key names the device and driver: another driver version is another file. */
  char *saved = s->device_key;
  s->device_key = "cubert-opencl-program\ndriver some-other-version\n";
  char other[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, other, sizeof(other));
  s->device_key = saved;
  cr_expect_str_neq(other, path);
  ocl_test_server_destroy(server);
}

/* The disk cache keys on the build options in effect: another execution mode (other -D
   defines), other options of the definition (-cl-opt-disable) or options a driver adds from its
   environment (OCLGRIND_BUILD_OPTIONS, POCL_EXTRA_BUILD_FLAGS) make another entry, never a hit
   on the entry of a program built otherwise; each entry then serves its own program. */
Test(opencl_program, disk_cache_never_serves_a_program_built_with_other_options) {
  unsetenv("OCLGRIND_BUILD_OPTIONS");
  unsetenv("POCL_EXTRA_BUILD_FLAGS");
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def plain = fill_def(), opt_disable = fill_def();
  opt_disable.opencl_options = "-cl-opt-disable";
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &plain, CUBERT_EXECUTION_CHECKED, &k));
  run_fill(server, &plain);
  cr_assert_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1);
  /* Every variant below is looked up with an empty memory cache, as a new process would. */
  struct {
    const cubert_kernel_def *def;
    cubert_execution_mode mode;
    const char *env; /* OCLGRIND_BUILD_OPTIONS, or NULL */
  } variants[] = {
      {&plain, CUBERT_EXECUTION_VALIDATE, NULL},
      {&plain, CUBERT_EXECUTION_UNCHECKED, NULL},
      {&plain, CUBERT_EXECUTION_CHECKED | CUBERT_OCL_OWN_SAFE, NULL},
      {&opt_disable, CUBERT_EXECUTION_CHECKED, NULL},
      {&plain, CUBERT_EXECUTION_CHECKED, "-cl-opt-disable"},
  };
  const size_t n = sizeof variants / sizeof variants[0];
  char paths[6][4096];
  cache_path(server, &plain, CUBERT_EXECUTION_CHECKED, paths[n], sizeof paths[n]);
  for (size_t i = 0; i < n; ++i) {
    if (variants[i].env)
      setenv("OCLGRIND_BUILD_OPTIONS", variants[i].env, 1);
    else
      unsetenv("OCLGRIND_BUILD_OPTIONS");
    cubert_ocl_server_clear_program_cache(server);
    cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
    OCL_OK(cubert_ocl_kernel_get(s, variants[i].def, variants[i].mode, &k));
    cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
    cr_expect_eq(after.disk_hits, before.disk_hits, "variant %zu was served from another's entry",
                 i);
    cr_expect_eq(after.builds_from_source, before.builds_from_source + 1, "variant %zu", i);
    cache_path(server, variants[i].def, variants[i].mode, paths[i], sizeof paths[i]);
    for (size_t j = 0; j <= n; ++j)
      if (j < i || j == n) cr_expect_str_neq(paths[i], paths[j], "variants %zu and %zu", i, j);
  }
  /* Each variant was written when the memory cache was cleared: now each one hits its own. */
  for (size_t i = 0; i < n; ++i) {
    if (variants[i].env)
      setenv("OCLGRIND_BUILD_OPTIONS", variants[i].env, 1);
    else
      unsetenv("OCLGRIND_BUILD_OPTIONS");
    cubert_ocl_server_clear_program_cache(server);
    cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
    OCL_OK(cubert_ocl_kernel_get(s, variants[i].def, variants[i].mode, &k));
    cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
    cr_expect_eq(after.disk_hits, before.disk_hits + 1, "variant %zu: no hit on its own entry", i);
    cr_expect_eq(after.builds_from_source, before.builds_from_source, "variant %zu", i);
  }
  unsetenv("OCLGRIND_BUILD_OPTIONS");
  /* The key text names the driver's variable and its value. */
  char *key = cubert_ocl_disk_key(s, 1, 2, "-cl-std=CL1.2");
  cr_expect_null(strstr(key, "OCLGRIND_BUILD_OPTIONS"));
  free(key);
  setenv("POCL_EXTRA_BUILD_FLAGS", "-g", 1);
  key = cubert_ocl_disk_key(s, 1, 2, "-cl-std=CL1.2");
  cr_expect(strstr(key, "env POCL_EXTRA_BUILD_FLAGS=-g\n"), "key: %s", key);
  free(key);
  unsetenv("POCL_EXTRA_BUILD_FLAGS");
  ocl_test_server_destroy(server);
}

typedef void (*damage_fn)(unsigned char *data, size_t *size);
static void truncate_half(unsigned char *data, size_t *size) {
  (void)data;
  *size /= 2;
}
static void truncate_header(unsigned char *data, size_t *size) {
  (void)data;
  *size = 20;
}
static void empty_file(unsigned char *data, size_t *size) {
  (void)data;
  *size = 0;
}
static void flip_binary_byte(unsigned char *data, size_t *size) {
  data[*size - 1] ^= 0x5a;
}
static void flip_key_byte(unsigned char *data, size_t *size) {
  (void)size;
  data[40] ^= 0x01; /* inside the key text, which starts at byte 32 */
}
static void garbage(unsigned char *data, size_t *size) {
  for (size_t i = 0; i < *size; ++i) data[i] = (unsigned char)(i * 131u + 7u);
}
static void bad_length(unsigned char *data, size_t *size) {
  (void)size;
  data[16] ^= 0x10; /* binary length field */
}
static void bad_checksum(unsigned char *data, size_t *size) {
  (void)size;
  data[24] ^= 0x01; /* checksum field */
}

Test(opencl_program, damaged_cache_files_are_rebuilt_and_replaced) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
  /* A program that never ran is written when it is freed. */
  cubert_ocl_server_clear_program_cache(server);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1);
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  const struct {
    const char *name;
    damage_fn fn;
  } cases[] = {
      {"truncated to half", truncate_half}, {"truncated header", truncate_header},
      {"empty file", empty_file},           {"flipped binary byte", flip_binary_byte},
      {"wrong key text", flip_key_byte},    {"garbage", garbage},
      {"wrong length", bad_length},         {"wrong checksum", bad_checksum},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    size_t size = 0;
    unsigned char *data = read_all(path, &size);
    cases[i].fn(data, &size);
    write_all(path, data, size);
    free(data);
    cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
    cubert_ocl_server_clear_program_cache(server);
    OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
    cubert_ocl_server_clear_program_cache(server); /* writes the rebuilt program */
    cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
    cr_expect_eq(after.disk_rejected, before.disk_rejected + 1, "%s: not rejected", cases[i].name);
    cr_expect_eq(after.builds_from_source, before.builds_from_source + 1, "%s: not rebuilt",
                 cases[i].name);
    cr_expect_eq(after.disk_writes, before.disk_writes + 1, "%s: not replaced", cases[i].name);
    cr_expect_eq(after.disk_hits, before.disk_hits, "%s: loaded anyway", cases[i].name);
    /* The replacement is valid: the next fresh start loads it. */
    OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
    cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_hits, after.disk_hits + 1,
                 "%s: the rewritten file is not used", cases[i].name);
  }
  run_fill(server, &def);
  /* No temporary files are left behind. */
  expect_no_temp_files(s->cache_dir);
  ocl_test_server_destroy(server);
}

/* The binary part of a cache file read by read_all (after the header and the key text). */
static const unsigned char *file_binary(const unsigned char *data, size_t size, size_t *out_size) {
  cr_assert_gt(size, 32);
  size_t key_len =
      (size_t)data[12] | (size_t)data[13] << 8 | (size_t)data[14] << 16 | (size_t)data[15] << 24;
  cr_assert_gt(size, 32 + key_len);
  *out_size = size - 32 - key_len;
  return data + 32 + key_len;
}

/* The file is written at the first sync after a launch (so it holds what the launch compiled:
   on PoCL the work-group function for that local size), the binary is read back once per new
   (kernel, local size), never by the launch itself, and a fresh start loads a binary with
   specialized code inside that builds and runs at that local size and at others. */
Test(opencl_program, disk_cache_is_written_after_the_first_launch) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = fill_def();
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &def, 4, 4, 64);
  ocl_test_stream st = f.st;
  cubert_launch launch = f.launch;
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  cr_expect_not(file_exists(path), "nothing is written before the launch completed");
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_checks, 0, "the launch reads nothing");
  OCL_OK(server->vtable->sync(server, st.stream));
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.disk_writes, 1);
  cr_expect_eq(stats.disk_checks, 1);
  cr_expect_eq(stats.disk_refreshes, 0);
  cr_assert(file_exists(path), "written at the sync after the first launch");

  /* The same local size again: nothing more is read. */
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->vtable->sync(server, st.stream));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_checks, 1);
  /* A new local size: read back once, at the next sync. */
  launch.cube_count[0] = 2;
  launch.cube_dim.x = 8;
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_checks, 1);
  OCL_OK(server->vtable->sync(server, st.stream));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_checks, 2);
  OCL_OK(server->vtable->launch(server, st.stream, &launch));
  OCL_OK(server->vtable->sync(server, st.stream));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_checks, 2);
  stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.disk_writes - stats.disk_refreshes, 1, "one first write");
  cr_expect_not(cubert_stream_errors_pending(st.errors));
  ocl_test_fixture_release(&f);

  size_t size = 0, binary_size = 0;
  unsigned char *data = read_all(path, &size);
  const unsigned char *binary = file_binary(data, size, &binary_size);
  if (binary_size > 8 && memcmp(binary, "poclbin", 7) == 0) {
    /* A PoCL binary bundles the program's kernel cache folder, one entry per compiled
       work-group function: "/fill/4-1-1-..." is the one the first launch compiled. */
    cr_expect(contains(binary, binary_size, "/fill/4-1-1-"),
              "the cached PoCL binary holds the work-group function compiled at the first "
              "launch");
  } else {
    cr_log_info("not a PoCL binary: its content is not inspected");
  }
  free(data);

  /* What a new process sees: the file, with that code inside, loads, builds and runs. */
  cubert_ocl_server_clear_program_cache(server);
  stats = cubert_ocl_server_cache_stats(server);
  run_fill_local(server, &def, 4);
  run_fill_local(server, &def, 8);
  run_fill_local(server, &def, 2);
  run_fill_local(server, &def, 16);
  cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_hits, stats.disk_hits + 1);
  cr_expect_eq(after.builds_from_source, stats.builds_from_source, "no rebuild from source");
  cr_expect_eq(after.disk_rejected, stats.disk_rejected);
  ocl_test_server_destroy(server);
}

/* When the binary read back after a launch at a new local size differs in size from the file,
   the file is rewritten (temporary file and rename, same key and format), the new file loads,
   and a damaged refreshed file is still rejected and rebuilt. The driver's growth is simulated
   by making the server believe the file holds a shorter binary, so this holds on any
   driver. */
Test(opencl_program, refresh_rewrites_the_file_when_the_binary_grew) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  run_fill_local(server, &def, 4);
  cr_assert_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1);
  cubert_ocl_program *p = find_program(server, &def, CUBERT_EXECUTION_CHECKED);
  size_t real = p->disk_size;
  cr_assert_gt(real, 1);
  p->disk_size = real - 1;
  /* Garbage in the file: only a rewrite makes it loadable again. */
  write_all(path, (const unsigned char *)"stale", 5);

  run_fill_local(server, &def, 4); /* no new local size: no refresh */
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_writes, 1);
  run_fill_local(server, &def, 8);
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.disk_writes, 2, "rewritten at the sync after the new local size");
  cr_expect_eq(stats.disk_refreshes, 1);
  cr_expect_eq(p->disk_size, real);
  size_t size = 0, binary_size = 0;
  unsigned char *data = read_all(path, &size);
  file_binary(data, size, &binary_size);
  cr_expect_eq(binary_size, real, "the file holds the driver's binary");
  free(data);
  /* No temporary files are left behind. */
  expect_no_temp_files(s->cache_dir);

  /* The refreshed file loads and runs. */
  cubert_ocl_server_clear_program_cache(server);
  stats = cubert_ocl_server_cache_stats(server);
  run_fill_local(server, &def, 8);
  cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_hits, stats.disk_hits + 1);
  cr_expect_eq(after.builds_from_source, stats.builds_from_source);

  /* A damaged refreshed file is rejected, rebuilt from source and written again. */
  data = read_all(path, &size);
  flip_binary_byte(data, &size);
  write_all(path, data, size);
  free(data);
  cubert_ocl_server_clear_program_cache(server);
  stats = cubert_ocl_server_cache_stats(server);
  run_fill_local(server, &def, 4);
  after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_rejected, stats.disk_rejected + 1);
  cr_expect_eq(after.builds_from_source, stats.builds_from_source + 1);
  cr_expect_eq(after.disk_writes, stats.disk_writes + 1, "the rebuilt program is written");
  cubert_ocl_server_clear_program_cache(server);
  run_fill_local(server, &def, 4);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_hits, after.disk_hits + 1);
  ocl_test_server_destroy(server);
}

/* Without a disk cache, launches at new local sizes read no binary back. */
Test(opencl_program, no_refresh_without_a_disk_cache) {
  cubert_server *server = ocl_test_server();
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", cubert_ocl_server_of(server)->cache_dir);
  OCL_OK(cubert_ocl_server_set_cache_dir(server, NULL));
  cubert_kernel_def def = fill_def();
  run_fill_local(server, &def, 4);
  run_fill_local(server, &def, 8);
  cubert_ocl_server_clear_program_cache(server);
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.disk_checks, 0);
  cr_expect_eq(stats.disk_writes, 0);
  OCL_OK(cubert_ocl_server_set_cache_dir(server, dir)); /* so that the folder is removed */
  ocl_test_server_destroy(server);
}

Test(opencl_program, unwritable_cache_folder_warns_once_and_still_builds) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  /* A folder under a regular file cannot be created, even by root. */
  char file[4200], dir[4300];
  snprintf(file, sizeof(file), "%s/not-a-folder", s->cache_dir);
  write_all(file, (const unsigned char *)"x", 1);
  snprintf(dir, sizeof(dir), "%s/cache", file);
  OCL_OK(cubert_ocl_server_set_cache_dir(server, dir));
  cr_expect_eq(cubert_ocl_disk_warning_count(), 0);
  cubert_kernel_def a = fill_def();
  cubert_kernel_def b = {.name = "fill2",
                         .opencl_source = "__kernel void fill2(__global int *o) { o[0] = 2; }",
                         .opencl_entry = "fill2"};
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &a, CUBERT_EXECUTION_CHECKED, &k));
  OCL_OK(cubert_ocl_kernel_get(s, &b, CUBERT_EXECUTION_CHECKED, &k));
  cubert_ocl_server_clear_program_cache(server); /* both programs try to write their file */
  cr_expect_eq(cubert_ocl_disk_warning_count(), 1, "one warning per process");
  cubert_ocl_cache_stats st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.builds_from_source, 2);
  cr_expect_eq(st.disk_writes, 0);
  run_fill(server, &a);
  ocl_test_server_destroy(server);
}

/* The mode bits of `path` (permissions only). */
static unsigned mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "stat(%s)", path);
  return (unsigned)st.st_mode & 07777u;
}

/* How many times `needle` occurs in `text`. */
static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) ++n;
  return n;
}

/* Looks `def` up as a new process would (nothing in memory) and returns what was logged. */
static const char *fresh_lookup_logged(cubert_server *server, const cubert_kernel_def *def,
                                       core_capture *cap) {
  cubert_ocl_kernel *k = NULL;
  cubert_ocl_server_clear_program_cache(server);
  cr_assert(core_capture_begin(cap));
  cubert_status st =
      cubert_ocl_kernel_get(cubert_ocl_server_of(server), def, CUBERT_EXECUTION_CHECKED, &k);
  const char *text = core_capture_end(cap);
  OCL_OK(st);
  return text;
}

/* A program binary is code in the user's context (a PoCL binary carries host code): one that
   others can write (0666), or in a folder others can write, is never loaded. The program is
   built from source and one warning names the path, the mode and the fix; a bad file is then
   replaced by this user's own (0600), while nothing is written into a bad folder. */
Test(opencl_program, binaries_others_can_write_are_not_loaded) {
  setenv("CUBERT_LOG", "warn", 1);
  cubert_config_reload_for_tests();
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
  cubert_ocl_server_clear_program_cache(server); /* writes the file */
  char path[4096], text[4300];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  cr_assert(file_exists(path));

  cr_assert_eq(chmod(path, 0666), 0);
  cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
  core_capture cap;
  const char *log = fresh_lookup_logged(server, &def, &cap);
  cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_hits, before.disk_hits, "a 0666 binary was loaded");
  cr_expect_eq(after.builds_from_source, before.builds_from_source + 1);
  cr_expect_eq(after.disk_rejected, before.disk_rejected + 1);
  snprintf(text, sizeof text, "the cache file '%s' has mode 0666", path);
  cr_expect_eq(occurrences(log, text), 1, "one warning naming the file: %s", log);
  cr_expect(strstr(log, "rm '"), "the fix: %s", log);
  cubert_ocl_server_clear_program_cache(server); /* writes the rebuilt program */
  cr_expect_eq(mode_of(path), 0600u, "the file was replaced by this user's");
  fresh_lookup_logged(server, &def, &cap);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_hits, after.disk_hits + 1);

  cr_assert_eq(chmod(s->cache_dir, 0777), 0);
  before = cubert_ocl_server_cache_stats(server);
  log = fresh_lookup_logged(server, &def, &cap);
  cubert_ocl_server_clear_program_cache(server); /* would write the file */
  after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_hits, before.disk_hits, "a binary in a 0777 folder was loaded");
  cr_expect_eq(after.disk_writes, before.disk_writes, "written into a 0777 folder");
  snprintf(text, sizeof text, "the cache folder '%s' has mode 0777", s->cache_dir);
  cr_expect_eq(occurrences(log, text), 1, "one warning naming the folder: %s", log);
  cr_expect(strstr(log, "chmod go-w '"), "the fix: %s", log);
  cr_assert_eq(chmod(s->cache_dir, 0700), 0);
  fresh_lookup_logged(server, &def, &cap);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_hits, after.disk_hits + 1,
               "the folder is used again once fixed");
  run_fill(server, &def);
  ocl_test_server_destroy(server);
  unsetenv("CUBERT_LOG");
}

/* A program binary that another user owns is never loaded, even by root. */
Test(opencl_program, a_binary_of_another_user_is_not_loaded) {
  if (geteuid() != 0)
    cr_skip_test("chown to uid 65534 needs root; this case runs where the tests run as root (CI)");
  setenv("CUBERT_LOG", "warn", 1);
  cubert_config_reload_for_tests();
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = fill_def();
  cubert_ocl_kernel *k = NULL;
  OCL_OK(cubert_ocl_kernel_get(cubert_ocl_server_of(server), &def, CUBERT_EXECUTION_CHECKED, &k));
  cubert_ocl_server_clear_program_cache(server); /* writes the file */
  char path[4096], text[4300];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  cr_assert_eq(chown(path, 65534, 65534), 0);
  cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
  core_capture cap;
  const char *log = fresh_lookup_logged(server, &def, &cap);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_hits, before.disk_hits,
               "another user's binary was loaded");
  snprintf(text, sizeof text, "the cache file '%s' is owned by uid 65534, not by you (uid 0)",
           path);
  cr_expect_eq(occurrences(log, text), 1, "%s", log);
  ocl_test_server_destroy(server);
  unsetenv("CUBERT_LOG");
}

/* Under umask 000 the folders the cache creates are 0700 and its files 0600 (they were 0755
   and 0666: binaries any user could replace). */
Test(opencl_program, cache_files_are_private_whatever_the_umask) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  char top[4200], dir[4300];
  snprintf(top, sizeof top, "%s/a", s->cache_dir);
  snprintf(dir, sizeof dir, "%s/opencl", top);
  OCL_OK(cubert_ocl_server_set_cache_dir(server, dir));
  cubert_kernel_def def = fill_def();
  cubert_ocl_kernel *k = NULL;
  mode_t old = umask(0);
  OCL_OK(cubert_ocl_kernel_get(s, &def, CUBERT_EXECUTION_CHECKED, &k));
  cubert_ocl_server_clear_program_cache(server); /* writes the file */
  umask(old);
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  cr_expect_eq(mode_of(top), 0700u, "folder mode %04o", mode_of(top));
  cr_expect_eq(mode_of(dir), 0700u, "folder mode %04o", mode_of(dir));
  cr_expect_eq(mode_of(path), 0600u, "file mode %04o", mode_of(path));
  ocl_test_server_destroy(server);
}

Test(opencl_program, compile_error_returns_the_build_log) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = {
      .name = "broken",
      .opencl_source = "__kernel void broken(__global float *a) { a[0] = undefined_thing; }",
      .opencl_entry = "broken"};
  cubert_ocl_kernel *k = NULL;
  cubert_status s =
      cubert_ocl_kernel_get(cubert_ocl_server_of(server), &def, CUBERT_EXECUTION_CHECKED, &k);
  cr_assert_not_null(s);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  const char *log = cubert_status_build_log(s);
  cr_assert_not_null(log);
  cr_expect(strstr(log, "undefined_thing") != NULL, "the log holds the compiler's message: %s",
            log);
  const char *m = cubert_status_message(s);
  cr_expect(strstr(m, "broken") && strstr(m, "CL_BUILD_PROGRAM_FAILURE"), "%s", m);
  cr_expect(strstr(m, "undefined_thing") != NULL, "the message includes the log: %s", m);
  cubert_status_free(s);
  /* A failed build is not cached: the server stays usable. */
  cubert_kernel_def good = fill_def();
  OCL_OK(cubert_ocl_kernel_get(cubert_ocl_server_of(server), &good, CUBERT_EXECUTION_CHECKED, &k));
  ocl_test_server_destroy(server);
}

Test(opencl_program, missing_entry_point) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = fill_def();
  def.opencl_entry = "no_such_entry";
  cubert_ocl_kernel *k = NULL;
  cubert_status s =
      cubert_ocl_kernel_get(cubert_ocl_server_of(server), &def, CUBERT_EXECUTION_CHECKED, &k);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION, "%s", cubert_status_message(s));
  cr_expect(strstr(cubert_status_message(s), "no_such_entry") != NULL, "%s",
            cubert_status_message(s));
  cubert_status_free(s);
  ocl_test_server_destroy(server);
}

Test(opencl_program, kernel_without_opencl_source) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = {.name = "cpu_only_kernel"};
  ocl_test_stream st;
  ocl_test_stream_init(server, &st);
  cubert_launch launch = {.kernel = &def, .cube_count = {1, 1, 1}, .cube_dim = {1, 1, 1}};
  cubert_status s = server->vtable->launch(server, st.stream, &launch);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  const char *m = cubert_status_message(s);
  cr_expect(strstr(m, "cpu_only_kernel") && strstr(m, "opencl"), "names kernel and backend: %s", m);
  cubert_status_free(s);
  ocl_test_stream_free(server, &st);
  ocl_test_server_destroy(server);
}

Test(opencl_program, required_features_are_checked_before_compiling) {
  cubert_device_properties props;
  memset(&props, 0, sizeof(props));
  snprintf(props.name, sizeof(props.name), "fake device");
  cubert_kernel_def def = {.name = "dgemm",
                           .opencl_source = "garbage that never compiles",
                           .flags = CUBERT_KERNEL_NEEDS_FP64};
  cubert_status s = cubert_ocl_check_kernel_features(&props, &def);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  const char *m = cubert_status_message(s);
  cr_expect(strstr(m, "fp64") && strstr(m, "dgemm") && strstr(m, "fake device"), "%s", m);
  cubert_status_free(s);
  props.features = CUBERT_FEATURE_FP64;
  cr_expect_null(cubert_ocl_check_kernel_features(&props, &def));
  def.flags = CUBERT_KERNEL_NEEDS_FP16;
  s = cubert_ocl_check_kernel_features(&props, &def);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  cr_expect(strstr(cubert_status_message(s), "fp16") != NULL, "%s", cubert_status_message(s));
  cubert_status_free(s);

  /* On a real server whose device lacks fp64, nothing is compiled. */
  cubert_server *server = ocl_test_server();
  server->properties.features &= ~(uint32_t)CUBERT_FEATURE_FP64;
  def.flags = CUBERT_KERNEL_NEEDS_FP64;
  cubert_ocl_kernel *k = NULL;
  s = cubert_ocl_kernel_get(cubert_ocl_server_of(server), &def, CUBERT_EXECUTION_CHECKED, &k);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  cr_expect(strstr(cubert_status_message(s), "fp64") != NULL, "%s", cubert_status_message(s));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).builds_from_source, 0);
  cubert_status_free(s);
  ocl_test_server_destroy(server);
}

/* Drivers that ignore #line (NVIDIA names the program `<kernel>` and counts physical lines):
   their locations are mapped through the source's directives to the kernel file and line. */
Test(opencl_program, build_log_locations_map_through_line_directives) {
  const char *source = "#line 1 \"a.cube.c\"\nfirst\nsecond\n#line 10 \"b.cube.c\"\nx\ny\n";
  char *log = strdup("<kernel>:6:3: error: bad\n  y\n<kernel>:2:1: note: here\n<built-in>:9: x");
  log = cubert_ocl_log_relocate(source, log);
  cr_assert_str_eq(log,
                   "b.cube.c:11:3: error: bad\n  y\na.cube.c:1:1: note: here\n<built-in>:9: x");
  free(log);
  /* A log that already names files, or a source without directives, is returned as it is. */
  char *plain = strdup("/k/a.cube.c:4:2: error: bad");
  cr_assert_str_eq(cubert_ocl_log_relocate(source, plain), "/k/a.cube.c:4:2: error: bad");
  free(plain);
  char *undirected = strdup("<kernel>:2:1: error");
  cr_assert_str_eq(cubert_ocl_log_relocate("a\nb\n", undirected), "<kernel>:2:1: error");
  free(undirected);
}

/* Runs `def` over 16 units (cubes of 4) and returns what unit 0 wrote, checking that all 16
     wrote the same value. */
static int run_value(cubert_server *server, const cubert_kernel_def *def) {
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, def, 4, 4, 64);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  int values[16] = {0};
  OCL_OK(server->vtable->sync(server, f.st.stream));
  OCL_OK(server->vtable->read(server, f.st.stream, &f.ob, values, sizeof(values)));
  for (int i = 1; i < 16; ++i) cr_expect_eq(values[i], values[0], "unit %d", i);
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  ocl_test_fixture_release(&f);
  return values[0];
}

/* Issue 10 #6: a definition whose source (or options) buffer is rewritten in place must run
   the new text, not the program built for the old one (the cache was keyed by address). */
Test(opencl_program, source_rewritten_in_place_runs_the_new_program) {
  cubert_server *server = ocl_test_server();
  char *source = malloc(256), *options = malloc(64);
  cr_assert(source && options);
  snprintf(source, 256, "__kernel void fill(__global int *out) { out[get_global_id(0)] = 7; }\n");
  cubert_kernel_def def = {.name = "fill", .opencl_source = source, .opencl_entry = "fill"};
  cr_expect_eq(run_value(server, &def), 7);
  cr_expect_eq(run_value(server, &def), 7);
  /* Same length, other value. */
  snprintf(source, 256, "__kernel void fill(__global int *out) { out[get_global_id(0)] = 8; }\n");
  cr_expect_eq(run_value(server, &def), 8, "same-length rewrite ran the old program");
  /* Longer text. */
  snprintf(source, 256,
           "__kernel void fill(__global int *out) { out[get_global_id(0)] = 1234 + 1; }\n");
  cr_expect_eq(run_value(server, &def), 1235, "longer rewrite ran the old program");
  /* Back to an earlier text: served from the in-memory program cache, no new build. */
  uint64_t builds = cubert_ocl_server_cache_stats(server).builds_from_source;
  snprintf(source, 256, "__kernel void fill(__global int *out) { out[get_global_id(0)] = 8; }\n");
  cr_expect_eq(run_value(server, &def), 8);
  cr_expect_eq(cubert_ocl_server_cache_stats(server).builds_from_source, builds);
  /* Options rewritten in place. */
  snprintf(source, 256,
           "__kernel void fill(__global int *out) { out[get_global_id(0)] = VALUE; }\n");
  snprintf(options, 64, "-DVALUE=5");
  def.opencl_options = options;
  cr_expect_eq(run_value(server, &def), 5);
  snprintf(options, 64, "-DVALUE=6");
  cr_expect_eq(run_value(server, &def), 6, "options rewrite ran the old program");
  ocl_test_server_destroy(server);
  free(source);
  free(options);
}

/* Definitions whose strings live in read-only memory (string literals, the kernel library)
   keep the launch's pointer fast path: the launch never reads their text again. */
Test(opencl_program, read_only_sources_keep_the_pointer_fast_path) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = fill_def();
  cr_expect_eq(run_value(server, &def), 7);
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  int found = 0;
  for (size_t i = 0; i < CUBERT_OCL_KERNEL_BUCKETS; ++i)
    for (cubert_ocl_kernel_ref *r = s->kernel_refs[i]; r; r = r->next)
      if (r->def == &def) {
        found = 1;
        cr_expect(r->immutable, "a string literal source is in read-only memory");
      }
  cr_expect(found);
  char *heap = strdup(kFillSource);
  cubert_kernel_def dyn = {.name = "fill", .opencl_source = heap, .opencl_entry = "fill"};
  cr_expect_eq(run_value(server, &dyn), 7);
  for (size_t i = 0; i < CUBERT_OCL_KERNEL_BUCKETS; ++i)
    for (cubert_ocl_kernel_ref *r = s->kernel_refs[i]; r; r = r->next)
      if (r->def == &dyn) cr_expect_not(r->immutable, "a heap source can change");
  ocl_test_server_destroy(server);
  free(heap);
}

/* Issue 10 #10: a FIFO at a cache file's path made the launch wait forever for a writer (the
   file was opened blocking). Any non-regular file is a miss: the program is built from source
   and runs, and the refresh replaces the entry with a regular file. */
Test(opencl_program, non_regular_cache_entries_are_skipped_without_blocking, .timeout = 60) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  mkdir(s->cache_dir, 0755); /* may exist */
  cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo(%s)", path);
  run_fill(server, &def); /* hung here */
  cubert_ocl_cache_stats st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.builds_from_source, 1);
  cr_expect_eq(st.disk_hits, 0);
  cr_expect_eq(st.disk_rejected, 1, "the FIFO counts as a damaged entry");
  cr_expect_eq(st.disk_writes, 1, "replaced at the sync");
  struct stat sb;
  cr_assert_eq(lstat(path, &sb), 0);
  cr_expect(S_ISREG(sb.st_mode), "the FIFO was replaced by a regular file");
  /* A directory where the file should be: a miss too, and the program still runs. */
  cubert_ocl_server_clear_program_cache(server);
  cr_assert_eq(remove(path), 0);
  cr_assert_eq(mkdir(path, 0755), 0);
  run_fill(server, &def);
  st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.builds_from_source, 2);
  cr_expect_eq(st.disk_rejected, 2);
  cr_assert_eq(rmdir(path), 0);
  ocl_test_server_destroy(server);
}

/* Issue 10 #10: entries larger than any valid file are refused before they are read. */
Test(opencl_program, oversized_cache_entries_are_refused_unread) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  cubert_kernel_def def = fill_def();
  char path[4096];
  cache_path(server, &def, CUBERT_EXECUTION_CHECKED, path, sizeof(path));
  mkdir(s->cache_dir, 0755); /* may exist */
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite("CUBRTCL", 1, 8, f);
  fclose(f);
  cr_assert_eq(truncate(path, (off_t)CUBERT_OCL_DISK_MAX_FILE_BYTES + 1), 0); /* sparse */
  run_fill(server, &def);
  cubert_ocl_cache_stats st = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(st.disk_rejected, 1);
  cr_expect_eq(st.builds_from_source, 1);
  ocl_test_server_destroy(server);
}

/* The parser of cache files in memory (what the disk cache reader and tests/fuzz use). */
Test(opencl_program, disk_cache_parser_validates_every_field) {
  const char *key = "key text";
  size_t key_len = strlen(key), bin_len = 5;
  unsigned char file[64] = {0};
  memcpy(file, "CUBRTCL", 8);
  file[8] = 1; /* format */
  file[12] = (unsigned char)key_len;
  file[16] = (unsigned char)bin_len;
  memcpy(file + 32, key, key_len);
  memcpy(file + 32 + key_len, "abcde", bin_len);
  uint64_t sum = cubert_ocl_fnv1a(CUBERT_OCL_FNV_SEED, "abcde", bin_len);
  for (int i = 0; i < 8; ++i) file[24 + i] = (unsigned char)(sum >> (8 * i));
  size_t size = 32 + key_len + bin_len, offset = 0, len = 0;
  cr_expect_null(cubert_ocl_disk_parse(file, size, key, &offset, &len));
  cr_expect_eq(offset, 32 + key_len);
  cr_expect_eq(len, bin_len);
  for (size_t cut = 0; cut < size; ++cut)
    cr_expect_not_null(cubert_ocl_disk_parse(file, cut, key, &offset, &len), "cut at %zu", cut);
  cr_expect_not_null(cubert_ocl_disk_parse(file, size, "other key", &offset, &len));
  for (size_t i = 0; i < size; ++i) {
    file[i] ^= 0x40;
    cr_expect_not_null(cubert_ocl_disk_parse(file, size, key, &offset, &len), "byte %zu", i);
    file[i] ^= 0x40;
  }
}

/* CUBERT_OPENCL_BINARY_CACHE: `auto` leaves the disk cache off on PoCL only (server.c says
   why), `off` turns it off everywhere, `on` everywhere. The folder is CUBERT_CACHE_DIR's. */
static int server_has_disk_cache(const char *policy) {
  char dir[2200];
  ocl_test_temp_dir(dir, sizeof(dir));
  setenv("CUBERT_CACHE_DIR", dir, 1);
  if (policy)
    setenv("CUBERT_OPENCL_BINARY_CACHE", policy, 1);
  else
    unsetenv("CUBERT_OPENCL_BINARY_CACHE");
  cubert_config_reload_for_tests();
  cubert_server *server = NULL;
  OCL_OK(cubert_opencl_backend.create(cubert_test_device_spec(ocl_test_selector(NULL)), &server));
  const char *cache_dir = cubert_ocl_server_of(server)->cache_dir;
  int on = cache_dir != NULL;
  if (on)
    cr_expect(strncmp(cache_dir, dir, strlen(dir)) == 0, "cache folder %s is not under %s",
              cache_dir, dir);
  server->vtable->destroy(server);
  rmdir(dir);
  return on;
}

Test(opencl_program, binary_cache_policy_follows_the_environment) {
  ocl_test_server_destroy(ocl_test_server()); /* skips when there is no OpenCL device */
  cubert_server *probe = ocl_test_server();
  char *platform =
      cubert_ocl_platform_string(cubert_ocl_server_of(probe)->platform, CL_PLATFORM_NAME);
  int is_pocl = platform && strstr(platform, "Portable Computing Language") != NULL;
  free(platform);
  ocl_test_server_destroy(probe);
  cr_expect_eq(server_has_disk_cache(NULL), !is_pocl);
  cr_expect_eq(server_has_disk_cache("auto"), !is_pocl);
  cr_expect_eq(server_has_disk_cache("off"), 0);
  cr_expect_eq(server_has_disk_cache("on"), 1);
  unsetenv("CUBERT_OPENCL_BINARY_CACHE");
  unsetenv("CUBERT_CACHE_DIR");
  cubert_config_reload_for_tests();
}

/* A kernel-language kernel is built alone (backends/opencl/kernel_source.c): the other entry
   points of its file and their body functions are blanked with spaces, newlines kept, so only
   its wrapper, its body, the prototypes and the helpers remain. */
Test(opencl_program, kernel_only_source_blanks_the_other_entry_points) {
  static const char text[] =
      "#line 1 \"k.cube.c\"\nstatic inline void a_body_(int x);\n"
      "__kernel void a(__global int *o) { __local int s; { a_body_(o[0]); } }\n"
      "static inline void a_body_(int x) {\n  if (x) { x = '}'; }\n}\n"
      "static inline void helper_body_(int y) { (void)y; }\n"
      "__kernel void ab(__global int *o) {\n  o[0] = 2;\n}\n"
      "static inline void ab_body_(int x) { (void)x; }\n"
      "__kernel void b(__global int *o) { o[0] = 3; }\n";
  char *only = cubert_ocl_kernel_only_source(text, "ab");
  cr_assert_not_null(only);
  cr_expect_eq(strlen(only), strlen(text), "blanked, not cut: offsets and lines stay");
  cr_expect_not_null(strstr(only, "__kernel void ab("), "%s", only);
  cr_expect_null(strstr(only, "__kernel void a("), "%s", only);
  cr_expect_null(strstr(only, "__kernel void b("), "%s", only);
  cr_expect_not_null(strstr(only, "static inline void a_body_(int x);"), "prototypes stay");
  cr_expect_null(strstr(only, "static inline void a_body_(int x) {"), "%s", only);
  cr_expect_null(strstr(only, "x = '}'"), "the whole body, past a brace in a literal: %s", only);
  cr_expect_not_null(strstr(only, "static inline void ab_body_(int x) { (void)x; }"), "%s", only);
  cr_expect_not_null(strstr(only, "static inline void helper_body_(int y) { (void)y; }"),
                     "not a kernel's body: %s", only);
  int lines_in = 0, lines_out = 0;
  for (const char *p = text; *p; ++p) lines_in += *p == '\n';
  for (const char *p = only; *p; ++p) lines_out += *p == '\n';
  cr_expect_eq(lines_out, lines_in);
  free(only);
  cr_expect_null(cubert_ocl_kernel_only_source(text, "c"), "no such entry: build the whole text");
  cr_expect_null(cubert_ocl_kernel_only_source("__kernel void a(int x) { {", "b"),
                 "unbalanced braces: nothing found");
}

/* Two library kernels of one kernel-language file get a program each, holding its own entry
   point only, and both run (the tuner compiles only the candidates it launches). */
Test(opencl_program, library_kernels_of_one_file_build_a_program_each) {
  cubert_server *server = ocl_test_server();
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  const cubert_kernel_def *add = &cubert_kernel_add_f32, *mul = &cubert_kernel_mul_f32;
  cr_assert_eq(add->opencl_source, mul->opencl_source, "one file: one flattened text");
  const cubert_ocl_cache_stats before = cubert_ocl_server_cache_stats(server);
  cubert_ocl_kernel *ka = NULL, *km = NULL;
  OCL_OK(cubert_ocl_kernel_get(s, add, CUBERT_EXECUTION_CHECKED, &ka));
  OCL_OK(cubert_ocl_kernel_get(s, mul, CUBERT_EXECUTION_CHECKED, &km));
  cr_expect_neq(ka->program, km->program);
  const cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.builds_from_source + after.disk_hits,
               before.builds_from_source + before.disk_hits + 2, "two programs built or loaded");
  cr_expect_not_null(strstr(ka->program->source, "__kernel void add_f32("));
  cr_expect_null(strstr(ka->program->source, "__kernel void mul_f32("));
  cr_expect_eq(strlen(ka->program->source), strlen(add->opencl_source));
  ocl_test_server_destroy(server);
}

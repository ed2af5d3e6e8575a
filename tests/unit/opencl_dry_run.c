/* The OpenCL server's part of dry run (cubecl dry_run, newer than the seed; backends/opencl/
   prepare.c): prepare builds the program as a first launch would, writes its disk cache file at
   once, enqueues nothing, and fails as the launch would; through a client, a dry run under
   CUBERT_DRY_RUN=1 warms the disk cache so that a new device instance (what a new process
   sees) loads the program instead of building it. */
#include <dirent.h>

#include "base/config.h"
#include "client.h"
#include "cubert/kernels.h"
#include "cubert/server/compiler.h"
#include "opencl_test.h"

static const char *kFillSource =
    "__kernel void fill(__global int *out) { out[get_global_id(0)] = 7; }\n";

/* Regular files in `dir` (0 when it does not exist). */
static int file_count(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

static void write_pattern(ocl_test_fixture *f, int value) {
  int v[16];
  for (int i = 0; i < 16; ++i) v[i] = value;
  OCL_OK(f->server->vtable->write(f->server, f->st.stream, &f->ob, v, sizeof v));
}

static void expect_all(ocl_test_fixture *f, int value, const char *when) {
  int v[16] = {0};
  OCL_OK(f->server->vtable->sync(f->server, f->st.stream));
  OCL_OK(f->server->vtable->read(f->server, f->st.stream, &f->ob, v, sizeof v));
  for (int i = 0; i < 16; ++i) cr_expect_eq(v[i], value, "%s: unit %d holds %d", when, i, v[i]);
}

Test(opencl_dry_run, prepare_builds_writes_the_disk_cache_and_runs_nothing) {
  cubert_server *server = ocl_test_server();
  cr_assert_not_null(server->compiler, "the OpenCL server compiles ahead of launches");
  const char *dir = cubert_ocl_server_of(server)->cache_dir;
  cubert_kernel_def def = {.name = "fill", .opencl_source = kFillSource, .opencl_entry = "fill"};
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &def, 4, 4, 64);
  write_pattern(&f, 9);
  cr_assert_eq(file_count(dir), 0, "a fresh cache folder");

  OCL_OK(server->compiler->prepare(server, &f.launch));
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.builds_from_source, 1);
  cr_expect_eq(stats.disk_writes, 1, "written at once, not at a later sync");
  cr_expect_eq(file_count(dir), 1);
  expect_all(&f, 9, "after prepare");
  /* Again: the memory cache answers, nothing is built or written. */
  OCL_OK(server->compiler->prepare(server, &f.launch));
  stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.builds_from_source, 1);
  cr_expect_eq(stats.disk_writes, 1);

  /* What a new process sees: the file loads, and the real launch runs with no build. */
  cubert_ocl_server_clear_program_cache(server);
  stats = cubert_ocl_server_cache_stats(server);
  OCL_OK(server->vtable->launch(server, f.st.stream, &f.launch));
  expect_all(&f, 7, "after the real launch");
  cubert_ocl_cache_stats after = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(after.disk_hits, stats.disk_hits + 1);
  cr_expect_eq(after.builds_from_source, stats.builds_from_source, "no build from source");
  /* Prepare of a program loaded from the disk cache writes nothing. */
  OCL_OK(server->compiler->prepare(server, &f.launch));
  cr_expect_eq(cubert_ocl_server_cache_stats(server).disk_writes, after.disk_writes);
  cr_expect_not(cubert_stream_errors_pending(f.st.errors));
  ocl_test_fixture_free(&f);
}

/* prepare and launch share cubert_ocl_launch_kernel: each refusal is the same status (code and
   message). */
static void expect_same_error(cubert_server *server, ocl_test_fixture *f, const cubert_launch *l,
                              cubert_code code, const char *what) {
  cubert_status prepared = server->compiler->prepare(server, l);
  cubert_status launched = server->vtable->launch(server, f->st.stream, l);
  cr_assert_not_null(prepared, "%s: prepare succeeded", what);
  cr_assert_not_null(launched, "%s: launch succeeded", what);
  cr_expect_eq(cubert_status_code(prepared), code, "%s: %s", what, cubert_status_message(prepared));
  /* The first line: a build log names the driver's temporary file, another at each build. */
  const char *a = cubert_status_message(prepared), *b = cubert_status_message(launched);
  const size_t n = strcspn(a, "\n");
  cr_expect(n == strcspn(b, "\n") && strncmp(a, b, n) == 0, "%s:\n  prepare: %s\n  launch:  %s",
            what, a, b);
  cubert_status_free(prepared);
  cubert_status_free(launched);
}

Test(opencl_dry_run, prepare_fails_as_the_launch_does) {
  cubert_server *server = ocl_test_server();
  cubert_kernel_def def = {.name = "fill", .opencl_source = kFillSource, .opencl_entry = "fill"};
  ocl_test_fixture f;
  ocl_test_fixture_init(&f, server, &def, 4, 4, 64);
  write_pattern(&f, 9);
  cubert_launch l = f.launch;
  cubert_binding two[2] = {f.ob, f.ob};
  l.bindings = two;
  l.binding_count = 2;
  expect_same_error(server, &f, &l, CUBERT_CODE_INVALID_ARGUMENT, "argument count");
  l = f.launch;
  l.cube_count[1] = server->properties.hardware.max_cube_count[1];
  if (l.cube_count[1] < UINT32_MAX) {
    l.cube_count[1] += 1;
    expect_same_error(server, &f, &l, CUBERT_CODE_TOO_MANY_RESOURCES, "cube count");
  }
  cubert_ocl_server *s = cubert_ocl_server_of(server);
  if (s->max_global_size < UINT32_MAX * (uint64_t)server->properties.hardware.max_cube_dim[0]) {
    l = f.launch;
    l.cube_dim.x = server->properties.hardware.max_cube_dim[0];
    l.cube_count[0] = (uint32_t)(s->max_global_size / l.cube_dim.x + 1);
    if (l.cube_count[0] <= server->properties.hardware.max_cube_count[0])
      expect_same_error(server, &f, &l, CUBERT_CODE_TOO_MANY_RESOURCES, "global size");
  }
  cubert_kernel_def bad = {
      .name = "broken",
      .opencl_source = "__kernel void broken(__global int *out) { out[0] = ; }",
      .opencl_entry = "broken"};
  l = f.launch;
  l.kernel = &bad;
  expect_same_error(server, &f, &l, CUBERT_CODE_COMPILATION, "build error");
  expect_all(&f, 9, "after the refused launches");
  ocl_test_fixture_free(&f);
}

/* Through the client: CUBERT_DRY_RUN=1 starts the client in dry run, its launch leaves the
   buffer as it was and writes the program's disk cache file; a new instance out of dry run
   loads the program and computes. */
Test(opencl_dry_run, dry_run_client_warms_the_disk_cache_of_the_next_instance) {
  ocl_test_env();
  char dir[2200], selector[256];
  ocl_test_temp_dir(dir, sizeof dir);
  snprintf(selector, sizeof selector, "%s!private", ocl_test_selector(NULL));
  setenv("CUBERT_CACHE_DIR", dir, 1);
  setenv("CUBERT_OPENCL_BINARY_CACHE", "on", 1);
  setenv("CUBERT_DRY_RUN", "1", 1);
  cubert_config_reload_for_tests();

  cubert_client *client = NULL;
  cubert_status st = cubert_client_create(selector, &client);
  if (st && cubert_status_code(st) == CUBERT_CODE_UNAVAILABLE) cr_skip_test("no OpenCL device");
  cr_assert_null(st, "%s", cubert_status_message(st));
  cr_assert_eq(cubert_client_dry_run(client), 1, "CUBERT_DRY_RUN=1");
  cubert_server *server = cubert_client_device(client)->server;
  const char *cache = cubert_ocl_server_of(server)->cache_dir;
  cr_assert_not_null(cache);
  char cache_dir[4096];
  snprintf(cache_dir, sizeof cache_dir, "%s", cache);
  uint32_t v[64];
  for (int i = 0; i < 64; ++i) v[i] = 9;
  cubert_handle *h = NULL;
  cr_assert_null(cubert_client_create_buffer(client, v, sizeof v, &h));
  uint64_t info[2] = {64, 5};
  cubert_kernel_args args = {&h, 1, info, 2};
  st = cubert_client_launch(client, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                            cubert_cube_dim_new_3d(16, 1, 1), &args);
  cr_assert_null(st, "%s", cubert_status_message(st));
  cubert_ocl_cache_stats stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.builds_from_source, 1);
  cr_expect_eq(stats.disk_writes, 1);
  cr_expect_eq(file_count(cache_dir), 1, "the dry run wrote the program's file");
  cr_assert_null(cubert_client_set_dry_run(client, 0));
  cr_assert_null(cubert_client_read(client, h, v, sizeof v));
  for (int i = 0; i < 64; ++i) cr_assert_eq(v[i], 9u, "element %d: the dry run ran nothing", i);
  cubert_handle_release(h);
  cubert_client_release(client);

  unsetenv("CUBERT_DRY_RUN");
  cubert_config_reload_for_tests();
  cr_assert_null(cubert_client_create(selector, &client));
  cr_assert_eq(cubert_client_dry_run(client), 0);
  server = cubert_client_device(client)->server;
  cr_assert_null(cubert_client_create_buffer(client, v, sizeof v, &h));
  args.buffers = &h;
  st = cubert_client_launch(client, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                            cubert_cube_dim_new_3d(16, 1, 1), &args);
  cr_assert_null(st, "%s", cubert_status_message(st));
  cr_assert_null(cubert_client_read(client, h, v, sizeof v));
  for (int i = 0; i < 64; ++i) cr_assert_eq(v[i], 5u, "element %d after the real launch", i);
  stats = cubert_ocl_server_cache_stats(server);
  cr_expect_eq(stats.disk_hits, 1, "the program the dry run cached was loaded");
  cr_expect_eq(stats.builds_from_source, 0);
  cubert_handle_release(h);
  cubert_client_release(client);
  nftw(dir, ocl_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

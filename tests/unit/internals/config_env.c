/* Settings read from the environment (cubert_config_reload_for_tests re-reads them in one
   process): CUBERT_PROFILE=basic, CUBERT_TRACE and CUBERT_CHECK_MODE=validate on the device
   under test. Here rather than in the conformance suite, which includes public headers only. */
#include <stdlib.h>
#include <unistd.h>

#include "base/config.h"
#include "cts.h"
#include "unit/core_capture.h"
#include "unit/core_env.h"

TestSuite(config_env, .init = cts_setup, .fini = cts_teardown);

/* tests/kernels/language.cube.c: unit u writes element u + info[1] of a float buffer. */
extern const cubert_kernel_def shifted_write;

/* CUBERT_PROFILE=basic: every launch timed and logged, a per-kernel summary at sync. */
Test(config_env, profile_level_basic_logs_launches_and_a_summary) {
  core_env_set("CUBERT_PROFILE", "basic");
  cubert_client *c = NULL; /* an instance of its own: cts_client shares the default one */
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(c, 4096 * 4, &h));
  uint64_t info[2] = {4096, 3};
  cubert_kernel_args args = {&h, 1, info, 2};
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  for (int i = 0; i < 3; ++i)
    ASSERT_OK(cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(16, 1, 1),
                                   cubert_cube_dim_new_3d(256, 1, 1), &args));
  cubert_status s = cubert_client_sync(c);
  const char *text = core_capture_end(&cap);
  ASSERT_OK(s);
  cr_assert(strstr(text, "| fill_u32"), "no launch line: %s", text);
  cr_assert(strstr(text, "Num Computed"), "no summary: %s", text);
  const char *row = strstr(text, "| fill_u32                         |");
  cr_assert(row && strstr(row, "|            3 |"), "summary does not count 3 launches: %s", text);
  uint32_t back[4096];
  ASSERT_OK(cubert_client_read(c, h, back, sizeof back));
  cr_assert_eq(back[4095], 3);
  cubert_handle_release(h);
  cubert_client_release(c);
  core_env_set("CUBERT_PROFILE", NULL);
}

/* CUBERT_TRACE=<path>: every launch becomes a Chrome trace event, streamed to the file; the
   file is complete when the device goes away. */
Test(config_env, trace_writes_one_event_per_launch) {
  char path[] = "/tmp/cubert-trace-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  core_env_set("CUBERT_TRACE", path);
  cubert_client *c = NULL; /* an instance of its own: cts_client shares the default one */
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(c, 1024 * 4, &h));
  uint64_t info[2] = {1024, 5};
  cubert_kernel_args args = {&h, 1, info, 2};
  for (int i = 0; i < 3; ++i)
    ASSERT_OK(cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                                   cubert_cube_dim_new_3d(256, 1, 1), &args));
  ASSERT_OK(cubert_client_sync(c));
  cubert_handle_release(h);
  cubert_client_release(c); /* the last reference: the trace is written now */
  core_env_set("CUBERT_TRACE", NULL);
  char text[8192] = {0};
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  remove(path);
  cr_assert_gt(n, 0, "empty trace");
  cr_assert(strncmp(text, "{\"traceEvents\":[", 16) == 0, "%s", text);
  int events = 0;
  for (const char *p = text;
       (p = strstr(p, "\"name\":\"fill_u32\",\"cat\":\"launch\",\"ph\":\"X\"")); ++p)
    ++events;
  cr_assert_eq(events, 3, "%s", text);
  cr_assert(strstr(text, "]") && text[n - 2] == '}', "not closed: %s", text);
}

Test(config_env, check_mode_validate_from_the_environment) {
  core_env_set("CUBERT_CHECK_MODE", "validate");
  float zeros[256] = {0};
  cubert_handle *target = cts_buffer(zeros, sizeof zeros);
  const uint64_t info[2] = {256, 64}; /* 256 units, each writing 64 elements further on */
  cubert_kernel_args a = {&target, 1, info, 2};
  ASSERT_OK(cubert_client_launch(cts_client, &shifted_write, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(64, 1, 1), &a));
  cubert_status s = cubert_client_sync(cts_client);
  cr_assert_not_null(s, "CUBERT_CHECK_MODE=validate turns a checked launch into validate");
  cr_assert(strstr(cubert_status_message(s), "shifted_write") != NULL);
  cubert_status_free(s);
  core_env_set("CUBERT_CHECK_MODE", NULL);
  cubert_handle_release(target);
}

/* Settings read from the environment (cubert_config_reload_for_tests re-reads them in one
   process): CUBERT_PROFILE=basic, CUBERT_TRACE and CUBERT_CHECK_MODE=validate and =enforce on
   the device under test. Here rather than in the conformance suite, which includes public headers
   only. */
#include <stdlib.h>
#include <unistd.h>

#include "base/config.h"
#include "cts.h"
#include "unit/core_capture.h"
#include "unit/core_env.h"

TestSuite(config_env, .init = cts_setup, .fini = cts_teardown);

/* tests/kernels/language.cube.c: unit u writes element u + info[1] of a float buffer; unit u
   copies element u + info[1] of `in` to element u of `out`. */
extern const cubert_kernel_def shifted_write, shifted_read;

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

/* 512 floats -1 - i, and a view of the first 256: an access up to 256 elements past the
   view's end stays inside the allocation, where the pattern shows whether it landed. */
typedef struct guarded {
  cubert_handle *whole, *view;
} guarded;

static guarded guarded_make(void) {
  float pattern[512];
  for (int i = 0; i < 512; ++i) pattern[i] = -1.0f - (float)i;
  guarded g = {cts_buffer(pattern, sizeof pattern), NULL};
  ASSERT_OK(cubert_handle_view(g.whole, 0, 256 * sizeof(float), &g.view));
  return g;
}

static void guarded_release(guarded *g) {
  cubert_handle_release(g->view);
  cubert_handle_release(g->whole);
}

/* shifted_write over the view in `mode`: units 0..255 write elements 64..319, the last 64
   past the view's end. */
static cubert_status write_past_the_view(guarded *g, cubert_execution_mode mode) {
  const uint64_t info[2] = {256, 64};
  cubert_kernel_args a = {&g->view, 1, info, 2};
  return cubert_client_launch_mode(cts_client, &shifted_write, cubert_cube_count_new_3d(4, 1, 1),
                                   cubert_cube_dim_new_3d(64, 1, 1), &a, mode);
}

/* CUBERT_CHECK_MODE=enforce runs unchecked launches checked (docs/kernels.md, "Execution
   modes"): a write past the buffer is dropped and a read past it gives 0, where the same
   launch without the setting reaches the memory after the buffer (shown on the CPU server,
   whose unchecked accesses are plain C). Checked and validate launches keep their mode. */
Test(config_env, check_mode_enforce_runs_unchecked_launches_checked) {
  core_env_set("CUBERT_CHECK_MODE", "enforce");
  guarded g = guarded_make();
  ASSERT_OK(write_past_the_view(&g, CUBERT_EXECUTION_UNCHECKED));
  float got[512];
  cts_read(g.whole, got, sizeof got);
  for (int i = 0; i < 512; ++i)
    cr_assert_eq(got[i], i >= 64 && i < 256 ? (float)(i - 64) : -1.0f - (float)i,
                 "element %d: %g (a write past the view must be dropped)", i, (double)got[i]);
  /* Reads: units 192..255 read elements 256..319, past the view: 0, not the pattern there. */
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 256 * sizeof(float), &out));
  cubert_handle *bufs[2] = {g.view, out};
  const uint64_t info[2] = {256, 64};
  cubert_kernel_args a = {bufs, 2, info, 2};
  ASSERT_OK(cubert_client_launch_unchecked(cts_client, &shifted_read,
                                           cubert_cube_count_new_3d(4, 1, 1),
                                           cubert_cube_dim_new_3d(64, 1, 1), &a));
  cts_read(out, got, 256 * sizeof(float));
  for (int i = 0; i < 256; ++i)
    cr_assert_eq(got[i], i < 192 ? (float)i : 0.0f, "read %d: %g (past the view: 0)", i,
                 (double)got[i]);
  cubert_handle_release(out);
  /* Validate stays validate (it reports), checked stays checked (it does not). */
  ASSERT_OK(write_past_the_view(&g, CUBERT_EXECUTION_VALIDATE));
  cubert_status s = cubert_client_sync(cts_client);
  cr_assert_not_null(s, "enforce must not turn a validate launch into a checked one");
  cr_assert(strstr(cubert_status_message(s), "kernel \"shifted_write\" (validate mode)"), "%s",
            cubert_status_message(s));
  cubert_status_free(s);
  ASSERT_OK(write_past_the_view(&g, CUBERT_EXECUTION_CHECKED));
  ASSERT_OK(cubert_client_sync(cts_client));
  guarded_release(&g);
  /* The control: without the setting the unchecked write lands past the view. */
  core_env_set("CUBERT_CHECK_MODE", NULL);
  if (cts_is_cpu()) {
    g = guarded_make();
    ASSERT_OK(write_past_the_view(&g, CUBERT_EXECUTION_UNCHECKED));
    cts_read(g.whole, got, sizeof got);
    for (int i = 256; i < 320; ++i)
      cr_assert_eq(got[i], (float)(i - 64), "unchecked without enforce: element %d", i);
    guarded_release(&g);
  }
}

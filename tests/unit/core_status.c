/* Unit tests of lib/status.c: codes, kinds, messages with numbers, cause chains,
   SERVER_UNHEALTHY lists, build logs, clones, backtraces and NULL handling. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/status.h"
#include "cubert/server.h"
#include "cubert/status.h"

static void assert_contains(const char *text, const char *needle) {
  cr_assert(text && strstr(text, needle), "expected \"%s\" in:\n%s", needle,
            text ? text : "(null)");
}

Test(core_status, null_is_ok_everywhere) {
  cr_assert_eq(cubert_status_code(NULL), CUBERT_CODE_OK);
  cr_assert_eq(cubert_status_kind(NULL), CUBERT_KIND_OK);
  cr_assert_str_eq(cubert_status_message(NULL), "ok");
  cr_assert_null(cubert_status_cause(NULL));
  cr_assert_eq(cubert_status_error_count(NULL), 0);
  cr_assert_null(cubert_status_error_at(NULL, 0));
  cr_assert_eq(cubert_status_requested(NULL), 0);
  cr_assert_eq(cubert_status_max(NULL), 0);
  cr_assert_eq(cubert_status_size(NULL), 0);
  uint32_t r[3], m[3];
  cr_assert_eq(cubert_status_dims(NULL, r, m), 0);
  cr_assert_null(cubert_status_build_log(NULL));
  cr_assert_null(cubert_status_backtrace(NULL));
  cr_assert_null(cubert_status_set_limits(NULL, 1, 2));
  cr_assert_null(cubert_status_set_size(NULL, 1));
  cr_assert_null(cubert_status_set_dims(NULL, r, m));
  cr_assert_null(cubert_status_set_build_log(NULL, "log"));
  cr_assert_null(cubert_status_clone(NULL));
  cr_assert(cubert_status_has_code(NULL, CUBERT_CODE_OK));
  cr_assert_not(cubert_status_has_code(NULL, CUBERT_CODE_NOT_FOUND));
  cubert_status_free(NULL);
}

Test(core_status, make_ok_returns_null) {
  cr_assert_null(cubert_status_make(CUBERT_CODE_OK, "nothing %d", 1));
}

Test(core_status, names_and_kinds_follow_the_table) {
  cr_assert_str_eq(cubert_code_name(CUBERT_CODE_NOT_FOUND), "NOT_FOUND");
  cr_assert_str_eq(cubert_code_name(CUBERT_CODE_SERVER_UNHEALTHY), "SERVER_UNHEALTHY");
  cr_assert_str_eq(cubert_kind_name(CUBERT_KIND_RESOURCE_LIMIT), "RESOURCE_LIMIT");
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_COMPILATION), CUBERT_KIND_LAUNCH);
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_UNITS), CUBERT_KIND_RESOURCE_LIMIT);
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_BUFFER_TOO_BIG), CUBERT_KIND_IO);
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_GENERIC), CUBERT_KIND_SERVER);
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_NOT_REGISTERED), CUBERT_KIND_PROFILE);
  cr_assert_eq(cubert_code_kind(CUBERT_CODE_INVALID_ARGUMENT), CUBERT_KIND_API);
  /* Every non-OK code makes a status of its own code and kind, with a non-empty message. */
  for (int code = 1; code < CUBERT_CODE_COUNT_; ++code) {
    cubert_status s = cubert_status_make((cubert_code)code, "reason %d", code);
    cr_assert_not_null(s);
    cr_assert_eq(cubert_status_code(s), (cubert_code)code);
    cr_assert_eq(cubert_status_kind(s), cubert_code_kind((cubert_code)code));
    cr_assert_neq(cubert_status_kind(s), CUBERT_KIND_OK);
    cr_assert_str_neq(cubert_code_name((cubert_code)code), "INVALID_CODE");
    char reason[32];
    snprintf(reason, sizeof(reason), "reason %d", code);
    assert_contains(cubert_status_message(s), reason);
    cubert_status_free(s);
  }
}

Test(core_status, units_message_reads_like_the_reference) {
  cubert_status s = cubert_status_make(CUBERT_CODE_UNITS, "%s", "");
  cr_assert_null(strstr(cubert_status_message(s), "300"));
  cubert_status_set_limits(s, 300, 256);
  cr_assert_str_eq(cubert_status_message(s),
                   "Too many resources were requested during launch: total unit count exceeds "
                   "maximum. Requested 300 units, max units is 256.");
  cr_assert_eq(cubert_status_requested(s), 300);
  cr_assert_eq(cubert_status_max(s), 256);
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_RESOURCE_LIMIT);
  cubert_status_free(s);
}

Test(core_status, numbers_are_rebuilt_into_the_message) {
  cubert_status s = cubert_status_make(CUBERT_CODE_SHARED_MEMORY, "kernel %s", "reduce");
  cubert_status_set_limits(s, 70000, 65536);
  const char *m = cubert_status_message(s);
  assert_contains(m, "kernel reduce");
  assert_contains(m, "Requested 70000 bytes, maximum 65536 bytes available.");
  cubert_status_free(s);

  s = cubert_status_set_size(cubert_status_make(CUBERT_CODE_BUFFER_TOO_BIG, "no pool"), 123456);
  cr_assert_eq(cubert_status_size(s), 123456);
  assert_contains(cubert_status_message(s), "123456 bytes");
  cubert_status_free(s);
}

Test(core_status, cube_dim_reports_every_axis) {
  const uint32_t requested[3] = {2048, 2, 1}, max[3] = {1024, 1024, 64};
  cubert_status s = cubert_status_make(CUBERT_CODE_CUBE_DIM, "kernel copy");
  cr_assert_eq(cubert_status_dims(s, NULL, NULL), 0);
  cubert_status_set_dims(s, requested, max);
  uint32_t r[3] = {0}, m[3] = {0};
  cr_assert_eq(cubert_status_dims(s, r, m), 1);
  cr_assert_arr_eq(r, requested, sizeof(r));
  cr_assert_arr_eq(m, max, sizeof(m));
  cr_assert_eq(cubert_status_requested(s), 4096);
  cr_assert_eq(cubert_status_max(s), 1024ull * 1024 * 64);
  assert_contains(cubert_status_message(s), "Requested (2048, 2, 1), max is (1024, 1024, 64).");
  cubert_status_free(s);
}

Test(core_status, cause_chain_appears_indented) {
  cubert_status inner = cubert_status_set_limits(
      cubert_status_make(CUBERT_CODE_UNITS, "cube dim of kernel add"), 2048, 1024);
  cubert_status mid = cubert_status_wrap(CUBERT_CODE_GENERIC, inner, "launch on stream %d", 3);
  cubert_status outer = cubert_status_wrap(CUBERT_CODE_EXECUTION, mid, "read failed");
  cr_assert_eq(cubert_status_code(outer), CUBERT_CODE_EXECUTION);
  cr_assert_eq(cubert_status_cause(outer), mid);
  cr_assert_eq(cubert_status_cause(mid), inner);
  const char *m = cubert_status_message(outer);
  assert_contains(m,
                  "read failed\nCaused by:\n  An error happened during execution: launch on "
                  "stream 3\n  Caused by:\n    Too many resources");
  assert_contains(m, "Requested 2048 units, max units is 1024.");
  cr_assert(cubert_status_has_code(outer, CUBERT_CODE_UNITS));
  cr_assert(cubert_status_has_code(outer, CUBERT_CODE_GENERIC));
  cr_assert(cubert_status_has_code(outer, CUBERT_CODE_EXECUTION));
  cr_assert_not(cubert_status_has_code(outer, CUBERT_CODE_NOT_FOUND));
  cubert_status_free(outer);
}

static cubert_status fails_with(cubert_status inner) {
  CUBERT_RETURN_IF_ERROR_CONTEXT(inner, "copying plane %d", 2);
  return NULL;
}

/* CUBERT_RETURN_IF_ERROR_CONTEXT (base/status.h): the error keeps its code, the context leads
   the message and the original error is its cause; success passes through. */
Test(core_status, return_if_error_adds_context_and_keeps_the_code) {
  cr_assert_null(fails_with(NULL));
  cubert_status inner = cubert_status_make(CUBERT_CODE_NOT_FOUND, "handle %d released", 7);
  cubert_status s = fails_with(inner);
  cr_assert_not_null(s);
  cr_assert_neq(s, inner);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND);
  cr_assert_eq(cubert_status_cause(s), inner);
  const char *m = cubert_status_message(s);
  cr_assert(strstr(m, "copying plane 2") != NULL, "%s", m);
  cr_assert(strstr(m, "Caused by:") != NULL && strstr(m, "handle 7 released") != NULL, "%s", m);
  cr_assert(strstr(m, "copying plane 2") < strstr(m, "handle 7 released"), "%s", m);
  cubert_status_free(s);
}

Test(core_status, unhealthy_lists_each_error) {
  cubert_status errors[3] = {
      cubert_status_make(CUBERT_CODE_NOT_FOUND, "handle %d released", 7),
      NULL, /* skipped */
      cubert_status_wrap(CUBERT_CODE_GENERIC,
                         cubert_status_make(CUBERT_CODE_COMPILATION, "kernel bad"), "async"),
  };
  cubert_status s = cubert_status_unhealthy(errors, 3);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SERVER_UNHEALTHY);
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_SERVER);
  cr_assert_eq(cubert_status_error_count(s), 2);
  cr_assert_eq(cubert_status_error_at(s, 0), errors[0]);
  cr_assert_eq(cubert_status_error_at(s, 1), errors[2]);
  cr_assert_null(cubert_status_error_at(s, 2));
  const char *m = cubert_status_message(s);
  assert_contains(m, "The server is in an invalid state\nCaused by 2 errors:");
  assert_contains(m, "\n  1. Couldn't find resource for that handle: handle 7 released");
  assert_contains(m, "\n  2. An error happened during execution: async\n     Caused by:\n");
  assert_contains(m, "kernel bad");
  cr_assert(cubert_status_has_code(s, CUBERT_CODE_NOT_FOUND));
  cr_assert(cubert_status_has_code(s, CUBERT_CODE_COMPILATION));
  cr_assert_not(cubert_status_has_code(s, CUBERT_CODE_UNITS));
  cubert_status_free(s);
}

Test(core_status, build_log_is_kept_and_shown) {
  cubert_status s = cubert_status_make(CUBERT_CODE_COMPILATION, "kernel %s", "add");
  cubert_status_set_build_log(s, "<source>:3:5: error: use of undeclared identifier 'y'\n1 error");
  cr_assert_str_eq(cubert_status_build_log(s),
                   "<source>:3:5: error: use of undeclared identifier 'y'\n1 error");
  assert_contains(cubert_status_message(s),
                  "A compilation error happened during launch: kernel add\nBuild log:\n  "
                  "<source>:3:5: error: use of undeclared identifier 'y'\n  1 error");
  cubert_status_free(s);
}

Test(core_status, clone_is_deep) {
  cubert_status errors[1] = {cubert_status_wrap(
      CUBERT_CODE_GENERIC,
      cubert_status_set_build_log(cubert_status_make(CUBERT_CODE_COMPILATION, "k"), "log"),
      "outer")};
  cubert_status s = cubert_status_unhealthy(errors, 1);
  cubert_status c = cubert_status_clone(s);
  cr_assert_neq(c, s);
  cr_assert_str_eq(cubert_status_message(c), cubert_status_message(s));
  char *expected = strdup(cubert_status_message(s));
  cubert_status_free(s);
  /* The clone survives the original: nothing is shared. */
  cr_assert_str_eq(cubert_status_message(c), expected);
  cr_assert_str_eq(cubert_status_build_log(cubert_status_cause(cubert_status_error_at(c, 0))),
                   "log");
  free(expected);
  cubert_status_free(c);
}

Test(core_status, backtrace_only_when_configured) {
  unsetenv("CUBERT_BACKTRACE");
  cubert_config_reload_for_tests();
  cubert_status s = cubert_status_make(CUBERT_CODE_UNKNOWN, "no trace");
  cr_assert_null(cubert_status_backtrace(s));
  cr_assert_null(strstr(cubert_status_message(s), "Backtrace"));
  cubert_status_free(s);

  setenv("CUBERT_BACKTRACE", "1", 1);
  cubert_config_reload_for_tests();
  s = cubert_status_make(CUBERT_CODE_UNKNOWN, "with trace");
  cr_assert_not_null(cubert_status_backtrace(s));
  assert_contains(cubert_status_backtrace(s), "0: ");
  assert_contains(cubert_status_message(s), "\nBacktrace:\n  0: ");
  cubert_status_free(s);
  unsetenv("CUBERT_BACKTRACE");
  cubert_config_reload_for_tests();
}

static int steps_after_error;

static cubert_status failing_step(cubert_code code) {
  return code == CUBERT_CODE_OK ? NULL : cubert_status_make(code, "step failed");
}

static cubert_status two_steps(cubert_code first) {
  CUBERT_RETURN_IF_ERROR(failing_step(first));
  ++steps_after_error;
  return NULL;
}

Test(core_status, return_if_error_propagates) {
  steps_after_error = 0;
  cubert_status s = two_steps(CUBERT_CODE_NOT_FOUND);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND);
  cr_assert_eq(steps_after_error, 0);
  cubert_status_free(s);
  cr_assert_null(two_steps(CUBERT_CODE_OK));
  cr_assert_eq(steps_after_error, 1);
}

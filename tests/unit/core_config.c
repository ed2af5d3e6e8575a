/* Unit tests of lib/config.c: defaults, valid values, and bad values that warn once (naming the
   variable, the value and the valid range) and fall back to the default. Criterion runs each
   test in its own process, so environment changes do not leak between tests. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/cache_file.h"
#include "base/config.h"
#include "base/log.h"
#include "core_capture.h"
#include "cubert/config.h"
#include "cubert/cubert.h"
#include "cubert/kernels.h"
#include "cubert/server.h"

static const char *const all_vars[] = {
    "CUBERT_DEVICE",          "CUBERT_CPU_THREADS",
    "CUBERT_CACHE_DIR",       "CUBERT_LOG",
    "CUBERT_PROFILE",         "CUBERT_TRACE",
    "CUBERT_CHECK_MODE",      "CUBERT_MAX_STREAMS",
    "CUBERT_BACKTRACE",       "CUBERT_AUTOTUNE",
    "CUBERT_AUTOTUNE_CACHE",  "CUBERT_OPENCL_BINARY_CACHE",
    "CUBERT_POOLS_EXCLUSIVE", "CUBERT_VALIDATE_SEED",
    "CUBERT_DRY_RUN",         "CUBERT_AUTOTUNE_CHECKS",
    "CUBERT_AUTOTUNE_LEVEL",
};

static void clear_env(void) {
  for (size_t i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); ++i) unsetenv(all_vars[i]);
}

/* Sets one variable, re-reads the environment and returns the configuration. */
static const cubert_config *with_env(const char *name, const char *value) {
  clear_env();
  setenv(name, value, 1);
  cubert_config_reload_for_tests();
  return cubert_config_get();
}

static void assert_one_warning(const char *a, const char *b, const char *c) {
  cr_assert_eq(cubert_config_warning_count(), 1, "expected one warning, got %zu",
               cubert_config_warning_count());
  const char *w = cubert_config_warning_at(0);
  const char *needles[] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    if (needles[i]) cr_assert(strstr(w, needles[i]), "expected \"%s\" in \"%s\"", needles[i], w);
  }
}

Test(core_config, defaults_without_environment) {
  clear_env();
  cubert_config_reload_for_tests();
  const cubert_config *c = cubert_config_get();
  cr_assert_null(c->device);
  cr_assert_eq(c->cpu_threads, 0);
  cr_assert_null(c->cache_dir);
  cr_assert_eq(c->log_level, CUBERT_LOG_WARN);
  cr_assert_eq(c->profile_level, 0);
  cr_assert_null(c->trace_path);
  cr_assert_eq(c->check_mode, 0);
  cr_assert_eq(c->max_streams, 128);
  cr_assert_eq(c->backtrace, 0);
  cr_assert_eq(c->dry_run, 0);
  cr_assert_eq(cubert_config_warning_count(), 0);
  cr_assert_null(cubert_config_warning_at(0));
}

Test(core_config, get_returns_the_same_object) {
  cr_assert_eq(cubert_config_get(), cubert_config_get());
}

Test(core_config, valid_values_are_parsed) {
  clear_env();
  setenv("CUBERT_DEVICE", "opencl:1", 1);
  setenv("CUBERT_CPU_THREADS", "8", 1);
  setenv("CUBERT_CACHE_DIR", "/tmp/cubert-cache", 1);
  setenv("CUBERT_LOG", "debug,memory,opencl", 1);
  setenv("CUBERT_PROFILE", "Basic", 1);
  setenv("CUBERT_TRACE", "/tmp/trace.json", 1);
  setenv("CUBERT_CHECK_MODE", "validate", 1);
  setenv("CUBERT_MAX_STREAMS", "4096", 1);
  setenv("CUBERT_BACKTRACE", "1", 1);
  cubert_config_reload_for_tests();
  const cubert_config *c = cubert_config_get();
  cr_assert_str_eq(c->device, "opencl:1");
  cr_assert_eq(c->cpu_threads, 8);
  cr_assert_str_eq(c->cache_dir, "/tmp/cubert-cache");
  cr_assert_eq(c->log_level, CUBERT_LOG_DEBUG);
  cr_assert_eq(c->profile_level, 2);
  cr_assert_str_eq(c->trace_path, "/tmp/trace.json");
  cr_assert_eq(c->check_mode, 2);
  cr_assert_eq(c->max_streams, 4096);
  cr_assert_eq(c->backtrace, 1);
  cr_assert_eq(cubert_config_warning_count(), 0);
}

Test(core_config, values_are_copied_once_read) {
  const cubert_config *c = with_env("CUBERT_DEVICE", "cpu");
  setenv("CUBERT_DEVICE", "opencl", 1);
  cr_assert_str_eq(c->device, "cpu"); /* read once: later changes are not seen */
}

Test(core_config, empty_values_mean_default) {
  const cubert_config *c = with_env("CUBERT_MAX_STREAMS", "");
  cr_assert_eq(c->max_streams, 128);
  c = with_env("CUBERT_DEVICE", "");
  cr_assert_null(c->device);
  cr_assert_eq(cubert_config_warning_count(), 0);
}

Test(core_config, max_streams_out_of_range_warns) {
  const char *bad[] = {"0", "4097", "abc", "-3", "12x", "99999999999999999999"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    const cubert_config *c = with_env("CUBERT_MAX_STREAMS", bad[i]);
    cr_assert_eq(c->max_streams, 128, "value %s", bad[i]);
    char quoted[64];
    snprintf(quoted, sizeof(quoted), "\"%s\"", bad[i]);
    assert_one_warning("CUBERT_MAX_STREAMS", quoted, "1..4096");
  }
  cr_assert_eq(with_env("CUBERT_MAX_STREAMS", "1")->max_streams, 1);
}

Test(core_config, cpu_threads_bad_value_warns) {
  const cubert_config *c = with_env("CUBERT_CPU_THREADS", "many");
  cr_assert_eq(c->cpu_threads, 0);
  assert_one_warning("CUBERT_CPU_THREADS", "\"many\"", "0..4096");
}

/* A cache folder too long for its files' paths turned the disk caches off silently. */
Test(core_config, cache_dir_too_long_warns) {
  char long_dir[4100];
  memset(long_dir, 'a', sizeof(long_dir) - 1);
  long_dir[0] = '/';
  long_dir[sizeof(long_dir) - 1] = '\0';
  with_env("CUBERT_CACHE_DIR", long_dir);
  assert_one_warning("CUBERT_CACHE_DIR", "4099 bytes", "disk caches are off");
  cr_assert_null(cubert_cache_dir("opencl"));
  long_dir[4000] = '\0'; /* the longest usable folder: no warning */
  with_env("CUBERT_CACHE_DIR", long_dir);
  cr_assert_eq(cubert_config_warning_count(), 0);
  char *dir = cubert_cache_dir("opencl");
  cr_assert_not_null(dir);
  free(dir);
}

Test(core_config, enum_values_bad_warn_with_choices) {
  const cubert_config *c = with_env("CUBERT_PROFILE", "loud");
  cr_assert_eq(c->profile_level, 0);
  assert_one_warning("CUBERT_PROFILE", "\"loud\"", "off|minimal|basic|medium|full");

  c = with_env("CUBERT_CHECK_MODE", "strict");
  cr_assert_eq(c->check_mode, 0);
  assert_one_warning("CUBERT_CHECK_MODE", "\"strict\"", "auto|enforce|validate");

  cr_assert_eq(with_env("CUBERT_CHECK_MODE", "enforce")->check_mode, 1);
  cr_assert_eq(with_env("CUBERT_PROFILE", "medium")->profile_level, 3);
  cr_assert_eq(with_env("CUBERT_PROFILE", "full")->profile_level, 4);
}

Test(core_config, autotune_values) {
  clear_env();
  cubert_config_reload_for_tests();
  cr_assert_eq(cubert_config_get()->autotune, CUBERT_AUTOTUNE_FULL);
  cr_assert_eq(cubert_config_get()->autotune_cache, 1);
  cr_assert_eq(with_env("CUBERT_AUTOTUNE", "off")->autotune, CUBERT_AUTOTUNE_OFF);
  cr_assert_eq(with_env("CUBERT_AUTOTUNE", "Minimal")->autotune, CUBERT_AUTOTUNE_MINIMAL);
  cr_assert_eq(with_env("CUBERT_AUTOTUNE", "sometimes")->autotune, CUBERT_AUTOTUNE_FULL);
  assert_one_warning("CUBERT_AUTOTUNE", "\"sometimes\"", "off|minimal|full");
  cr_assert_eq(with_env("CUBERT_AUTOTUNE_CACHE", "0")->autotune_cache, 0);
  cr_assert_eq(with_env("CUBERT_AUTOTUNE_CACHE", "later")->autotune_cache, 1);
  assert_one_warning("CUBERT_AUTOTUNE_CACHE", "\"later\"", "using 1");
  cr_assert_eq(with_env("CUBERT_OPENCL_BINARY_CACHE", "On")->opencl_binary_cache,
               CUBERT_BINARY_CACHE_ON);
  cr_assert_eq(with_env("CUBERT_OPENCL_BINARY_CACHE", "off")->opencl_binary_cache,
               CUBERT_BINARY_CACHE_OFF);
  cr_assert_eq(with_env("CUBERT_OPENCL_BINARY_CACHE", "1")->opencl_binary_cache,
               CUBERT_BINARY_CACHE_AUTO);
  assert_one_warning("CUBERT_OPENCL_BINARY_CACHE", "\"1\"", "auto|off|on");
}

Test(core_config, backtrace_flag_values) {
  cr_assert_eq(with_env("CUBERT_BACKTRACE", "yes")->backtrace, 1);
  cr_assert_eq(with_env("CUBERT_BACKTRACE", "0")->backtrace, 0);
  cr_assert_eq(with_env("CUBERT_BACKTRACE", "maybe")->backtrace, 0);
  assert_one_warning("CUBERT_BACKTRACE", "\"maybe\"", "0|1");
}

Test(core_config, log_level_and_categories) {
  cr_assert_eq(with_env("CUBERT_LOG", "error")->log_level, CUBERT_LOG_ERROR);
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_WARN, "memory"));
  cr_assert(cubert_config_log_wants(CUBERT_LOG_ERROR, "memory"));

  cr_assert_eq(with_env("CUBERT_LOG", "debug,memory,opencl")->log_level, CUBERT_LOG_DEBUG);
  cr_assert(cubert_config_log_wants(CUBERT_LOG_DEBUG, "memory"));
  cr_assert(cubert_config_log_wants(CUBERT_LOG_INFO, "opencl"));
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_DEBUG, "stream"));
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_DEBUG, NULL));
  /* Warnings and errors are never filtered by category. */
  cr_assert(cubert_config_log_wants(CUBERT_LOG_WARN, "stream"));

  cr_assert_eq(with_env("CUBERT_LOG", "info")->log_level, CUBERT_LOG_INFO);
  cr_assert(cubert_config_log_wants(CUBERT_LOG_INFO, "anything"));
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_DEBUG, "anything"));
}

Test(core_config, bad_log_level_warns_and_keeps_categories) {
  const cubert_config *c = with_env("CUBERT_LOG", "verbose,memory");
  cr_assert_eq(c->log_level, CUBERT_LOG_WARN);
  assert_one_warning("CUBERT_LOG", "\"verbose,memory\"", "error|warn|info|debug");
}

Test(core_config, several_bad_values_each_warn) {
  clear_env();
  setenv("CUBERT_MAX_STREAMS", "0", 1);
  setenv("CUBERT_PROFILE", "x", 1);
  cubert_config_reload_for_tests();
  cr_assert_eq(cubert_config_warning_count(), 2);
}

Test(core_config, warning_is_logged_once) {
  clear_env();
  setenv("CUBERT_MAX_STREAMS", "0", 1);
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_config_reload_for_tests();
  cubert_config_get();
  cubert_config_get();
  const char *out = core_capture_end(&cap);
  cr_assert_str_eq(out,
                   "cubert[warn][config]: CUBERT_MAX_STREAMS=\"0\" is not valid: expected an "
                   "integer in 1..4096; using 128\n");
}

Test(core_config, pools_exclusive_is_a_flag) {
  cr_assert_eq(with_env("CUBERT_POOLS_EXCLUSIVE", "1")->pools_exclusive, 1);
  cr_assert_eq(with_env("CUBERT_POOLS_EXCLUSIVE", "off")->pools_exclusive, 0);
  cr_assert_eq(cubert_config_warning_count(), 0);
  cr_assert_eq(with_env("CUBERT_POOLS_EXCLUSIVE", "2")->pools_exclusive, 0);
  assert_one_warning("CUBERT_POOLS_EXCLUSIVE", "\"2\"", NULL);
  clear_env();
  cubert_config_reload_for_tests();
  cr_assert_eq(cubert_config_get()->pools_exclusive, 0);
}

/* CUBERT_DRY_RUN (cubecl dry_run, newer than the seed): a flag read once; every client created
   while it is on starts in dry run, so an unmodified program only compiles and checks. */
Test(core_config, dry_run_is_a_flag_that_clients_start_in) {
  cr_assert_eq(with_env("CUBERT_DRY_RUN", "yes")->dry_run, 1);
  cr_assert_eq(cubert_config_warning_count(), 0);
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create("cpu!private", &client);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_client_dry_run(client), 1);
  uint32_t v[4] = {9, 9, 9, 9};
  cubert_handle *h = NULL;
  cr_assert_null(cubert_client_create_buffer(client, v, sizeof v, &h));
  uint64_t info[2] = {4, 1};
  cubert_kernel_args args = {&h, 1, info, 2};
  cr_assert_null(cubert_client_launch(client, &cubert_kernel_fill_u32,
                                      cubert_cube_count_new_3d(1, 1, 1),
                                      cubert_cube_dim_new_3d(4, 1, 1), &args));
  cr_assert_null(cubert_client_set_dry_run(client, 0));
  cr_assert_null(cubert_client_read(client, h, v, sizeof v));
  cr_assert_eq(v[0], 9, "the launch in dry run ran nothing");
  cubert_handle_release(h);
  cubert_client_release(client);
  cr_assert_eq(with_env("CUBERT_DRY_RUN", "2")->dry_run, 0);
  assert_one_warning("CUBERT_DRY_RUN", "\"2\"", NULL);
  clear_env();
  cubert_config_reload_for_tests();
  cr_assert_null(cubert_client_create("cpu!private", &client));
  cr_assert_eq(cubert_client_dry_run(client), 0);
  cubert_client_release(client);
}

Test(core_config, validate_seed_takes_any_32_bit_number) {
  const cubert_config *c = with_env("CUBERT_VALIDATE_SEED", "0");
  cr_assert_eq(c->validate_shuffle, 1, "seed 0 is a seed, not \"off\"");
  cr_assert_eq(c->validate_seed, 0);
  c = with_env("CUBERT_VALIDATE_SEED", "4294967295");
  cr_assert_eq(c->validate_shuffle, 1);
  cr_assert_eq(c->validate_seed, 4294967295u);
  cr_assert_eq(cubert_config_warning_count(), 0);
  const char *bad[] = {"4294967296", "-1", "7x", " 7"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    c = with_env("CUBERT_VALIDATE_SEED", bad[i]);
    cr_assert_eq(c->validate_shuffle, 0, "\"%s\" must leave the order plain", bad[i]);
    assert_one_warning("CUBERT_VALIDATE_SEED", "0..4294967295", "plain order");
  }
  clear_env();
  cubert_config_reload_for_tests();
  cr_assert_eq(cubert_config_get()->validate_shuffle, 0);
}

/* An unknown category (a typo) was taken without a word and its lines vanished: it warns,
   naming it and the valid categories; the known categories still filter as asked. */
Test(core_config, unknown_log_category_warns_with_the_valid_ones) {
  const cubert_config *c = with_env("CUBERT_LOG", "debug,memroy,stream");
  cr_assert_eq(c->log_level, CUBERT_LOG_DEBUG);
  assert_one_warning("CUBERT_LOG names an unknown category \"memroy\"",
                     "valid categories are comm|compile|config|memory|opencl|stream|trace|tune",
                     "its lines are not shown");
  cr_assert(cubert_config_log_wants(CUBERT_LOG_DEBUG, "stream"));
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_DEBUG, "memory"));
  /* Only unknown names: info and debug lines stay restricted (to none), not all shown. */
  with_env("CUBERT_LOG", "info,Memroy");
  cr_assert_not(cubert_config_log_wants(CUBERT_LOG_INFO, "memory"));
  cr_assert(cubert_config_log_wants(CUBERT_LOG_WARN, "memory"));
  /* Names are case-insensitive, as the levels are. */
  with_env("CUBERT_LOG", "info,Memory");
  cr_assert_eq(cubert_config_warning_count(), 0);
  cr_assert(cubert_config_log_wants(CUBERT_LOG_INFO, "memory"));
}

/* A long bad value cut off the end of its warning, which says what is valid: the value is
   echoed shortened ("..."), the explanation whole, in the warning and in the logged line. */
Test(core_config, long_value_keeps_the_explanation) {
  static char value[3000];
  memset(value, '7', sizeof(value) - 1);
  value[sizeof(value) - 1] = '\0';
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  with_env("CUBERT_MAX_STREAMS", value);
  const char *out = core_capture_end(&cap);
  assert_one_warning("CUBERT_MAX_STREAMS=\"7777", "7777...\" is not valid",
                     "expected an integer in 1..4096; using 128");
  cr_assert(strstr(out, "expected an integer in 1..4096; using 128\n"), "%s", out);
  cr_assert_lt(strlen(cubert_config_warning_at(0)), 200);
  /* Every other kind of value is echoed the same way. */
  with_env("CUBERT_PROFILE", value);
  assert_one_warning("7777...\"", "expected one of off|minimal|basic|medium|full; using off", NULL);
  with_env("CUBERT_LOG", value);
  assert_one_warning("7777...\"", "expected error|warn|info|debug", "using warn");
  value[100] = ',';
  with_env("CUBERT_LOG", value);
  cr_assert_eq(cubert_config_warning_count(), 2);
  cr_assert(strstr(cubert_config_warning_at(1), "7777...\": valid categories are comm|"), "%s",
            cubert_config_warning_at(1));
  with_env("CUBERT_BACKTRACE", value);
  assert_one_warning("7777...\"", "expected 0|1", NULL);
  with_env("CUBERT_VALIDATE_SEED", value);
  assert_one_warning("7777...\"", "plain order", NULL);
}

/* Only 16 warnings were kept, so a bad value after them fell back to its default in silence:
   every warning is kept and logged. */
Test(core_config, no_warning_is_dropped) {
  clear_env();
  char log[256] = "debug";
  for (int i = 0; i < 20; ++i) snprintf(log + strlen(log), sizeof(log) - strlen(log), ",bad%d", i);
  setenv("CUBERT_LOG", log, 1);
  setenv("CUBERT_MAX_STREAMS", "0", 1);
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_config_reload_for_tests();
  cubert_config_get();
  const char *out = core_capture_end(&cap);
  cr_assert_eq(cubert_config_warning_count(), 21);
  cr_assert(strstr(cubert_config_warning_at(19), "\"bad19\""), "%s", cubert_config_warning_at(19));
  cr_assert(strstr(cubert_config_warning_at(20), "CUBERT_MAX_STREAMS=\"0\""), "%s",
            cubert_config_warning_at(20));
  cr_assert(strstr(out, "cubert[warn][config]: CUBERT_MAX_STREAMS=\"0\" is not valid"), "%s", out);
}

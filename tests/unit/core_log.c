/* Unit tests of lib/log.c: line format, level and category filtering, whole lines under
   concurrency, and the monotonic clock. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "core_capture.h"
#include "cubert/server.h"

static void set_log(const char *value) {
  if (value) {
    setenv("CUBERT_LOG", value, 1);
  } else {
    unsetenv("CUBERT_LOG");
  }
  cubert_config_reload_for_tests();
  cubert_config_get();
}

Test(core_log, default_level_prints_warnings_not_info) {
  set_log(NULL);
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_WARN, "memory", "pool %d is %s", 3, "full");
  cubert_log(CUBERT_LOG_INFO, "memory", "hidden");
  cubert_log(CUBERT_LOG_ERROR, NULL, "no category");
  const char *out = core_capture_end(&cap);
  cr_assert_str_eq(out, "cubert[warn][memory]: pool 3 is full\ncubert[error]: no category\n");
}

Test(core_log, error_level_hides_warnings) {
  set_log("error");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_WARN, "memory", "hidden");
  cubert_log(CUBERT_LOG_ERROR, "memory", "shown");
  cr_assert_str_eq(core_capture_end(&cap), "cubert[error][memory]: shown\n");
}

Test(core_log, categories_filter_info_and_debug) {
  set_log("debug,memory,opencl");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_DEBUG, "memory", "a");
  cubert_log(CUBERT_LOG_DEBUG, "stream", "b");
  cubert_log(CUBERT_LOG_INFO, "opencl", "c");
  cubert_log(CUBERT_LOG_WARN, "stream", "d");
  cr_assert_str_eq(core_capture_end(&cap),
                   "cubert[debug][memory]: a\ncubert[info][opencl]: c\ncubert[warn][stream]: d\n");
}

Test(core_log, long_messages_are_truncated_visibly) {
  set_log("warn");
  char big[3000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_WARN, "t", "%s", big);
  const char *out = core_capture_end(&cap);
  size_t len = strlen(out);
  cr_assert_lt(len, 1100);
  cr_assert_str_eq(out + len - 4, "...\n");
}

#define LOG_THREADS 4
#define LOG_LINES 200

static void *log_worker(void *arg) {
  int id = (int)(intptr_t)arg;
  for (int i = 0; i < LOG_LINES; ++i) {
    cubert_log(CUBERT_LOG_WARN, "thread", "worker %d line %03d ----------------------------", id,
               i);
  }
  return NULL;
}

Test(core_log, concurrent_lines_stay_whole) {
  set_log("warn");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  pthread_t threads[LOG_THREADS];
  for (int t = 0; t < LOG_THREADS; ++t) {
    pthread_create(&threads[t], NULL, log_worker, (void *)(intptr_t)t);
  }
  for (int t = 0; t < LOG_THREADS; ++t) pthread_join(threads[t], NULL);
  fflush(stderr);
  dup2(cap.saved_fd, 2);
  close(cap.saved_fd);
  rewind(cap.file);
  char line[256];
  int count = 0;
  while (fgets(line, sizeof(line), cap.file)) {
    int id = -1, n = -1;
    cr_assert_eq(sscanf(line, "cubert[warn][thread]: worker %d line %d ---", &id, &n), 2,
                 "torn line: %s", line);
    cr_assert(strstr(line, "----------------------------\n"), "torn line: %s", line);
    ++count;
  }
  fclose(cap.file);
  cr_assert_eq(count, LOG_THREADS * LOG_LINES);
}

Test(core_log, clock_is_monotonic) {
  uint64_t prev = cubert_now_ns();
  cr_assert_gt(prev, 0);
  for (int i = 0; i < 1000; ++i) {
    uint64_t now = cubert_now_ns();
    cr_assert_geq(now, prev);
    prev = now;
  }
}

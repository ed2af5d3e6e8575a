/* Unit tests of lib/base/log.c: line format, level and category filtering, whole lines under
   concurrency, the file sink (which never blocks: FIFOs and other non-regular files are
   refused), and the monotonic clock. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "core_capture.h"
#include "core_env.h"
#include "cubert/config.h"
#include "cubert/cubert.h"
#include "cubert/server.h"
#include "cubert/stream.h"

static void set_log(const char *value) {
  core_env_set("CUBERT_LOG", value);
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

/* The whole content of `path` (NUL-terminated, at most size - 1 bytes). */
static const char *slurp(const char *path, char *buf, size_t size) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return buf;
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* CUBERT_LOG_FILE: lines are appended to the file, not written to stderr (reference:
   seed-server-base.rs.txt's ServerLogger writes to a file or stdout). */
Test(core_log, file_sink_appends_whole_lines) {
  char path[] = "/tmp/cubert_log_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  setenv("CUBERT_LOG_FILE", path, 1);
  set_log("info");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_INFO, "compile", "first %d", 1);
  cubert_log(CUBERT_LOG_WARN, NULL, "second");
  const char *err = core_capture_end(&cap);
  cr_expect_str_eq(err, "");
  char buf[512];
  cr_expect_str_eq(slurp(path, buf, sizeof buf),
                   "cubert[info][compile]: first 1\ncubert[warn]: second\n");
  unsetenv("CUBERT_LOG_FILE");
  set_log(NULL);
  unlink(path);
}

/* A path that cannot be opened: the lines stay on stderr, after one line saying why. */
Test(core_log, unwritable_file_falls_back_to_stderr) {
  setenv("CUBERT_LOG_FILE", "/nonexistent-dir/cubert.log", 1);
  set_log("warn");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_log(CUBERT_LOG_WARN, "memory", "kept");
  const char *err = core_capture_end(&cap);
  cr_expect(strstr(err, "CUBERT_LOG_FILE '/nonexistent-dir/cubert.log' cannot be opened"), "%s",
            err);
  cr_expect(strstr(err, "cubert[warn][memory]: kept\n"), "%s", err);
  unsetenv("CUBERT_LOG_FILE");
  set_log(NULL);
}

/* Pages and slot hand-overs are logged (reference: seed-server-base.rs.txt's memory and stream
   logging): a buffer allocates a page (debug, memory); with one slot, a second stream id takes
   it over (info, stream); releasing the client frees the pages. */
Test(core_log, pages_and_slot_handovers_are_logged) {
  char path[] = "/tmp/cubert_log_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  setenv("CUBERT_LOG_FILE", path, 1);
  setenv("CUBERT_MAX_STREAMS", "1", 1);
  set_log("debug,memory,stream");
  cubert_client *client = NULL, *other = NULL;
  cr_assert_null(cubert_client_create("cpu!private", &client));
  cr_assert_null(cubert_client_with_stream(client, cubert_client_stream(client) + 1, &other));
  cubert_handle *a = NULL, *b = NULL;
  const float data[4] = {1, 2, 3, 4};
  cr_assert_null(cubert_client_create_buffer(client, data, sizeof data, &a));
  cr_assert_null(cubert_client_create_buffer(other, data, sizeof data, &b));
  cubert_handle_release(a);
  cubert_handle_release(b);
  cubert_client_release(other);
  cubert_client_release(client);
  char buf[8192];
  const char *text = slurp(path, buf, sizeof buf);
  cr_expect(strstr(text, "cubert[debug][memory]: page "), "%s", text);
  cr_expect(strstr(text, "bytes allocated on '"), "%s", text);
  cr_expect(strstr(text, "bytes freed on '"), "%s", text);
  cr_expect(
      strstr(text, "cubert[info][stream]: stream ") && strstr(text, " takes slot 0 over from "),
      "%s", text);
  unsetenv("CUBERT_LOG_FILE");
  unsetenv("CUBERT_MAX_STREAMS");
  set_log(NULL);
  unlink(path);
}

/* Logs two warnings in a forked child that must finish within 10 s (alarm), with stderr
   captured: a sink that blocks fails the test by SIGALRM instead of hanging the suite. Returns
   the child's stderr. */
static const char *log_two_lines_in_child(core_capture *cap) {
  cr_assert(core_capture_begin(cap));
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    alarm(10);
    set_log("warn");
    cubert_log(CUBERT_LOG_WARN, "memory", "first");
    cubert_log(CUBERT_LOG_WARN, "memory", "second");
    fflush(stderr);
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  const char *err = core_capture_end(cap);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the logging child did not finish (signal %d: the sink blocked)",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return err;
}

static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) ++n;
  return n;
}

/* A FIFO as CUBERT_LOG_FILE blocked the first log line forever without a reader (opening a
   FIFO for writing waits for one) and every thread that logged after it. Now the sink takes
   only regular files: a FIFO, with or without a reader, is refused with one warning and the
   lines stay on stderr; nothing is written into the FIFO. */
Test(core_log, fifo_file_is_refused_without_blocking) {
  char dir[] = "/tmp/cubert_log_fifo_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/log", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  setenv("CUBERT_LOG_FILE", fifo, 1);
  for (int with_reader = 0; with_reader < 2; ++with_reader) {
    int reader = with_reader ? open(fifo, O_RDONLY | O_NONBLOCK) : -1;
    cr_assert(!with_reader || reader >= 0);
    core_capture cap;
    const char *err = log_two_lines_in_child(&cap);
    cr_expect_eq(count_of(err, "is a FIFO, not a regular file"), 1, "reader %d: %s", with_reader,
                 err);
    cr_expect(strstr(err, fifo), "the warning names the path: %s", err);
    cr_expect(strstr(err, "cubert[warn][memory]: first\ncubert[warn][memory]: second\n"), "%s",
              err);
    if (with_reader) {
      char byte;
      cr_expect_leq(read(reader, &byte, 1), 0, "nothing is written into the FIFO");
      close(reader);
    }
  }
  unsetenv("CUBERT_LOG_FILE");
  set_log(NULL);
  unlink(fifo);
  rmdir(dir);
}

/* A folder is refused the same way, naming what it is. */
Test(core_log, folder_file_is_refused_once) {
  setenv("CUBERT_LOG_FILE", "/tmp", 1);
  core_capture cap;
  const char *err = log_two_lines_in_child(&cap);
  cr_expect_eq(count_of(err, "CUBERT_LOG_FILE '/tmp' is a folder, not a regular file"), 1, "%s",
               err);
  cr_expect_eq(count_of(err, "cubert[warn][memory]: "), 2, "%s", err);
  unsetenv("CUBERT_LOG_FILE");
  set_log(NULL);
}

/* A path longer than the 4,096 bytes the sink used to remember never matched its copy, so the
   "cannot be opened" line came once per log line; it comes once, with the reason. */
Test(core_log, overlong_path_warns_once) {
  static char path[5001];
  path[0] = '/';
  memset(path + 1, 'a', sizeof(path) - 2);
  path[sizeof(path) - 1] = '\0';
  setenv("CUBERT_LOG_FILE", path, 1);
  set_log("warn");
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  for (int i = 0; i < 3; ++i) cubert_log(CUBERT_LOG_WARN, "memory", "line %d", i);
  const char *err = core_capture_end(&cap);
  cr_expect_eq(count_of(err, "cannot be opened for appending (File name too long)"), 1, "%.300s",
               err);
  cr_expect_eq(count_of(err, "cubert[warn][memory]: line "), 3);
  unsetenv("CUBERT_LOG_FILE");
  set_log(NULL);
}

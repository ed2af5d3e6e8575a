/* CUBERT_TRACE (issue 10 #9): one Chrome trace per process that every device writes to, with
   one track group (pid) per device; events are streamed to the file as they happen (no
   unbounded buffer), and the file is valid JSON whenever the devices were destroyed, whatever
   bytes the kernel names hold. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "cubert/cubert.h"
#include "test_device.h"

/* ---- a small strict JSON validator (RFC 8259, UTF-8 checked) ----------------------------- */

typedef struct json {
  const unsigned char *p, *end;
} json;

static void ws(json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) ++j->p;
}

static int value(json *j, int depth);

/* Length of the valid UTF-8 sequence at p (0: invalid). */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n = c < 0x80                 ? 1
             : c >= 0xc2 && c <= 0xdf ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (!n || (size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && p[1] < 0xa0) return 0;
  if (c == 0xed && p[1] > 0x9f) return 0;
  if (c == 0xf0 && p[1] < 0x90) return 0;
  if (c == 0xf4 && p[1] > 0x8f) return 0;
  return n;
}

static int string(json *j) {
  if (j->p >= j->end || *j->p != '"') return 0;
  ++j->p;
  while (j->p < j->end && *j->p != '"') {
    if (*j->p < 0x20) return 0;
    if (*j->p == '\\') {
      if (++j->p >= j->end) return 0;
      if (*j->p == 'u') {
        for (int i = 1; i <= 4; ++i)
          if (j->p + i >= j->end || !strchr("0123456789abcdefABCDEF", j->p[i])) return 0;
        j->p += 5;
      } else if (strchr("\"\\/bfnrt", *j->p)) {
        ++j->p;
      } else {
        return 0;
      }
      continue;
    }
    size_t n = utf8_len(j->p, j->end);
    if (!n) return 0;
    j->p += n;
  }
  if (j->p >= j->end) return 0;
  ++j->p;
  return 1;
}

static int number(json *j) {
  const unsigned char *start = j->p;
  if (j->p < j->end && *j->p == '-') ++j->p;
  while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || strchr(".eE+-", *j->p))) ++j->p;
  return j->p > start;
}

static int value(json *j, int depth) {
  if (depth > 64) return 0;
  ws(j);
  if (j->p >= j->end) return 0;
  if (*j->p == '{' || *j->p == '[') {
    unsigned char close = *j->p == '{' ? '}' : ']';
    int object = close == '}';
    ++j->p;
    ws(j);
    if (j->p < j->end && *j->p == close) {
      ++j->p;
      return 1;
    }
    for (;;) {
      if (object) {
        ws(j);
        if (!string(j)) return 0;
        ws(j);
        if (j->p >= j->end || *j->p != ':') return 0;
        ++j->p;
      }
      if (!value(j, depth + 1)) return 0;
      ws(j);
      if (j->p < j->end && *j->p == ',') {
        ++j->p;
        continue;
      }
      if (j->p < j->end && *j->p == close) {
        ++j->p;
        return 1;
      }
      return 0;
    }
  }
  if (*j->p == '"') return string(j);
  for (const char *const *lit = (const char *const[]){"true", "false", "null", NULL}; *lit; ++lit)
    if ((size_t)(j->end - j->p) >= strlen(*lit) && memcmp(j->p, *lit, strlen(*lit)) == 0) {
      j->p += strlen(*lit);
      return 1;
    }
  return number(j);
}

static char *slurp(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? cap * 2 : 4096;
      data = realloc(data, cap + 1);
      cr_assert_not_null(data);
    }
    size_t n = fread(data + size, 1, cap - size, f);
    if (!n) break;
    size += n;
  }
  fclose(f);
  data[size] = '\0';
  *out_size = size;
  return data;
}

static size_t count(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) ++n;
  return n;
}

/* Reads the trace, asserts that it is one valid JSON document, returns its text. */
static char *valid_trace(const char *path) {
  size_t size = 0;
  char *text = slurp(path, &size);
  cr_assert_not_null(text, "no trace file at %s", path);
  json j = {(const unsigned char *)text, (const unsigned char *)text + size};
  int ok = value(&j, 0);
  ws(&j);
  cr_assert(ok && j.p == j.end, "invalid JSON at byte %zu of %zu:\n%s",
            (size_t)(j.p - (const unsigned char *)text), size, text);
  return text;
}

/* ---- tests ------------------------------------------------------------------------------- */

static char g_path[4096];

static void trace_to_temp_file(void) {
  char cwd[2048];
  cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
  snprintf(g_path, sizeof(g_path), "%s/trace-test-%ld.json", cwd, (long)getpid());
  remove(g_path);
  setenv("CUBERT_TRACE", g_path, 1);
  cubert_config_reload_for_tests();
}

static void launch_n(cubert_client *client, const cubert_kernel_def *kernel, int n) {
  for (int i = 0; i < n; ++i) {
    cubert_status s = cubert_client_launch(client, kernel, cubert_cube_count_new_3d(1, 1, 1),
                                           cubert_cube_dim_new_3d(1, 1, 1), NULL);
    cr_assert_null(s, "launch: %s", cubert_status_message(s));
  }
  cr_assert_null(cubert_client_sync(client));
}

Test(core_trace, two_devices_share_one_valid_trace, .timeout = 120) {
  trace_to_temp_file();
  cubert_client *cpu = NULL, *ocl = NULL;
  cr_assert_null(cubert_client_create("cpu", &cpu));
  cubert_test_device_choice second = cubert_test_device("opencl", "opencl");
  cr_assert_not_null(second.selector, "%s", second.error);
  cubert_status s = cubert_client_create(second.selector, &ocl);
  if (s) {
    cr_assert(!second.from_env, "CUBERT_TEST_DEVICE=\"%s\": %s", second.selector,
              cubert_status_message(s));
    cubert_status_free(s);
    cubert_client_release(cpu);
    cr_skip_test("a second device (OpenCL) is needed");
  }
  /* A name that is not UTF-8 (each byte of a broken sequence reads as one U+FFFD), with a
     quote, a backslash and a control byte. */
  cubert_kernel_def odd = cubert_kernel_noop;
  odd.name = "odd\xff\xfe name \xe2\x82 \x01\"q\\ \xc3\xa9";
  launch_n(cpu, &cubert_kernel_noop, 3);
  launch_n(ocl, &cubert_kernel_noop, 2);
  launch_n(cpu, &odd, 1);
  cubert_client_release(cpu); /* the first device goes: its events stay */
  char *text = valid_trace(g_path);
  cr_expect_eq(count(text, "\"ph\":\"X\""), 6, "%s", text);
  free(text);
  launch_n(ocl, &cubert_kernel_noop, 2);
  cubert_client_release(ocl);
  text = valid_trace(g_path);
  cr_expect_eq(count(text, "\"ph\":\"X\""), 8, "%s", text);
  cr_expect_eq(count(text, "\"name\":\"process_name\""), 2, "one track group per device: %s", text);
  cr_expect_eq(count(text, "\"pid\":1,"), 5, "%s", text); /* metadata + 4 launches (cpu) */
  cr_expect_eq(count(text, "\"pid\":2,"), 5, "%s", text); /* metadata + 4 launches (opencl) */
  cr_expect(strstr(text, "odd\\ufffd\\ufffd name \\ufffd\\ufffd \\u0001\\\"q\\\\ \xc3\xa9"), "%s",
            text);
  free(text);
  remove(g_path);
}

/* Events reach the file while the device lives: nothing is held back in memory. */
Test(core_trace, events_are_streamed_while_the_device_lives) {
  trace_to_temp_file();
  cubert_client *cpu = NULL;
  cr_assert_null(cubert_client_create("cpu", &cpu));
  launch_n(cpu, &cubert_kernel_noop, 2000);
  /* Valid JSON already, holding every launch. */
  char *text = valid_trace(g_path);
  size_t events = count(text, "\"ph\":\"X\"");
  cr_expect_eq(events, 2000, "%zu events in the file before the device was destroyed", events);
  free(text);
  cubert_client_release(cpu);
  text = valid_trace(g_path);
  cr_expect_eq(count(text, "\"ph\":\"X\""), 2000);
  free(text);
  remove(g_path);
}

/* A collective's phases: each member thread's waits, combination and stage-in of every chunk,
   on track 1000 + rank of its device's group. Two CPU clients, 3 chunks of 4 KiB. */
Test(core_trace, collective_phases_are_traced, .timeout = 60) {
  trace_to_temp_file();
  setenv("CUBERT_COMM_CHUNK_BYTES", "4096", 1);
  cubert_client *c[2] = {NULL, NULL};
  cubert_handle *src[2], *dst[2];
  float ones[3000];
  for (int i = 0; i < 3000; ++i) ones[i] = 1.0f;
  for (int i = 0; i < 2; ++i) {
    cr_assert_null(cubert_client_create("cpu", &c[i]));
    cr_assert_null(cubert_client_create_buffer(c[i], ones, sizeof ones, &src[i]));
    cr_assert_null(cubert_client_empty(c[i], sizeof ones, &dst[i]));
  }
  cubert_comm *comm = NULL;
  cr_assert_null(cubert_comm_create(c, 2, &comm));
  unsetenv("CUBERT_COMM_CHUNK_BYTES");
  cr_assert_null(cubert_comm_all_reduce(comm, src, dst, 3000, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  float got[3000];
  cr_assert_null(cubert_client_read(c[1], dst[1], got, sizeof got));
  cr_expect_eq(got[2999], 2.0f);
  cubert_comm_release(comm);
  char *text = valid_trace(g_path);
  cr_expect_eq(count(text, "\"name\":\"cubert_comm_all_reduce #0: combine\""), 6,
               "2 members x 3 chunks: %s", text);
  cr_expect_eq(count(text, "\"name\":\"cubert_comm_all_reduce #0: stage in (start the write)\""), 6,
               "%s", text);
  cr_expect_eq(count(text, "wait for the caller's stream"), 2, "%s", text);
  cr_expect(count(text, "\"tid\":1000}") >= 17 && count(text, "\"tid\":1001}") >= 17,
            "5 phases per chunk and 2 per job on each member's track: %s", text);
  free(text);
  for (int i = 0; i < 2; ++i) {
    cubert_handle_release(src[i]);
    cubert_handle_release(dst[i]);
    cubert_client_release(c[i]);
  }
  remove(g_path);
}

/* A FIFO at the path (no reader) must not block the first launch: fopen(path, "w") waited for
   a reader forever. Launches run untraced and the FIFO is left as it was. */
Test(core_trace, a_fifo_at_the_path_does_not_block_launches, .timeout = 60) {
  char cwd[2048];
  cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
  snprintf(g_path, sizeof(g_path), "%s/trace-fifo-%ld", cwd, (long)getpid());
  remove(g_path);
  cr_assert_eq(mkfifo(g_path, 0600), 0, "mkfifo %s", g_path);
  setenv("CUBERT_TRACE", g_path, 1);
  cubert_config_reload_for_tests();
  cubert_client *cpu = NULL;
  cr_assert_null(cubert_client_create("cpu", &cpu));
  launch_n(cpu, &cubert_kernel_noop, 3);
  cubert_client_release(cpu);
  struct stat st;
  cr_assert_eq(stat(g_path, &st), 0);
  cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced");
  remove(g_path);
  /* A regular file at a new path is traced again. */
  trace_to_temp_file();
  cr_assert_null(cubert_client_create("cpu", &cpu));
  launch_n(cpu, &cubert_kernel_noop, 2);
  char *text = valid_trace(g_path);
  cr_expect_eq(count(text, "\"ph\":\"X\""), 2);
  free(text);
  cubert_client_release(cpu);
  remove(g_path);
}

/* The kernel sanitizer's planted-bug suite: every bug of tests/sanitizer/bugs.cube.c is launched
   in validate mode on the CPU server and must be reported with its category, kernel, unit and
   cube, and the file:line of the access (for a race, of the other access too), symbolized by the
   library itself (backends/cpu/san_symbols.c) whatever the build type: this program and its
   kernels' main copy are built as in a Release build (-O3, no -g: tests/CMakeLists.txt); only
   the sanitize copy's own line tables name the lines. Every corrected twin must run clean, and
   so must each bug in checked mode (the sanitizer runs in validate mode only). Plain C, so that
   it also runs under TSan. Exit 0: all as expected; 1: a check failed; 77: no CPU server. */
#include <cubert/cpu.h>
#include <cubert/cubert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kernels of bugs.cube.c. */
extern const cubert_kernel_def ww_fiber, ww_fiber_ok, rw_fiber, rw_fiber_ok, war_fiber,
    atomic_fiber_ok, oob_index_fiber, oob_ptr_fiber, oob_fiber_ok, uninit_fiber, uninit_fiber_ok,
    return_fiber, return_fiber_ok, private_fiber, rw_phased, rw_phased_ok, ww_phased,
    oob_index_phased, oob_ptr_phased, oob_phased_ok, uninit_phased, private_phased, private_unit,
    uninit_private_unit, ww_buffer_fiber, ww_buffer_fiber_ok, rw_buffer_fiber, rw_buffer_fiber_ok,
    atomic_buffer_fiber_ok, war_buffer_phased, war_buffer_phased_ok, ww_buffer_phased,
    ww_buffer_unit, ww_buffer_unit_ok, rw_buffer_unit, cubes_found, cubes_private, read_in_unit,
    read_in_fiber, read_in_phased, fill_first, increment_unit, wild_fiber, wild_phased, wild_unit,
    oob_buffer_fiber, oob_buffer_unit, uninit_private_unit_ok, uninit_scalar_fiber,
    uninit_scalar_fiber_ok, uninit_exclusive_phased, found_flag_unit, found_flag_unit_ok,
    found_diff_unit, found_flag_fiber, found_flag_fiber_ok, found_diff_fiber, found_flag_phased_ok,
    return_read_fiber, uninit_divisor_unit, div_unit, div_unit_ok, div_fiber, div_phased,
    war_phased, bytes_phased, bytes_phased_ok;

enum { UNITS = 8, CUBES_Y = 2, N = UNITS * CUBES_Y };

/* How a report names its line. */
typedef enum {
  LINE_AT,      /* "bugs.cube.c:<line>" (bounds-strict's own record) */
  LINE_CODE,    /* " at bugs.cube.c:<line>": the access, symbolized from its code address */
  LINE_BARRIER, /* "(at bugs.cube.c:<line>)": the fiber runner's barrier report */
} line_kind;

typedef struct bug {
  const cubert_kernel_def *kernel;
  const char *category; /* text the report must hold */
  const char *marker;   /* "@name" in bugs.cube.c: the line */
  line_kind line;
  int unit;           /* x of the reported unit (cube (0, 1, 0)); -1: not checked */
  int other;          /* x of the other side of a race; -1: none */
  const char *memory; /* text naming the memory, or NULL */
  uint32_t info;
  int other_cube; /* buffer races: y of the other side's cube ("unit (x, 0, 0) of cube (0, y,
                     0) wrote"); -1: a shared-memory race ("unit (x, 0, 0) wrote") */
  const char *other_marker; /* races: the other access's line ("wrote it at bugs.cube.c:<line>") */
} bug;

/* The four wild-pointer bugs of kernel `k` (bugs.cube.c's wild_ptr: info bit 0 the private
   pointer never set, else the constant address 64; bit 1 a store, at its own line). */
#define WILD_(k, info, kind, addr, marker)                                                      \
  {                                                                                             \
    &k,                                                                                         \
        "wild pointer: a 4-byte " kind " at address " addr                                      \
        ", outside every memory the unit may touch",                                            \
        marker, LINE_CODE, 2, -1, "the launch stopped there, before the access", info, -1, NULL \
  }
#define WILD_FORM_(k, load, store)                                                    \
  WILD_(k, 0, "read", "0x40", load), WILD_(k, 1, "read", "0xfefefefefefefefe", load), \
      WILD_(k, 2, "write", "0x40", store), WILD_(k, 3, "write", "0xfefefefefefefefe", store)

static const bug bugs[] = {
    {&ww_fiber, "data race (write after write)", "@ww_fiber", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32)", 3, -1, "@ww_fiber"},
    {&rw_fiber, "data race (read after write)", "@rw_fiber", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32)", 3, -1, "@rw_fiber_write"},
    {&war_fiber, "data race (read after write)", "@war_fiber", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32)", 3, -1, "@war_fiber_write"},
    {&oob_index_fiber, "out-of-bounds array index: index 8 past the bounds of 'float [8]'",
     "@oob_index_fiber", LINE_AT, 7, -1, NULL, 3, -1, NULL},
    {&oob_ptr_fiber,
     "out-of-bounds shared memory: a 4-byte write at byte offset 76 of the "
     "32-byte shared memory",
     "@oob_ptr_fiber", LINE_CODE, 3, -1, NULL, 3, -1, NULL},
    {&uninit_fiber, "uninitialised shared memory: read of byte 4 (of 32)", "@uninit_fiber",
     LINE_CODE, 0, -1, NULL, 3, -1, NULL},
    {&return_fiber,
     "barrier divergence: 1 unit of the cube (unit (5, 0, 0)) returned before the barrier at",
     "@return_fiber", LINE_AT, 5, -1, NULL, 3, -1, NULL},
    {&return_read_fiber,
     "barrier divergence: 2 units of the cube (unit (5, 0, 0), unit (6, 0, 0)) returned before "
     "the barrier at",
     "@return_read_fiber", LINE_AT, 5, -1, NULL, 3, -1, NULL},
    {&uninit_private_unit,
     "uninitialised private memory: buffer 0 'out' element 13 (of 16) is -1.69474e+38 when "
     "private variables start as 0xfe bytes and 0 when they start zeroed",
     "@uninit_private_unit", LINE_AT, 5, -1, NULL, 3, -1, NULL},
    {&uninit_scalar_fiber,
     "uninitialised private memory: buffer 0 'out' element 14 (of 16) is -1.69474e+38 when "
     "private variables start as 0xfe bytes and 1 when they start zeroed",
     "@uninit_scalar_fiber", LINE_AT, 6, -1, NULL, 3, -1, NULL},
    {&uninit_exclusive_phased,
     "uninitialised private memory: buffer 0 'out' element 10 (of 16) is -1.69474e+38 when "
     "private variables start as 0xfe bytes and 0 when they start zeroed",
     "@uninit_exclusive_phased", LINE_AT, 2, -1, NULL, 3, -1, NULL},
    {&uninit_divisor_unit, "uninitialised private memory: the unit divides by zero at bugs.cube.c:",
     "@uninit_divisor_unit", LINE_AT, 5, -1,
     "when private variables start zeroed, and not when they start as 0xfe bytes", 3, -1, NULL},
    {&div_unit, "integer division by zero: 13 divided by 0", "@div_unit", LINE_AT, 5, -1,
     "the launch stopped there, before the division", 3, -1, NULL},
    {&div_fiber, "integer division by zero: 5 divided by 0", "@div_fiber", LINE_AT, 5, -1,
     "the launch stopped there, before the division", 3, -1, NULL},
    {&div_phased, "integer division by zero: 5 divided by 0", "@div_phased", LINE_AT, 5, -1,
     "the launch stopped there, before the division", 3, -1, NULL},
    {&found_flag_unit, "same-value write race", "@found_flag_unit", LINE_CODE, 3, 3,
     "buffer 0 'out' element 0 (of 16): unit (3, 0, 0) of cube (0, 0, 0) wrote the same value to "
     "it",
     3, 0, NULL},
    {&found_diff_unit, "data race (write after write of different values, through STORE_SAME)",
     "@found_diff_unit", LINE_CODE, 3, 3,
     "buffer 0 'out' element 0 (of 16): unit (3, 0, 0) of cube (0, 0, 0) wrote a different value "
     "to it",
     3, 0, NULL},
    {&found_flag_fiber, "same-value write race", "@found_flag_fiber", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32): unit (0, 0, 0) wrote the same value to it", 3, -1, NULL},
    {&found_diff_fiber, "data race (write after write of different values, through STORE_SAME)",
     "@found_diff_fiber", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32): unit (0, 0, 0) wrote a different value to it", 3, -1, NULL},
    {&private_fiber, "index 4 past the bounds of 'float [4]'", "@private_fiber", LINE_AT, 6, -1,
     NULL, 3, -1, NULL},
    {&rw_phased, "data race (read after write)", "@rw_phased", LINE_CODE, 0, 1,
     "shared memory byte 4 (of 32)", 3, -1, "@rw_phased_write"},
    {&ww_phased, "data race (write after write)", "@ww_phased", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 32)", 3, -1, "@ww_phased"},
    {&war_phased, "data race (write after read)", "@war_phased", LINE_CODE, 0, 1,
     "shared memory byte 0 (of 32)", 3, -1, "@war_phased_read"},
    {&bytes_phased, "data race (write after write)", "@bytes_phased", LINE_CODE, 1, 0,
     "shared memory byte 0 (of 8)", 3, -1, "@bytes_phased"},
    {&oob_index_phased, "index 8 past the bounds of 'float [8]'", "@oob_index_phased", LINE_AT, 7,
     -1, NULL, 3, -1, NULL},
    {&oob_ptr_phased,
     "out-of-bounds shared memory: a 4-byte write at byte offset 104 of the 32-byte shared "
     "memory",
     "@oob_ptr_phased", LINE_CODE, 2, -1, NULL, 3, -1, NULL},
    {&uninit_phased, "uninitialised shared memory: read of byte 16 (of 32)", "@uninit_phased",
     LINE_CODE, 3, -1, NULL, 3, -1, NULL},
    {&private_phased, "index 4 past the bounds of 'float [4][1024]'", "@private_phased", LINE_AT, 6,
     -1, NULL, 3, -1, NULL},
    {&private_unit, "index 4 past the bounds of 'float [4]'", "@private_unit", LINE_AT, 5, -1, NULL,
     3, -1, NULL},
    {&ww_buffer_fiber, "data race (write after write)", "@ww_buffer_fiber", LINE_CODE, 3, 2,
     "buffer 0 'out' element 10 (of 16)", 3, 1, "@ww_buffer_fiber_first"},
    {&rw_buffer_fiber, "data race (read after write)", "@rw_buffer_fiber", LINE_CODE, 2, 1,
     "buffer 0 'out' element 1 (of 16)", 3, 0, "@rw_buffer_fiber_write"},
    {&war_buffer_phased, "data race (write after read)", "@war_buffer_phased", LINE_CODE, 4, 3,
     "buffer 0 'out' element 12 (of 16)", 3, 1, "@war_read"},
    {&ww_buffer_phased, "data race (write after write)", "@ww_buffer_phased", LINE_CODE, 0, -1,
     "buffer 0 'out' element 0 (of 16): every unit (outside a PHASE) of cube (0, 0, 0) wrote", 3,
     -1, "@ww_buffer_phased"},
    {&ww_buffer_unit, "data race (write after write)", "@ww_buffer_unit", LINE_CODE, 5, 4,
     "buffer 0 'out' element 12 (of 16)", 3, 1, "@ww_buffer_unit"},
    {&rw_buffer_unit, "data race (read after write)", "@rw_buffer_unit", LINE_CODE, 5, 4,
     "buffer 0 'out' element 12 (of 16)", 3, 1, "@rw_buffer_unit_write"},
    {&oob_buffer_fiber, "accessed element 16 of buffer 0 \"out\" (float), which holds 16 elements",
     "@oob_buffer_fiber", LINE_CODE, 7, -1, NULL, 3, -1, NULL},
    {&oob_buffer_unit, "accessed element 16 of buffer 0 \"out\" (float), which holds 16 elements",
     "@oob_buffer_unit", LINE_CODE, 5, -1, NULL, 3, -1, NULL},
    WILD_FORM_(wild_fiber, "@wild_load_fiber", "@wild_store_fiber"),
    WILD_FORM_(wild_phased, "@wild_load_phased", "@wild_store_phased"),
    WILD_FORM_(wild_unit, "@wild_load_unit", "@wild_store_unit"),
};

static const cubert_kernel_def *const twins[] = {
    &ww_fiber_ok,
    &rw_fiber_ok,
    &atomic_fiber_ok,
    &oob_fiber_ok,
    &uninit_fiber_ok,
    &return_fiber_ok,
    &rw_phased_ok,
    &oob_phased_ok,
    &ww_buffer_fiber_ok,
    &rw_buffer_fiber_ok,
    &atomic_buffer_fiber_ok,
    &war_buffer_phased_ok,
    &ww_buffer_unit_ok,
    &uninit_private_unit_ok,
    &uninit_scalar_fiber_ok,
    &found_flag_unit_ok,
    &found_flag_fiber_ok,
    &found_flag_phased_ok,
    &div_unit_ok,
    &bytes_phased_ok,
};

static int failures;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      ++failures;                                          \
    }                                                      \
  } while (0)

/* The line of `marker` in the file at `path` (marker_line: bugs.cube.c), 0 if absent. */
static int marker_line_in(const char *path, const char *marker) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char text[512];
  int line = 0, found = 0;
  while (fgets(text, sizeof text, f)) {
    ++line;
    const char *at = strstr(text, marker);
    size_t n = strlen(marker);
    if (at && (at[n] == ' ' || at[n] == '\n')) {
      found = line;
      break;
    }
  }
  fclose(f);
  return found;
}
static int marker_line(const char *marker) {
  return marker_line_in(CUBERT_SANITIZER_BUGS_SOURCE, marker);
}

/* Whether `msg` holds `before` "bugs.cube.c:<line>" not followed by a digit. */
static int has_line(const char *msg, const char *before, int line) {
  char want[96];
  snprintf(want, sizeof want, "%sbugs.cube.c:%d", before, line);
  for (const char *at = strstr(msg, want); at; at = strstr(at + 1, want))
    if (at[strlen(want)] < '0' || at[strlen(want)] > '9') return 1;
  return 0;
}

/* A report with its lines symbolized names no code address, or says why it could not. */
static void check_symbolized(const char *name, const char *msg) {
#if CUBERT_TEST_LIBDW
  CHECK(!strstr(msg, "(no line:"), "%s: a code address where a line was due: %s", name, msg);
#else
  CHECK(!strstr(msg, "(no line:") || strstr(msg, "(no line: cubert was built without libdw"),
        "%s: a code address without the reason: %s", name, msg);
#endif
}

static cubert_status run(cubert_client *client, const cubert_kernel_def *k, uint32_t info,
                         cubert_execution_mode mode, float *out) {
  cubert_handle *h = NULL;
  cubert_status s = cubert_client_create_buffer(client, out, N * sizeof *out, &h);
  if (!s) {
    const uint64_t words[1] = {info};
    const cubert_kernel_args args = {&h, 1, words, 1};
    s = cubert_client_launch_mode(client, k, cubert_cube_count_new_3d(1, CUBES_Y, 1),
                                  cubert_cube_dim_new_3d(UNITS, 1, 1), &args, mode);
  }
  if (!s) s = cubert_client_read(client, h, out, N * sizeof *out);
  /* After a report the stream is usable again: what the launch left is read all the same. */
  if (s && h) cubert_status_free(cubert_client_read(client, h, out, N * sizeof *out));
  cubert_handle_release(h);
  return s;
}

static void check_bug(cubert_client *client, const bug *b) {
  float out[N] = {0};
  cubert_status s = run(client, b->kernel, b->info, CUBERT_EXECUTION_VALIDATE, out);
  const char *name = b->kernel->name;
  CHECK(s, "%s: no report in validate mode", name);
  if (!s) return;
  const char *msg = cubert_status_message(s);
  char want[160];
  CHECK(strstr(msg, b->category), "%s: no \"%s\" in: %s", name, b->category, msg);
  snprintf(want, sizeof want, "kernel \"%s\" (validate mode", name);
  CHECK(strstr(msg, want), "%s: the report does not name the kernel: %s", name, msg);
  if (b->unit >= 0) {
    snprintf(want, sizeof want, "unit (%d, 0, 0) of cube (0, 1, 0)", b->unit);
    CHECK(strstr(msg, want), "%s: no \"%s\" in: %s", name, want, msg);
  } else {
    CHECK(strstr(msg, "of cube (0, 1, 0)"), "%s: not cube (0, 1, 0): %s", name, msg);
  }
  if (b->other >= 0) {
    char side[64], want_read[96];
    if (b->other_cube >= 0)
      snprintf(side, sizeof side, "unit (%d, 0, 0) of cube (0, %d, 0)", b->other, b->other_cube);
    else
      snprintf(side, sizeof side, "unit (%d, 0, 0)", b->other);
    snprintf(want, sizeof want, "%s wrote", side);
    snprintf(want_read, sizeof want_read, "%s read", side);
    CHECK(strstr(msg, want) || strstr(msg, want_read), "%s: the other unit (%d) is not named: %s",
          name, b->other, msg);
  }
  if (b->memory) CHECK(strstr(msg, b->memory), "%s: no \"%s\" in: %s", name, b->memory, msg);
  int line = b->marker ? marker_line(b->marker) : 0;
  CHECK(b->marker && line > 0, "%s: marker %s not found", name, b->marker);
  check_symbolized(name, msg);
  /* Without libdw only bounds-strict's and the barrier checks' own records name lines. */
  const int symbolized = CUBERT_TEST_LIBDW || b->line != LINE_CODE;
  if (line > 0 && symbolized) {
    const char *before = b->line == LINE_AT ? "" : b->line == LINE_BARRIER ? "(at " : " at ";
    CHECK(has_line(msg, before, line), "%s: no \"%sbugs.cube.c:%d\" in: %s", name, before, line,
          msg);
  }
  if (b->other_marker && CUBERT_TEST_LIBDW) {
    int other = marker_line(b->other_marker);
    CHECK(other > 0, "%s: marker %s not found", name, b->other_marker);
    CHECK(has_line(msg, "wrote it at ", other) || has_line(msg, "read it at ", other),
          "%s: the other access's line %d is not named: %s", name, other, msg);
  }
  printf("%s: %s\n", name, msg);
  cubert_status_free(s);
  /* Checked mode runs the plain copy: no report. */
  /* An index past an array is undefined behaviour in the plain copy (and fatal in an ASan or
     UBSan build of this test), a wild pointer faults there: only the sanitize copy runs those. */
  if (strstr(b->category, "out-of-bounds") || strstr(b->category, "past the bounds") ||
      strstr(b->category, "wild pointer") || strstr(b->category, "divides by zero"))
    return;
  /* A division by zero faults there (x86-64): the launch fails, the process goes on. Not in the
     ASan build, whose UBSan halts at the division first; elsewhere nothing faults. */
  const int divides = strstr(b->category, "integer division by zero") != NULL;
#if defined(__SANITIZE_ADDRESS__) || !defined(__x86_64__)
  if (divides) return;
#endif
  s = run(client, b->kernel, b->info, CUBERT_EXECUTION_CHECKED, out);
  if (divides) {
    CHECK(s && strstr(cubert_status_message(s), "integer division by zero") &&
              strstr(cubert_status_message(s), name),
          "%s: checked mode: %s", name, s ? cubert_status_message(s) : "no error");
    cubert_status_free(s);
    return;
  }
  CHECK(!s, "%s: checked mode reported: %s", name, cubert_status_message(s));
  cubert_status_free(s);
}

/* ---- buffers nothing wrote ------------------------------------------------------------------ */

typedef enum { FILL_HOST, FILL_CHECKED, FILL_VALIDATE, FILL_COPY } fill_kind;
static const char *const fill_names[] = {"a host write", "a checked launch", "a validate launch",
                                         "cubert_op_copy"};

/* `in` from cubert_client_empty (cubert_client_empty_tensor for FILL_COPY), its first `filled`
   elements filled by `how`, then `k` (in, out) in validate mode: the launch's status. */
static cubert_status run_unwritten(cubert_client *client, const cubert_kernel_def *k,
                                   uint32_t filled, fill_kind how) {
  float data[N], zero[N] = {0};
  for (int i = 0; i < N; ++i) data[i] = (float)i;
  cubert_handle *in = NULL, *out = NULL;
  cubert_tensor in_t = {0}, src_t = {0};
  cubert_status s = NULL;
  if (how == FILL_COPY) {
    const cubert_layout_desc desc = {.rank = 1, .shape = {N}, .dtype = CUBERT_DTYPE_F32};
    s = cubert_client_empty_tensor(client, &desc, &in_t);
    if (!s) s = cubert_client_create_tensor(client, data, &desc, &src_t);
    if (!s && filled) s = cubert_op_copy(client, &src_t, &in_t);
    if (!s) in = cubert_handle_retain(in_t.handle);
  } else {
    s = cubert_client_empty(client, N * sizeof(float), &in);
    if (!s && how == FILL_HOST && filled)
      s = cubert_client_write(client, in, 0, data, filled * sizeof(float));
    if (!s && (how == FILL_CHECKED || how == FILL_VALIDATE)) {
      const uint64_t words[1] = {filled};
      const cubert_kernel_args args = {&in, 1, words, 1};
      s = cubert_client_launch_mode(
          client, &fill_first, cubert_cube_count_new_3d(1, CUBES_Y, 1),
          cubert_cube_dim_new_3d(UNITS, 1, 1), &args,
          how == FILL_CHECKED ? CUBERT_EXECUTION_CHECKED : CUBERT_EXECUTION_VALIDATE);
    }
  }
  if (!s) s = cubert_client_create_buffer(client, zero, sizeof zero, &out);
  if (!s) {
    cubert_handle *both[2] = {in, out};
    const cubert_kernel_args args = {both, 2, NULL, 0};
    s = cubert_client_launch_mode(client, k, cubert_cube_count_new_3d(1, CUBES_Y, 1),
                                  cubert_cube_dim_new_3d(UNITS, 1, 1), &args,
                                  CUBERT_EXECUTION_VALIDATE);
  }
  if (!s) s = cubert_client_sync(client);
  cubert_handle_release(in);
  cubert_handle_release(out);
  cubert_tensor_release(&in_t);
  cubert_tensor_release(&src_t);
  return s;
}

/* Reads of elements nothing wrote are reported, in every kernel form, naming the buffer,
   element, unit and line; filled buffers run clean whichever way they were filled. */
static void check_unwritten(cubert_client *client) {
  const cubert_kernel_def *const forms[] = {&read_in_unit, &read_in_fiber, &read_in_phased};
  const char *const markers[] = {"@read_in_unit", "@read_in_fiber", "@read_in_phased"};
  for (int f = 0; f < 3; ++f) {
    const char *name = forms[f]->name;
    /* Half filled by the host, or by a validate launch that wrote only that half. */
    for (fill_kind how = FILL_HOST; how <= FILL_VALIDATE; how += FILL_VALIDATE - FILL_HOST) {
      cubert_status s = run_unwritten(client, forms[f], N / 2, how);
      const char *msg = s ? cubert_status_message(s) : "";
      CHECK(s, "%s: no report for a half-filled buffer (filled by %s)", name, fill_names[how]);
      CHECK(strstr(msg, "uninitialised buffer memory: read of buffer 0 'in' element 8 (of 16)"),
            "%s (filled by %s): not the unwritten element: %s", name, fill_names[how], msg);
      CHECK(strstr(msg, "unit (0, 0, 0) of cube (0, 1, 0)"), "%s: not the first unit of cube 1: %s",
            name, msg);
      int line = marker_line(markers[f]);
      CHECK(!CUBERT_TEST_LIBDW || has_line(msg, " at ", line), "%s: the read is at line %d: %s",
            name, line, msg);
      check_symbolized(name, msg);
      if (s) printf("%s: %s\n", name, msg);
      cubert_status_free(s);
    }
    /* Filled whole, each way: clean. */
    for (fill_kind how = FILL_HOST; how <= FILL_COPY; ++how) {
      cubert_status s = run_unwritten(client, forms[f], N, how);
      CHECK(!s, "%s on a buffer filled by %s was reported: %s", name, fill_names[how],
            cubert_status_message(s));
      cubert_status_free(s);
    }
  }
  /* A read-write binding: its first read comes before any write. One report per buffer: after
     it, what the launch could write counts as written. */
  cubert_handle *buf = NULL;
  cubert_status s = cubert_client_empty(client, N * sizeof(float), &buf);
  const cubert_kernel_args args = {&buf, 1, NULL, 0};
  for (int round = 0; round < 2 && !s; ++round) {
    s = cubert_client_launch_mode(client, &increment_unit, cubert_cube_count_new_3d(1, CUBES_Y, 1),
                                  cubert_cube_dim_new_3d(UNITS, 1, 1), &args,
                                  CUBERT_EXECUTION_VALIDATE);
    if (!s) s = cubert_client_sync(client);
    const char *msg = s ? cubert_status_message(s) : "";
    if (round == 0) {
      CHECK(strstr(msg, "read of buffer 0 'out' element 0 (of 16)") &&
                strstr(msg, "unit (0, 0, 0) of cube (0, 0, 0)"),
            "increment_unit on an empty buffer: %s", s ? msg : "no report");
      cubert_status_free(s);
      s = NULL;
    } else {
      CHECK(!s, "increment_unit reported twice for one buffer: %s", msg);
    }
  }
  cubert_status_free(s);
  cubert_handle_release(buf);
  /* Filled in place through the interop pointer, where the sanitizer cannot see: clean. */
  cubert_handle *in = NULL, *out = NULL;
  float zero[N] = {0};
  void *p = NULL;
  s = cubert_client_empty(client, N * sizeof(float), &in);
  if (!s) s = cubert_cpu_handle_ptr(client, in, &p, NULL);
  if (!s) memset(p, 0, N * sizeof(float));
  if (!s) s = cubert_client_create_buffer(client, zero, sizeof zero, &out);
  if (!s) {
    cubert_handle *both[2] = {in, out};
    const cubert_kernel_args two = {both, 2, NULL, 0};
    s = cubert_client_launch_mode(client, &read_in_unit, cubert_cube_count_new_3d(1, CUBES_Y, 1),
                                  cubert_cube_dim_new_3d(UNITS, 1, 1), &two,
                                  CUBERT_EXECUTION_VALIDATE);
  }
  if (!s) s = cubert_client_sync(client);
  CHECK(!s, "a buffer filled through cubert_cpu_handle_ptr was reported: %s",
        cubert_status_message(s));
  cubert_status_free(s);
  cubert_handle_release(in);
  cubert_handle_release(out);
}

/* ---- after a wild pointer ------------------------------------------------------------------ */

/* A launch a wild access stopped leaves the process and the client usable: on the same stream
   and on another, the corrected twin (info bit 2) then runs in validate and in checked mode and
   computes its result (every element 1 + 1), and the bug is reported again. */
static void check_after_wild(cubert_client *client) {
  const cubert_kernel_def *const forms[] = {&wild_fiber, &wild_phased, &wild_unit};
  cubert_client *other = NULL;
  cubert_status s = cubert_client_with_stream(client, cubert_client_stream(client) + 1, &other);
  CHECK(!s, "no second stream: %s", cubert_status_message(s));
  cubert_status_free(s);
  if (!other) return;
  for (int f = 0; f < 3; ++f) {
    const char *name = forms[f]->name;
    for (int c = 0; c < 2; ++c) {
      cubert_client *on = c ? other : client;
      float out[N] = {0};
      s = run(on, forms[f], 3, CUBERT_EXECUTION_VALIDATE, out);
      CHECK(s && strstr(cubert_status_message(s), "wild pointer"),
            "%s on stream %d: no wild-pointer report: %s", name, c,
            s ? cubert_status_message(s) : "OK");
      cubert_status_free(s);
      for (int v = 0; v < 2; ++v) {
        cubert_client *twin_on = v ? client : other; /* the other stream too */
        const cubert_execution_mode mode = v ? CUBERT_EXECUTION_CHECKED : CUBERT_EXECUTION_VALIDATE;
        memset(out, 0, sizeof out);
        s = run(twin_on, forms[f], 6, mode, out);
        CHECK(!s, "%s's twin after the wild launch: %s", name, cubert_status_message(s));
        cubert_status_free(s);
        int wrong = 0;
        for (int i = 0; i < N; ++i) wrong += out[i] != 2.0f;
        CHECK(!wrong, "%s's twin after the wild launch: %d elements are not 2 (out[10] = %g)", name,
              wrong, out[10]);
      }
    }
  }
  cubert_client_release(other);
}

/* ---- what a report costs (printed, docs/debugging.md) -------------------------------------- */

static double launch_ms(cubert_client *client, const cubert_kernel_def *k) {
  float out[N] = {0};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  cubert_status s = run(client, k, 3, CUBERT_EXECUTION_VALIDATE, out);
  clock_gettime(CLOCK_MONOTONIC, &b);
  cubert_status_free(s);
  return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6;
}

/* A fresh report place (the launch that reads the line tables first, or a new address) against
   the same report again (cached) and the clean twin. Run first, before any other report. */
static void time_reports(cubert_client *client) {
  (void)launch_ms(client, &rw_fiber_ok); /* the first launch's own start-up */
  const double first = launch_ms(client, &uninit_fiber);
  const double fresh = launch_ms(client, &rw_fiber);
  double again = 1e9, clean = 1e9;
  for (int i = 0; i < 5; ++i) {
    double t = launch_ms(client, &rw_fiber), c = launch_ms(client, &rw_fiber_ok);
    again = t < again ? t : again;
    clean = c < clean ? c : clean;
  }
  printf(
      "report cost: first report of the process %.3f ms, a new place %.3f ms, the same place "
      "again %.3f ms, the clean twin %.3f ms (validate-mode launch and read, 2 cubes of 8)\n",
      first, fresh, again, clean);
}

/* ---- many cubes: several chunks on several threads ---------------------------------------- */

extern const cubert_kernel_def cubes_fiber, cubes_phased, cubes_unit;

enum { MANY_UNITS = 256, MANY_CUBES = 64, MANY = MANY_UNITS * MANY_CUBES };

/* A launch of MANY_CUBES cubes of MANY_UNITS units (several chunks of the sanitized launch, run
   by every participant at once: main asks for 4 threads) in validate mode; out holds MANY. */
static cubert_status run_many(cubert_client *client, const cubert_kernel_def *k, uint32_t race,
                              float *out) {
  cubert_handle *h = NULL;
  cubert_status s = cubert_client_create_buffer(client, out, MANY * sizeof *out, &h);
  if (!s) {
    const uint64_t words[1] = {race};
    const cubert_kernel_args args = {&h, 1, words, 1};
    s = cubert_client_launch_mode(client, k, cubert_cube_count_new_3d(MANY_CUBES, 1, 1),
                                  cubert_cube_dim_new_3d(MANY_UNITS, 1, 1), &args,
                                  CUBERT_EXECUTION_VALIDATE);
  }
  if (!s) s = cubert_client_read(client, h, out, MANY * sizeof *out);
  cubert_handle_release(h);
  return s;
}

/* Without the race each form runs clean and computes its values; with it, the race between
   cube 0 (in the first chunk) and cube 63 (in the last, which another thread runs) is found,
   each time (which side the report names first depends on which thread came second). */
static void check_cubes(cubert_client *client) {
  const cubert_kernel_def *const forms[] = {&cubes_fiber, &cubes_phased, &cubes_unit};
  static float out[MANY];
  for (int f = 0; f < 3; ++f) {
    const char *name = forms[f]->name;
    memset(out, 0, sizeof out);
    cubert_status s = run_many(client, forms[f], 0, out);
    CHECK(!s, "%s over %d cubes: a correct kernel was reported: %s", name, MANY_CUBES,
          cubert_status_message(s));
    cubert_status_free(s);
    int wrong = 0;
    for (int i = 0; i < MANY; ++i) {
      const int next = i - i % MANY_UNITS + (i + 1) % MANY_UNITS;
      wrong += out[i] != (float)(f == 2 ? i : next);
    }
    CHECK(!wrong, "%s over %d cubes: %d elements wrong (out[300] = %g)", name, MANY_CUBES, wrong,
          out[300]);
    for (int round = 0; round < 3; ++round) {
      s = run_many(client, forms[f], 1, out);
      const char *msg = s ? cubert_status_message(s) : "no report";
      CHECK(
          s && strstr(msg, "data race (write after write) on buffer 0 'out' element 0 (of 16384)"),
          "%s over %d cubes: not the race on element 0: %s", name, MANY_CUBES, msg);
      CHECK(strstr(msg, "of cube (0, 0, 0)") && strstr(msg, "of cube (63, 0, 0)"),
            "%s over %d cubes: the race's cubes are not named: %s", name, MANY_CUBES, msg);
      if (round == 0 && s) printf("%s over %d cubes: %s\n", name, MANY_CUBES, msg);
      cubert_status_free(s);
    }
  }
}

/* Same-value stores and private memory over a launch of several chunks (threads): STORE_SAME of
   one value is clean and sets the flag, a plain STORE of one value is a same-value race and
   STORE_SAME of different values a race, each with the store's line; a private read before a
   write is reported at the last element, and an order-dependent float sum is not. */
static void check_many_same_private(cubert_client *client) {
  static float out[MANY];
  memset(out, 0, sizeof out);
  cubert_status s = run_many(client, &cubes_found, 0, out);
  CHECK(!s && out[0] == 1.0f && out[1] == 1.0f && out[MANY - 1] == (float)(MANY - 1),
        "cubes_found with STORE_SAME: %s (out[0] = %g)", s ? cubert_status_message(s) : "clean",
        out[0]);
  cubert_status_free(s);
  const char *const kinds[2] = {"same-value write race",
                                "data race (write after write of "
                                "different values, through STORE_SAME)"};
  const char *const markers[2] = {"@cubes_found", "@cubes_found_diff"};
  for (int k = 0; k < 2; ++k) {
    s = run_many(client, &cubes_found, 1 + (uint32_t)k, out);
    const char *msg = s ? cubert_status_message(s) : "no report";
    char want[64];
    snprintf(want, sizeof want, "cubes.cube.c:%d",
             marker_line_in(CUBERT_SANITIZER_CUBES_SOURCE, markers[k]));
    CHECK(s && strstr(msg, kinds[k]) && strstr(msg, "on buffer 0 'out' element 0 (of 16384)") &&
              strstr(msg, want),
          "cubes_found %d: not a \"%s\" at %s: %s", k + 1, kinds[k], want, msg);
    cubert_status_free(s);
  }
  s = run_many(client, &cubes_private, 0, out);
  CHECK(!s, "cubes_private without the bug: %s", s ? cubert_status_message(s) : "");
  cubert_status_free(s);
  s = run_many(client, &cubes_private, 1, out);
  const char *msg = s ? cubert_status_message(s) : "no report";
  CHECK(s &&
            strstr(msg,
                   "uninitialised private memory: buffer 0 'out' element 16383 (of 16384) "
                   "is -1.69474e+38 when private variables start as 0xfe bytes and 0 when "
                   "they start zeroed") &&
            strstr(msg, "unit (255, 0, 0) of cube (63, 0, 0)"),
        "cubes_private: %s", msg);
  cubert_status_free(s);
}

int main(void) {
  /* Several participants run a big sanitized launch, even on a machine of one core. */
  setenv("CUBERT_CPU_THREADS", "4", 0);
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create("cpu", &client);
  if (s) {
    fprintf(stderr, "no CPU server: %s\n", cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  time_reports(client);
  for (size_t i = 0; i < sizeof bugs / sizeof bugs[0]; ++i) check_bug(client, &bugs[i]);
  for (size_t i = 0; i < sizeof twins / sizeof twins[0]; ++i) {
    float out[N] = {0};
    s = run(client, twins[i], 3, CUBERT_EXECUTION_VALIDATE, out);
    CHECK(!s, "%s: a correct kernel was reported: %s", twins[i]->name, cubert_status_message(s));
    cubert_status_free(s);
  }
  /* The atomic twins counted every unit; the uninitialised private value is the fill pattern. */
  float out[N] = {0};
  s = run(client, &atomic_buffer_fiber_ok, 0, CUBERT_EXECUTION_VALIDATE, out);
  int32_t count;
  memcpy(&count, &out[0], sizeof count);
  CHECK(!s && count == N, "atomic_buffer_fiber_ok counted %d, not %d", (int)count, N);
  cubert_status_free(s);
  memset(out, 0, sizeof out);
  s = run(client, &atomic_fiber_ok, 0, CUBERT_EXECUTION_VALIDATE, out);
  CHECK(!s && out[0] == UNITS && out[N - 1] == UNITS, "atomic_fiber_ok counted %g", out[0]);
  cubert_status_free(s);
  /* The report leaves the launch's result (the check's runs write copies): the fill pattern. */
  s = run(client, &uninit_private_unit, 2, CUBERT_EXECUTION_VALIDATE, out);
  uint32_t bits;
  memcpy(&bits, &out[13], sizeof bits);
  CHECK(s && bits == 0xfefefefeu, "an uninitialised private float reads 0x%08x, not the pattern",
        (unsigned)bits);
  cubert_status_free(s);
  /* The found flags stored their value. */
  memset(out, 0, sizeof out);
  s = run(client, &found_flag_unit_ok, 3, CUBERT_EXECUTION_VALIDATE, out);
  CHECK(!s && out[0] == 1.0f && out[1] == 0.0f, "found_flag_unit_ok left %g, %g", out[0], out[1]);
  cubert_status_free(s);
  memset(out, 0, sizeof out);
  s = run(client, &found_flag_phased_ok, 3, CUBERT_EXECUTION_VALIDATE, out);
  CHECK(!s && out[0] == 1.0f && out[1] == 1.0f && out[2] == 0.0f,
        "found_flag_phased_ok left %g, %g", out[0], out[1]);
  cubert_status_free(s);
  check_unwritten(client);
  check_after_wild(client);
  check_cubes(client);
  check_many_same_private(client);
  cubert_client_release(client);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}

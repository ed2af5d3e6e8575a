/* bench_util.h — small helpers shared by the benchmark programs in bench/.

   Header-only (every function is static inline, so a program that uses only some of them gets
   no unused-function warnings). What it gives:
   - timing: bench_now_ns() on CLOCK_MONOTONIC;
   - statistics: bench_stats_of() -> median, min, max of a sample array (report medians and
     min–max, never a single time: docs/architecture.md#benchmarks);
   - number formatting with a fixed number of significant digits, so tables stay readable
     whatever the magnitude;
   - markdown tables: bench_table_header() / bench_table_row();
   - memory: bench_huge_alloc() for big arrays on transparent huge pages, as the library's
     own big pages are, so a physical-limit peer is not handicapped by TLB misses;
   - environment: bench_print_env() (CPU model, CPUs online, load average, compiler, date);
   - interleaved measurements: bench_interleave() alternates blocks of several variants;
     bench_calibrate_ops() sizes a block to a target duration;
   - setup errors: BENCH_CHECK() prints a failed cubert call with its place and exits;
   - the noop launch + sync block bench_block_noop() (a bench_block_fn);
   - result cells: bench_verdict() ("**pass**" / "**miss**"); comparison tables with a peer
     column (bench_compare_header() / bench_compare_row()) and notes under them
     (bench_note() / bench_notes_print());
   - temporary folders: bench_temp_dir() and bench_remove_tree() (fresh caches for child
     processes);
   - child processes: bench_run_self() re-executes the running binary with extra arguments
     and environment variables and collects the numbers it prints, for peers that must run in
     a process of their own (libgomp reads OMP_WAIT_POLICY once at load time; PoCL spawns its
     own worker threads that would compete with the parent's); bench_reexec_with_env() makes
     the current process restart itself once with some environment variables set.

   Benchmarks are plain programs: on a setup error they print it and exit(1); the helpers here
   report errors through their return values so the program decides. */
#ifndef CUBERT_BENCH_UTIL_H
#define CUBERT_BENCH_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cubert/cubert.h"

extern char **environ;

/* A failed cubert call during setup: print where and why, then end the program. */
#define BENCH_CHECK(expr)                                                  \
  do {                                                                     \
    cubert_status check_status_ = (expr);                                  \
    if (check_status_) {                                                   \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
              cubert_status_message(check_status_));                       \
      cubert_status_free(check_status_);                                   \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* ---- timing ---------------------------------------------------------------------------- */

/* Nanoseconds on CLOCK_MONOTONIC (arbitrary origin). */
static inline uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seconds elapsed since `start_ns` (a bench_now_ns() value). */
static inline double bench_seconds_since(uint64_t start_ns) {
  return (double)(bench_now_ns() - start_ns) * 1e-9;
}

/* ---- statistics ------------------------------------------------------------------------ */

typedef struct bench_stats {
  double median, min, max;
  size_t count; /* samples; 0 means "not measured" (then the other fields are 0) */
} bench_stats;

static inline int bench_compare_double_(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median (mean of the two middle samples for an even count), min and max of `count`
   samples. The array is not modified. */
static inline bench_stats bench_stats_of(const double *samples, size_t count) {
  bench_stats s = {0, 0, 0, 0};
  if (count == 0 || !samples) return s;
  double *sorted = malloc(count * sizeof(*sorted));
  if (!sorted) return s;
  memcpy(sorted, samples, count * sizeof(*sorted));
  qsort(sorted, count, sizeof(*sorted), bench_compare_double_);
  s.count = count;
  s.min = sorted[0];
  s.max = sorted[count - 1];
  s.median = count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
  free(sorted);
  return s;
}

/* The same statistics with every value multiplied by `factor` (unit conversion). */
static inline bench_stats bench_stats_scale(bench_stats s, double factor) {
  s.median *= factor;
  s.min *= factor;
  s.max *= factor;
  return s;
}

/* Statistics of samples[i] * scale (unit conversion of a sample array). */
static inline bench_stats bench_stats_scaled(const double *samples, size_t count, double scale) {
  return bench_stats_scale(bench_stats_of(samples, count), scale);
}

/* Statistics of a rate (work / time): `work` divided by each sample. The min of a rate comes
   from the max of the times, so the ordering is swapped. */
static inline bench_stats bench_stats_rate(bench_stats time_s, double work) {
  bench_stats r = time_s;
  if (time_s.count == 0) return r;
  r.median = work / time_s.median;
  r.min = work / time_s.max;
  r.max = work / time_s.min;
  return r;
}

/* ---- formatting ------------------------------------------------------------------------ */

/* A fixed-size text buffer for one formatted cell (tables print a handful of numbers each). */
typedef struct bench_text {
  char s[96];
} bench_text;

/* `value` with 3 significant digits (at least: 1234 -> "1234", 0.01234 -> "0.0123"), in
   plain notation from 1e-5 to 1e6 and exponent notation outside; "n/a" for NaN. */
static inline bench_text bench_fmt(double value) {
  bench_text t;
  if (value != value) {
    snprintf(t.s, sizeof(t.s), "n/a");
    return t;
  }
  double mag = value < 0 ? -value : value;
  if (mag >= 1e6 || (mag > 0 && mag < 1e-5)) {
    snprintf(t.s, sizeof(t.s), "%.3g", value);
    return t;
  }
  int decimals = mag >= 100    ? 0
                 : mag >= 10   ? 1
                 : mag >= 1    ? 2
                 : mag >= 0.1  ? 3
                 : mag >= 0.01 ? 4
                               : 5;
  snprintf(t.s, sizeof(t.s), "%.*f", decimals, value);
  return t;
}

/* "min–max" of the stats (UTF-8 en dash), or "n/a" when not measured. */
static inline bench_text bench_fmt_range(bench_stats s) {
  bench_text t;
  if (s.count == 0) {
    snprintf(t.s, sizeof(t.s), "n/a");
    return t;
  }
  bench_text lo = bench_fmt(s.min), hi = bench_fmt(s.max);
  snprintf(t.s, sizeof(t.s), "%.40s\u2013%.40s", lo.s, hi.s);
  return t;
}

/* The median, or "n/a" when not measured. */
static inline bench_text bench_fmt_median(bench_stats s) {
  if (s.count == 0) {
    bench_text t;
    snprintf(t.s, sizeof(t.s), "n/a");
    return t;
  }
  return bench_fmt(s.median);
}

/* printf into a cell. */
static inline bench_text bench_textf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline bench_text bench_textf(const char *fmt, ...) {
  bench_text t;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t.s, sizeof(t.s), fmt, ap);
  va_end(ap);
  return t;
}

/* ---- markdown tables ------------------------------------------------------------------- */

/* Prints "| a | b | ... |" and the separator line for `count` column titles. */
static inline void bench_table_header(FILE *out, const char *const *titles, size_t count) {
  fputc('|', out);
  for (size_t i = 0; i < count; ++i) fprintf(out, " %s |", titles[i]);
  fputs("\n|", out);
  for (size_t i = 0; i < count; ++i) fputs(" --- |", out);
  fputc('\n', out);
}

/* Prints one row of `count` cells ("" for an empty cell, NULL prints "n/a"). */
static inline void bench_table_row(FILE *out, const char *const *cells, size_t count) {
  fputc('|', out);
  for (size_t i = 0; i < count; ++i) fprintf(out, " %s |", cells[i] ? cells[i] : "n/a");
  fputc('\n', out);
  fflush(out);
}

/* ---- memory ------------------------------------------------------------------------------ */

#define BENCH_HUGE_PAGE ((size_t)2 << 20)

static inline size_t bench_huge_round_(size_t bytes) {
  return (bytes + BENCH_HUGE_PAGE - 1) & ~(BENCH_HUGE_PAGE - 1);
}

/* `bytes` of zeroed memory aligned to 2 MiB and advised for transparent huge pages
   (MADV_HUGEPAGE: the kernel's default THP mode is often "madvise", where only advised
   ranges get them). NULL on failure. Free with bench_huge_free(p, bytes). */
static inline void *bench_huge_alloc(size_t bytes) {
  size_t size = bench_huge_round_(bytes ? bytes : 1);
  size_t over = size + BENCH_HUGE_PAGE;
  char *raw = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *p = (char *)(((uintptr_t)raw + BENCH_HUGE_PAGE - 1) & ~(uintptr_t)(BENCH_HUGE_PAGE - 1));
  /* Trim the unaligned head and the tail so the kept range is a mapping of its own. */
  if (p > raw) munmap(raw, (size_t)(p - raw));
  size_t tail = (size_t)(raw + over - (p + size));
  if (tail) munmap(p + size, tail);
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

/* Frees memory from bench_huge_alloc() (same `bytes`). Accepts NULL. */
static inline void bench_huge_free(void *p, size_t bytes) {
  if (p) munmap(p, bench_huge_round_(bytes ? bytes : 1));
}

/* ---- environment ----------------------------------------------------------------------- */

/* The "model name" line of /proc/cpuinfo, or "unknown CPU". */
static inline bench_text bench_cpu_model(void) {
  bench_text t;
  snprintf(t.s, sizeof(t.s), "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return t;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    colon += 1 + (colon[1] == ' ');
    snprintf(t.s, sizeof(t.s), "%.*s", (int)strcspn(colon, "\n"), colon);
    break;
  }
  fclose(f);
  return t;
}

/* The 1-minute load average ("n/a" when unavailable): the machine is shared, so every run
   records how busy it was. */
static inline bench_text bench_load_avg(void) {
  double load[3];
  if (getloadavg(load, 3) != 3) return bench_textf("n/a");
  return bench_textf("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

/* Prints a markdown bullet list describing the machine and build: date (UTC), host kernel,
   CPU model and CPUs online, load average, compiler. */
static inline void bench_print_env(FILE *out) {
  char date[64] = "unknown";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
  struct utsname u;
  int have_uname = uname(&u) == 0;
  fprintf(out, "- date: %s\n", date);
  fprintf(out, "- system: %s %s %s\n", have_uname ? u.sysname : "?", have_uname ? u.release : "?",
          have_uname ? u.machine : "?");
  fprintf(out, "- CPU: %s, %ld CPUs online\n", bench_cpu_model().s, sysconf(_SC_NPROCESSORS_ONLN));
  fprintf(out, "- load average (1/5/15 min) at start: %s\n", bench_load_avg().s);
#ifdef __VERSION__
  fprintf(out, "- compiler: %s\n", __VERSION__);
#endif
}

/* ---- child processes ------------------------------------------------------------------- */

/* Restarts the current program once (execv of /proc/self/exe with the same arguments) with
   the environment variables `names[i]=values[i]` set where they are not set already, when
   at least one of them is missing. Needed for settings a runtime reads before main()
   (libgomp's OMP_WAIT_POLICY). `guard` names a variable set in the restarted process so it
   never loops. Returns only when no restart was needed or the exec failed (-1, errno set). */
static inline int bench_reexec_with_env(char **argv, const char *guard, const char *const *names,
                                        const char *const *values, size_t count) {
  if (getenv(guard)) return 0;
  int missing = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!getenv(names[i])) {
      setenv(names[i], values[i], 0);
      missing = 1;
    }
  }
  if (!missing) return 0;
  setenv(guard, "1", 1);
  fflush(NULL);
  execv("/proc/self/exe", argv);
  return -1;
}

/* Runs this same binary (/proc/self/exe) with `args` (NULL-terminated; args[0] is argv[0]
   for the child) and the environment of this process plus `env_set` (NULL-terminated
   "NAME=value" strings that replace same-named variables). Collects every number the child
   prints on standard output into samples[0..*out_count) (at most `capacity`); on each line,
   numbers are read until the first text that is not one. Lines starting with '#' are
   comments: the first one (without "# " and the newline) goes to `comment` when it is not
   NULL. The child's standard error passes through.
   Returns the child's exit status (0 on success), or -1 when it could not be started. */
static inline int bench_run_self(const char *const *args, const char *const *env_set,
                                 double *samples, size_t capacity, size_t *out_count, char *comment,
                                 size_t comment_size) {
  *out_count = 0;
  int have_comment = 0;
  if (comment && comment_size) comment[0] = '\0';
  size_t env_count = 0, set_count = 0;
  while (environ[env_count]) ++env_count;
  while (env_set && env_set[set_count]) ++set_count;
  char **envp = calloc(env_count + set_count + 1, sizeof(*envp));
  if (!envp) return -1;
  size_t n = 0;
  for (size_t i = 0; i < env_count; ++i) {
    int replaced = 0;
    for (size_t j = 0; j < set_count && !replaced; ++j) {
      size_t name_len = strcspn(env_set[j], "=");
      replaced = strncmp(environ[i], env_set[j], name_len) == 0 && environ[i][name_len] == '=';
    }
    if (!replaced) envp[n++] = environ[i];
  }
  for (size_t j = 0; j < set_count; ++j) envp[n++] = (char *)env_set[j];
  envp[n] = NULL;

  int fds[2];
  if (pipe(fds) != 0) {
    free(envp);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid;
  fflush(NULL);
  int rc = posix_spawn(&pid, "/proc/self/exe", &actions, NULL, (char *const *)args, envp);
  posix_spawn_file_actions_destroy(&actions);
  free(envp);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    errno = rc;
    return -1;
  }
  FILE *in = fdopen(fds[0], "r");
  if (in) {
    char line[4096];
    while (fgets(line, sizeof(line), in)) {
      char *p = line;
      if (*p == '#') {
        if (comment && comment_size && !have_comment) {
          p += 1 + (p[1] == ' ');
          snprintf(comment, comment_size, "%.*s", (int)strcspn(p, "\n"), p);
          have_comment = 1;
        }
        continue;
      }
      for (;;) {
        while (*p == ' ' || *p == '\t') ++p;
        if (*p == '\0' || *p == '\n') break;
        char *end;
        double v = strtod(p, &end);
        if (end == p) break;
        if (*out_count < capacity) samples[(*out_count)++] = v;
        p = end;
      }
    }
    fclose(in);
  } else {
    close(fds[0]);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Prints samples for a parent's bench_run_self(), one per line, full precision. */
static inline void bench_emit_samples(FILE *out, const double *samples, size_t count) {
  for (size_t i = 0; i < count; ++i) fprintf(out, "%.9g\n", samples[i]);
  fflush(out);
}

/* ---- interleaved measurements ---------------------------------------------------------- */

/* One variant of an interleaved measurement: fn(user, ops) runs `ops` operations and returns
   the seconds they took (or a negative value on failure, which ends the program's measurement
   with an error message from fn). */
typedef double (*bench_block_fn)(void *user, int ops);

/* Runs `blocks` rounds; in each round every variant runs one block of `ops` operations, the
   order reversed in odd rounds (A B C, C B A, ...) so that a slow drift of the machine weighs
   on every variant alike. samples[v][b] receives variant v's time per operation in block b,
   in seconds. `warmup_blocks` untimed rounds run first. Returns 0, or -1 when a block failed. */
static inline int bench_interleave(const bench_block_fn *fns, void *const *users, size_t count,
                                   int warmup_blocks, int blocks, int ops, double **samples) {
  for (int b = -warmup_blocks; b < blocks; ++b) {
    for (size_t k = 0; k < count; ++k) {
      size_t v = ((b < 0 ? -b : b) % 2) ? count - 1 - k : k;
      double t = fns[v](users[v], ops);
      if (t < 0) return -1;
      if (b >= 0) samples[v][b] = t / ops;
    }
  }
  return 0;
}

/* Operations per block so that one block of fn takes about `target_s` seconds: times a few
   calibration blocks (the first one also warms up) and clamps the result to [min_ops,
   max_ops]. Returns min_ops when fn fails. Keeps blocks long enough for the clock and short
   enough to interleave often, whatever the device's per-op cost (0.3 us on the CPU server,
   tens of us through a driver). */
static inline int bench_calibrate_ops(bench_block_fn fn, void *user, double target_s, int min_ops,
                                      int max_ops) {
  int ops = min_ops;
  double per_op = 0;
  for (int i = 0; i < 3; ++i) {
    double t = fn(user, ops);
    if (t < 0) return min_ops;
    per_op = t / ops;
  }
  if (per_op <= 0) return max_ops;
  double want = target_s / per_op;
  if (want < min_ops) return min_ops;
  if (want > max_ops) return max_ops;
  return (int)want;
}

/* A bench_block_fn: `ops` launches of cubert_kernel_noop (1 cube of 1 unit, no arguments),
   each followed by a sync, on the client `user`. The launch + sync latency block of
   bench_opencl_server and bench_streams. */
static inline double bench_block_noop(void *user, int ops) {
  cubert_client *client = user;
  const cubert_cube_count one = cubert_cube_count_new_3d(1, 1, 1);
  const cubert_cube_dim unit = cubert_cube_dim_new_3d(1, 1, 1);
  const cubert_kernel_args none = {NULL, 0, NULL, 0};
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_noop, one, unit, &none));
    BENCH_CHECK(cubert_client_sync(client));
  }
  return bench_seconds_since(t0);
}

/* ---- result cells -------------------------------------------------------------------------- */

/* "**pass**" or "**miss**" (bold, so a table scans quickly). */
static inline const char *bench_verdict(int pass) {
  return pass ? "**pass**" : "**miss**";
}

/* A comparison table, one row per measurement: what, unit, the measured median and
   min–max, the peer's name, median and min–max (measured in the same run), the ratio, the
   target and pass/miss. bench_compare_header() prints the title and separator lines. */
#define BENCH_COMPARE_COLUMNS 10

static inline void bench_compare_header(FILE *out) {
  const char *const titles[BENCH_COMPARE_COLUMNS] = {
      "Measurement", "Unit",        "cubert median",     "cubert min\u2013max",
      "Peer",        "Peer median", "Peer min\u2013max", "Ratio",
      "Target",      "Result"};
  bench_table_header(out, titles, BENCH_COMPARE_COLUMNS);
}

/* One row; a peer with count 0 leaves its two number cells empty. */
static inline void bench_compare_row(FILE *out, const char *what, const char *unit,
                                     bench_stats mine, const char *peer, bench_stats peer_stats,
                                     const char *ratio, const char *target, const char *result) {
  bench_text m = bench_fmt_median(mine), r = bench_fmt_range(mine);
  bench_text pm = bench_fmt_median(peer_stats), pr = bench_fmt_range(peer_stats);
  const char *cells[BENCH_COMPARE_COLUMNS] = {what, unit, m.s,   r.s,    peer,
                                              pm.s, pr.s, ratio, target, result};
  if (peer_stats.count == 0) cells[5] = cells[6] = "";
  bench_table_row(out, cells, BENCH_COMPARE_COLUMNS);
}

/* bench_compare_row() on stdout (where every comparison report goes). */
static inline void bench_row(const char *what, const char *unit, bench_stats mine, const char *peer,
                             bench_stats peer_stats, const char *ratio, const char *target,
                             const char *result) {
  bench_compare_row(stdout, what, unit, mine, peer, peer_stats, ratio, target, result);
}

/* Notes printed under the table (method details collected while measuring). */
#define BENCH_NOTES_MAX 32
typedef struct bench_notes {
  char text[BENCH_NOTES_MAX][640];
  int count;
} bench_notes;

static inline void bench_note(bench_notes *notes, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void bench_note(bench_notes *notes, const char *fmt, ...) {
  if (notes->count >= BENCH_NOTES_MAX) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes->text[notes->count++], sizeof(notes->text[0]), fmt, ap);
  va_end(ap);
}

/* "Notes:" and one bullet per note, then the load average at the end of the run. */
static inline void bench_notes_print(FILE *out, const bench_notes *notes) {
  fprintf(out, "\nNotes:\n");
  for (int i = 0; i < notes->count; ++i) fprintf(out, "- %s\n", notes->text[i]);
  fprintf(out, "- load average (1/5/15 min) at the end: %s\n", bench_load_avg().s);
}

/* ---- temporary folders --------------------------------------------------------------------- */

/* Makes a new empty folder "$TMPDIR/<prefix>XXXXXX" (/tmp when TMPDIR is unset) and writes its
   path into out[0..size). Returns 0, or -1 (errno set). */
static inline int bench_temp_dir(const char *prefix, char *out, size_t size) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  int n = snprintf(out, size, "%s/%sXXXXXX", base, prefix);
  if (n < 0 || (size_t)n >= size) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return mkdtemp(out) ? 0 : -1;
}

/* Removes `path` and everything below it (files, links, folders; links are not followed).
   Returns 0, or -1 when something could not be removed. Meant for the folders of
   bench_temp_dir(). */
static inline int bench_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  DIR *dir = opendir(path);
  if (!dir) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    size_t len = strlen(path) + 1 + strlen(e->d_name) + 1;
    char *child = malloc(len);
    if (!child) {
      rc = -1;
      break;
    }
    snprintf(child, len, "%s/%s", path, e->d_name);
    if (bench_remove_tree(child) != 0) rc = -1;
    free(child);
  }
  closedir(dir);
  if (rmdir(path) != 0) rc = -1;
  return rc;
}

#endif /* CUBERT_BENCH_UTIL_H */

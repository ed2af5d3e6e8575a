/* cubert — configuration from the environment (docs/environment.md lists every variable).

   Every CUBERT_* variable is read here and nowhere else, once per process (pthread_once), so
   the library behaves the same for its whole lifetime even if the program changes its
   environment later. A bad value never fails anything: it is replaced by the default and a
   warning naming the variable, the value and the valid range is logged once.

   Why warnings are queued instead of logged while parsing: cubert_log() asks this file for the
   log level, which would re-enter pthread_once from inside its own init routine and deadlock.
   The parser records warnings; the first cubert_config_get() after parsing emits them. */
#include "cubert/config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/log.h"

enum {
  DEFAULT_LOG_LEVEL = CUBERT_LOG_WARN,
  DEFAULT_MAX_STREAMS = 128, /* the reference's; slots are made at first use */
  MAX_STREAMS_LIMIT = CUBERT_MAX_STREAMS_LIMIT,
  CPU_THREADS_LIMIT = 4096,
  /* Cache files are <dir>/<kind>/<name> and paths are limited to PATH_MAX (4096) bytes. */
  CACHE_DIR_MAX_BYTES = 4000,
  /* The most bytes of a bad value a warning echoes (then "..."): a log line holds 1,024 bytes,
     and what is wrong and what is valid come after the value, so they must always fit. */
  SHOWN_VALUE_BYTES = 64,
};

/* The categories of CUBERT_LOG: every category the library logs under (docs/environment.md,
   "What CUBERT_LOG reports"). Bit i of log_categories stands for log_category_names[i]. */
static const char *const log_category_names[] = {"comm",   "compile", "config", "memory",
                                                 "opencl", "stream",  "trace",  "tune"};
#define LOG_CATEGORY_COUNT (sizeof(log_category_names) / sizeof(log_category_names[0]))
/* Set in log_categories when CUBERT_LOG names any category, known or not: naming only unknown
   ones still restricts info and debug lines (to none), as the user asked for a restriction. */
#define CATEGORIES_NAMED (1u << LOG_CATEGORY_COUNT)

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static cubert_config config;
/* Owned copies of the string values (getenv's storage may change under setenv). */
static char *owned_device, *owned_cache_dir, *owned_trace_path, *owned_log_path,
    *owned_opencl_options;
static unsigned log_categories; /* 0: every category passes */
/* Every warning of the last reading, each its own allocation: none is dropped, however many
   values are bad. Only a failed allocation loses one; warnings_lost counts those, and the
   emitted warnings then end with a line saying how many were lost. */
static char **warnings;
static size_t warning_count, warning_capacity, warnings_lost;
static atomic_int warnings_emitted;

static void add_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_warning(const char *fmt, ...) {
  if (warning_count == warning_capacity) {
    size_t capacity = warning_capacity ? 2 * warning_capacity : 16;
    char **grown = realloc(warnings, capacity * sizeof(*grown));
    if (!grown) {
      ++warnings_lost;
      return;
    }
    warnings = grown;
    warning_capacity = capacity;
  }
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int len = vsnprintf(NULL, 0, fmt, ap);
  char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (text) {
    vsnprintf(text, (size_t)len + 1, fmt, again);
    warnings[warning_count++] = text;
  } else {
    ++warnings_lost;
  }
  va_end(again);
  va_end(ap);
}

static void clear_warnings(void) {
  for (size_t i = 0; i < warning_count; ++i) free(warnings[i]);
  warning_count = 0;
  warnings_lost = 0;
}

/* How a warning echoes a bad value: its first SHOWN_VALUE_BYTES bytes (cut at a UTF-8
   character boundary) and "..." when it is longer, so the explanation after it is never cut. */
typedef struct shown_value {
  char text[SHOWN_VALUE_BYTES + sizeof("...")];
} shown_value;

static const char *shown(const char *value, size_t len, shown_value *out) {
  size_t keep = len;
  if (len > SHOWN_VALUE_BYTES) {
    keep = SHOWN_VALUE_BYTES;
    while (keep > 0 && ((unsigned char)value[keep] & 0xC0) == 0x80) --keep;
  }
  snprintf(out->text, sizeof(out->text), "%.*s%s", (int)keep, value, keep < len ? "..." : "");
  return out->text;
}

/* NULL for unset or empty variables: an empty value means "use the default" everywhere. */
static const char *env(const char *name) {
  const char *value = getenv(name);
  return value && value[0] ? value : NULL;
}

static char *env_copy(const char *name) {
  const char *value = env(name);
  return value ? strdup(value) : NULL;
}

/* Parses a decimal integer in [min, max]; anything else (sign, junk, overflow) is bad. */
static uint32_t env_uint(const char *name, uint32_t min, uint32_t max, uint32_t fallback,
                         const char *meaning) {
  const char *value = env(name);
  if (!value) return fallback;
  char *end = NULL;
  errno = 0;
  unsigned long long parsed = isdigit((unsigned char)value[0]) ? strtoull(value, &end, 10) : 0;
  if (!isdigit((unsigned char)value[0]) || errno || *end || parsed < min || parsed > max) {
    shown_value v;
    add_warning("%s=\"%s\" is not valid: expected an integer in %u..%u%s; using %u", name,
                shown(value, strlen(value), &v), min, max, meaning, fallback);
    return fallback;
  }
  return (uint32_t)parsed;
}

/* Index of `value` in `names` (case-insensitive), or -1. */
static int name_index(const char *value, size_t value_len, const char *const *names, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (strlen(names[i]) == value_len && strncasecmp(value, names[i], value_len) == 0) {
      return (int)i;
    }
  }
  return -1;
}

/* names[0]|names[1]|... in `out` (cut at `size` bytes; the lists here are short). */
static const char *joined(const char *const *names, size_t count, char *out, size_t size) {
  out[0] = '\0';
  for (size_t i = 0; i < count; ++i) {
    strncat(out, names[i], size - strlen(out) - 1);
    if (i + 1 < count) strncat(out, "|", size - strlen(out) - 1);
  }
  return out;
}

static int env_choice(const char *name, const char *const *names, size_t count, int fallback) {
  const char *value = env(name);
  if (!value) return fallback;
  int index = name_index(value, strlen(value), names, count);
  if (index >= 0) return index;
  char valid[128];
  shown_value v;
  add_warning("%s=\"%s\" is not valid: expected one of %s; using %s", name,
              shown(value, strlen(value), &v), joined(names, count, valid, sizeof(valid)),
              names[fallback]);
  return fallback;
}

static const char *const log_level_names[] = {"error", "warn", "info", "debug"};

/* One category of CUBERT_LOG (`len` bytes at `name`): its bit, or a warning naming it and the
   valid ones. An unknown name still restricts the lines (CATEGORIES_NAMED): a misspelt
   category shows nothing of its lines, and the warning says why. */
static void parse_log_category(const char *name, size_t len) {
  log_categories |= CATEGORIES_NAMED;
  int index = name_index(name, len, log_category_names, LOG_CATEGORY_COUNT);
  if (index >= 0) {
    log_categories |= 1u << index;
    return;
  }
  char valid[128];
  shown_value v;
  add_warning(
      "CUBERT_LOG names an unknown category \"%s\": valid categories are %s; its lines are "
      "not shown",
      shown(name, len, &v), joined(log_category_names, LOG_CATEGORY_COUNT, valid, sizeof(valid)));
}

/* CUBERT_LOG = level[,category...]. A bad level falls back to warn but keeps the categories,
   since they are independent of the typo in the level. */
static void parse_log(void) {
  config.log_level = DEFAULT_LOG_LEVEL;
  log_categories = 0;
  const char *value = env("CUBERT_LOG");
  if (!value) return;
  const char *comma = strchr(value, ',');
  size_t level_len = comma ? (size_t)(comma - value) : strlen(value);
  int level = name_index(value, level_len, log_level_names, 4);
  if (level >= 0) {
    config.log_level = level;
  } else {
    shown_value v;
    add_warning(
        "CUBERT_LOG=\"%s\" is not valid: expected error|warn|info|debug, optionally "
        "followed by ,category names; using warn",
        shown(value, strlen(value), &v));
  }
  while (comma) {
    const char *start = comma + 1;
    comma = strchr(start, ',');
    size_t len = comma ? (size_t)(comma - start) : strlen(start);
    if (len > 0) parse_log_category(start, len);
  }
}

static int parse_flag(const char *name, int fallback) {
  static const char *const names[] = {"0", "1", "false", "true", "off", "on", "no", "yes"};
  const char *value = env(name);
  if (!value) return fallback;
  int index = name_index(value, strlen(value), names, sizeof(names) / sizeof(names[0]));
  if (index >= 0) return index % 2;
  shown_value v;
  add_warning("%s=\"%s\" is not valid: expected 0|1 (or true|false, on|off, yes|no); using %d",
              name, shown(value, strlen(value), &v), fallback);
  return fallback;
}

/* CUBERT_AUTOTUNE_LEVEL by name or by the reference's number (CUBECL_AUTOTUNE_LEVEL 0..3). */
static int parse_tune_level(void) {
  static const char *const names[] = {"minimal", "balanced", "extensive", "full",
                                      "0",       "1",        "2",         "3"};
  return env_choice("CUBERT_AUTOTUNE_LEVEL", names, 8, 1) % 4;
}

/* Any 32-bit number is a seed, so "unset" is a flag of its own; a bad value leaves the order
   plain rather than shuffling with a seed the user did not ask for. */
static void parse_validate_seed(void) {
  const char *value = env("CUBERT_VALIDATE_SEED");
  config.validate_shuffle = 0;
  config.validate_seed = 0;
  if (!value) return;
  char *end = NULL;
  errno = 0;
  unsigned long long parsed = isdigit((unsigned char)value[0]) ? strtoull(value, &end, 10) : 0;
  if (!isdigit((unsigned char)value[0]) || errno || *end || parsed > UINT32_MAX) {
    shown_value v;
    add_warning(
        "CUBERT_VALIDATE_SEED=\"%s\" is not valid: expected an integer in 0..%u; "
        "validate-mode launches run in the plain order",
        shown(value, strlen(value), &v), (unsigned)UINT32_MAX);
    return;
  }
  config.validate_shuffle = 1;
  config.validate_seed = (uint32_t)parsed;
}

static void config_load(void) {
  free(owned_device);
  free(owned_cache_dir);
  free(owned_trace_path);
  free(owned_log_path);
  free(owned_opencl_options);
  memset(&config, 0, sizeof(config));
  clear_warnings();

  owned_device = env_copy("CUBERT_DEVICE");
  owned_cache_dir = env_copy("CUBERT_CACHE_DIR");
  owned_trace_path = env_copy("CUBERT_TRACE");
  owned_log_path = env_copy("CUBERT_LOG_FILE");
  config.log_path = owned_log_path;
  config.device = owned_device;
  config.cache_dir = owned_cache_dir;
  /* cubert_cache_dir() gives up on a folder whose files' paths would be too long, which turned
     the disk caches off without a word; say so once, like any other unusable value. */
  if (owned_cache_dir && strlen(owned_cache_dir) > CACHE_DIR_MAX_BYTES)
    add_warning("CUBERT_CACHE_DIR is %zu bytes long (at most %d usable): disk caches are off",
                strlen(owned_cache_dir), CACHE_DIR_MAX_BYTES);
  config.trace_path = owned_trace_path;
  owned_opencl_options = env_copy("CUBERT_OPENCL_OPTIONS");
  config.opencl_options = owned_opencl_options;

  config.cpu_threads =
      env_uint("CUBERT_CPU_THREADS", 0, CPU_THREADS_LIMIT, 0, " (0 = one per core)");
  parse_log();
  static const char *const profile_names[] = {"off", "minimal", "basic", "medium", "full"};
  config.profile_level = env_choice("CUBERT_PROFILE", profile_names, 5, 0);
  static const char *const check_names[] = {"auto", "enforce", "validate"};
  config.check_mode = env_choice("CUBERT_CHECK_MODE", check_names, 3, 0);
  config.max_streams =
      env_uint("CUBERT_MAX_STREAMS", 1, MAX_STREAMS_LIMIT, DEFAULT_MAX_STREAMS, "");
  config.backtrace = parse_flag("CUBERT_BACKTRACE", 0);
  static const char *const autotune_names[] = {"off", "minimal", "full"};
  config.autotune = env_choice("CUBERT_AUTOTUNE", autotune_names, 3, CUBERT_AUTOTUNE_FULL);
  config.autotune_cache = parse_flag("CUBERT_AUTOTUNE_CACHE", 1);
  config.autotune_checks = parse_flag("CUBERT_AUTOTUNE_CHECKS", 0);
  config.autotune_level = parse_tune_level();
  static const char *const background_names[] = {"auto", "off", "on"};
  config.autotune_background = env_choice("CUBERT_AUTOTUNE_BACKGROUND", background_names, 3, 0);
  config.sanitizer = parse_flag("CUBERT_SANITIZER", 1);
  static const char *const binary_cache_names[] = {"auto", "off", "on"};
  config.opencl_binary_cache =
      env_choice("CUBERT_OPENCL_BINARY_CACHE", binary_cache_names, 3, CUBERT_BINARY_CACHE_AUTO);
  config.pools_exclusive = parse_flag("CUBERT_POOLS_EXCLUSIVE", 0);
  config.dry_run = parse_flag("CUBERT_DRY_RUN", 0);
  parse_validate_seed();
}

const cubert_config *cubert_config_get(void) {
  pthread_once(&config_once, config_load);
  /* Load before exchange: after the first call this stays a read, so hot paths that consult the
     configuration do not contend on one cache line. */
  if ((warning_count > 0 || warnings_lost > 0) && !atomic_load(&warnings_emitted) &&
      atomic_exchange(&warnings_emitted, 1) == 0) {
    for (size_t i = 0; i < warning_count; ++i) {
      cubert_log(CUBERT_LOG_WARN, "config", "%s", warnings[i]);
    }
    if (warnings_lost > 0)
      cubert_log(CUBERT_LOG_WARN, "config",
                 "%zu more configuration warnings were lost (out of memory while recording "
                 "them)",
                 warnings_lost);
  }
  return &config;
}

void cubert_config_reload_for_tests(void) {
  pthread_once(&config_once, config_load);
  config_load();
  atomic_store(&warnings_emitted, 0);
}

int cubert_config_log_wants(int level, const char *category) {
  const cubert_config *c = cubert_config_get();
  if (level > c->log_level) return 0;
  if (level <= CUBERT_LOG_WARN || log_categories == 0) return 1;
  if (!category) return 0;
  int index = name_index(category, strlen(category), log_category_names, LOG_CATEGORY_COUNT);
  return index >= 0 && (log_categories & (1u << index));
}

size_t cubert_config_warning_count(void) {
  pthread_once(&config_once, config_load);
  return warning_count;
}

const char *cubert_config_warning_at(size_t index) {
  pthread_once(&config_once, config_load);
  return index < warning_count ? warnings[index] : NULL;
}

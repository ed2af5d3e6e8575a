/* cubert — status objects (docs/architecture.md#errors).

   A status is immutable from the reader's point of view: every constructor and setter rebuilds
   the full message text eagerly, so cubert_status_message() only reads and a status may be
   read from several threads at once. The text is assembled from parts:

     <headline>[: <reason>][. <numbers sentence>]
     [Caused by N errors:\n  1. ...]      (SERVER_UNHEALTHY)
     [Build log:\n  ...]                 (COMPILATION)
     [Caused by:\n  <cause text>]        (wrapped errors, indented one level per depth)
     [Backtrace:\n...]                   (CUBERT_BACKTRACE=1)

   Why a static fallback: an error path must never fail to report an error. When an allocation
   fails inside a constructor we hand out one static OUT_OF_MEMORY status that free() ignores,
   so callers never see NULL (which would read as success). */
#include "cubert/status.h"

#include <execinfo.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/config.h"

struct cubert_status_s {
  cubert_code code;
  cubert_kind kind;     /* CUBERT_KIND_OK: the code's own kind (cubert_status_set_kind) */
  const char *headline; /* static text replacing the code's description, or NULL */
  bool is_static;       /* the out-of-memory fallback: never mutated or freed */
  char *reason;         /* caller's formatted text, may be NULL */
  char *text;           /* full message, rebuilt by status_rebuild() */
  bool has_limits, has_size, has_dims;
  uint64_t requested, max, size;
  uint32_t dims_requested[3], dims_max[3];
  char *build_log;
  cubert_status cause;
  cubert_status *errors; /* SERVER_UNHEALTHY */
  size_t error_count;
  char *backtrace;
};

static struct cubert_status_s status_oom = {
    .code = CUBERT_CODE_OUT_OF_MEMORY,
    .is_static = true,
    .text = "out of memory while reporting an error",
};

/* ---- code table ------------------------------------------------------------------------- */

const char *cubert_code_name(cubert_code code) {
  switch (code) {
#define CUBERT_X_CODE(name, kind, text) \
  case CUBERT_CODE_##name:              \
    return #name;
    CUBERT_CODE_TABLE(CUBERT_X_CODE)
#undef CUBERT_X_CODE
    default:
      return "INVALID_CODE";
  }
}

const char *cubert_kind_name(cubert_kind kind) {
  switch (kind) {
#define CUBERT_X_KIND(name, text) \
  case CUBERT_KIND_##name:        \
    return #name;
    CUBERT_KIND_TABLE(CUBERT_X_KIND)
#undef CUBERT_X_KIND
    default:
      return "INVALID_KIND";
  }
}

cubert_kind cubert_code_kind(cubert_code code) {
  switch (code) {
#define CUBERT_X_CODE(name, kind, text) \
  case CUBERT_CODE_##name:              \
    return CUBERT_KIND_##kind;
    CUBERT_CODE_TABLE(CUBERT_X_CODE)
#undef CUBERT_X_CODE
    default:
      return CUBERT_KIND_API;
  }
}

static const char *code_description(cubert_code code) {
  switch (code) {
#define CUBERT_X_CODE(name, kind, text) \
  case CUBERT_CODE_##name:              \
    return text;
    CUBERT_CODE_TABLE(CUBERT_X_CODE)
#undef CUBERT_X_CODE
    default:
      return "invalid error code";
  }
}

/* ---- a growable string (local to message building) -------------------------------------- */

typedef struct strbuf {
  char *data;
  size_t len, cap;
  bool failed; /* an allocation failed: the text is abandoned */
} strbuf;

static void sb_reserve(strbuf *sb, size_t extra) {
  if (sb->failed) return;
  if (sb->len + extra + 1 <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap : 128;
  while (cap < sb->len + extra + 1) cap *= 2;
  char *data = realloc(sb->data, cap);
  if (!data) {
    sb->failed = true;
    return;
  }
  sb->data = data;
  sb->cap = cap;
}

static void sb_append_n(strbuf *sb, const char *s, size_t n) {
  sb_reserve(sb, n);
  if (sb->failed) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

static void sb_append(strbuf *sb, const char *s) {
  sb_append_n(sb, s, strlen(s));
}

static void sb_vprintf(strbuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    sb->failed = true;
    return;
  }
  sb_reserve(sb, (size_t)n);
  if (sb->failed) return;
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

static void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

/* Appends `text` with `indent` spaces before every line after the first (the first line is
   placed by the caller). */
static void sb_append_indented(strbuf *sb, const char *text, const char *indent) {
  const char *line = text;
  for (;;) {
    const char *nl = strchr(line, '\n');
    if (!nl) {
      sb_append(sb, line);
      return;
    }
    sb_append_n(sb, line, (size_t)(nl - line) + 1);
    line = nl + 1;
    sb_append(sb, indent);
  }
}

static char *sb_take(strbuf *sb) {
  if (sb->failed) {
    free(sb->data);
    return NULL;
  }
  if (!sb->data) return strdup("");
  return sb->data;
}

/* ---- message assembly ------------------------------------------------------------------- */

/* The first words of the message. Resource limits read like the reference's LaunchError
   ("Too many resources were requested during launch: <which limit>"); every other code uses
   its table description, capitalised. */
static void append_headline(strbuf *sb, cubert_code code, const char *headline) {
  if (headline) {
    sb_append(sb, headline);
    return;
  }
  if (cubert_code_kind(code) == CUBERT_KIND_RESOURCE_LIMIT) {
    sb_append(sb, "Too many resources were requested during launch");
    if (code != CUBERT_CODE_TOO_MANY_RESOURCES) {
      sb_append(sb, ": ");
      sb_append(sb, code_description(code));
    }
    return;
  }
  const char *desc = code_description(code);
  char first = desc[0];
  if (first >= 'a' && first <= 'z') first = (char)(first - 'a' + 'A');
  sb_append_n(sb, &first, 1);
  sb_append(sb, desc + 1);
}

static void append_numbers(strbuf *sb, const struct cubert_status_s *s) {
  unsigned long long req = s->requested, max = s->max;
  if (s->has_dims) {
    sb_printf(sb, "Requested (%u, %u, %u), max is (%u, %u, %u).", s->dims_requested[0],
              s->dims_requested[1], s->dims_requested[2], s->dims_max[0], s->dims_max[1],
              s->dims_max[2]);
  } else if (s->has_limits) {
    switch (s->code) {
      case CUBERT_CODE_SHARED_MEMORY:
        sb_printf(sb, "Requested %llu bytes, maximum %llu bytes available.", req, max);
        break;
      case CUBERT_CODE_UNITS:
      case CUBERT_CODE_CUBE_DIM:
        sb_printf(sb, "Requested %llu units, max units is %llu.", req, max);
        break;
      case CUBERT_CODE_POOL_CAPACITY_EXCEEDED:
        sb_printf(sb, "Requested %llu bytes, capacity is %llu bytes.", req, max);
        break;
      default:
        sb_printf(sb, "Requested %llu, max is %llu.", req, max);
        break;
    }
  }
  if (s->has_size) {
    if (s->has_dims || s->has_limits) sb_append(sb, " ");
    sb_printf(sb, "Size: %llu bytes.", (unsigned long long)s->size);
  }
}

/* Rebuilds s->text from its parts. On allocation failure the previous text is kept (it is
   still a correct, if less detailed, description). */
static void status_rebuild(struct cubert_status_s *s) {
  if (s->is_static) return;
  strbuf sb = {0};
  append_headline(&sb, s->code, s->headline);
  if (s->reason && s->reason[0]) {
    sb_append(&sb, ": ");
    sb_append(&sb, s->reason);
  }
  if (s->has_limits || s->has_size || s->has_dims) {
    bool ends_with_period = sb.len > 0 && !sb.failed && sb.data[sb.len - 1] == '.';
    sb_append(&sb, ends_with_period ? " " : ". ");
    append_numbers(&sb, s);
  }
  if (s->error_count > 0) {
    sb_printf(&sb, "\nCaused by %zu error%s:", s->error_count, s->error_count == 1 ? "" : "s");
    for (size_t i = 0; i < s->error_count; ++i) {
      sb_printf(&sb, "\n  %zu. ", i + 1);
      sb_append_indented(&sb, cubert_status_message(s->errors[i]), "     ");
    }
  }
  if (s->build_log) {
    sb_append(&sb, "\nBuild log:\n  ");
    sb_append_indented(&sb, s->build_log, "  ");
  }
  if (s->cause) {
    sb_append(&sb, "\nCaused by:\n  ");
    sb_append_indented(&sb, cubert_status_message(s->cause), "  ");
  }
  if (s->backtrace) {
    sb_append(&sb, "\nBacktrace:\n");
    sb_append(&sb, s->backtrace);
  }
  char *text = sb_take(&sb);
  if (text) {
    free(s->text);
    s->text = text;
  }
}

/* ---- construction ----------------------------------------------------------------------- */

/* Captures the caller's stack as text, one frame per line. Only when CUBERT_BACKTRACE=1:
   backtrace_symbols costs tens of microseconds, too much for errors used as control flow. */
static char *capture_backtrace(void) {
  const cubert_config *config = cubert_config_get();
  if (!config || !config->backtrace) return NULL;
  void *frames[64];
  int count = backtrace(frames, 64);
  if (count <= 0) return NULL;
  char **symbols = backtrace_symbols(frames, count);
  if (!symbols) return NULL;
  strbuf sb = {0};
  /* Frame 0 is this function; the constructor frames that follow may be inlined, so they
     are kept rather than guessed away. */
  for (int i = 1; i < count; ++i) {
    sb_printf(&sb, "%s  %d: %s", i > 1 ? "\n" : "", i - 1, symbols[i]);
  }
  free(symbols);
  return sb_take(&sb);
}

static struct cubert_status_s *status_alloc(cubert_code code, const char *fmt, va_list ap) {
  if ((unsigned)code >= (unsigned)CUBERT_CODE_COUNT_) code = CUBERT_CODE_GENERIC;
  struct cubert_status_s *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->code = code;
  if (fmt) {
    strbuf sb = {0};
    sb_vprintf(&sb, fmt, ap);
    s->reason = sb_take(&sb);
    if (!s->reason) {
      free(s);
      return NULL;
    }
  }
  s->backtrace = capture_backtrace();
  return s;
}

cubert_status cubert_status_make(cubert_code code, const char *fmt, ...) {
  if (code == CUBERT_CODE_OK) return NULL;
  va_list ap;
  va_start(ap, fmt);
  struct cubert_status_s *s = status_alloc(code, fmt, ap);
  va_end(ap);
  if (!s) return &status_oom;
  status_rebuild(s);
  if (!s->text) {
    cubert_status_free(s);
    return &status_oom;
  }
  return s;
}

cubert_status cubert_status_wrap(cubert_code code, cubert_status cause, const char *fmt, ...) {
  if (code == CUBERT_CODE_OK) return cause;
  va_list ap;
  va_start(ap, fmt);
  struct cubert_status_s *s = status_alloc(code, fmt, ap);
  va_end(ap);
  if (!s) {
    /* Keep the more informative error when we cannot wrap it. */
    return cause ? cause : &status_oom;
  }
  s->cause = cause;
  status_rebuild(s);
  if (!s->text) {
    s->cause = NULL;
    cubert_status_free(s);
    return cause ? cause : &status_oom;
  }
  return s;
}

cubert_status cubert_status_unhealthy(cubert_status *errors, size_t count) {
  struct cubert_status_s *s = calloc(1, sizeof(*s));
  cubert_status *copy = count ? malloc(count * sizeof(*copy)) : NULL;
  if (!s || (count && !copy)) {
    free(s);
    free(copy);
    for (size_t i = 0; i < count; ++i) cubert_status_free(errors[i]);
    return &status_oom;
  }
  s->code = CUBERT_CODE_SERVER_UNHEALTHY;
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (errors[i]) copy[kept++] = errors[i];
  }
  s->errors = copy;
  s->error_count = kept;
  s->backtrace = capture_backtrace();
  status_rebuild(s);
  if (!s->text) {
    cubert_status_free(s);
    return &status_oom;
  }
  return s;
}

cubert_status cubert_status_merge(cubert_status *list, size_t count) {
  cubert_status s = count == 0 ? NULL : count == 1 ? list[0] : cubert_status_unhealthy(list, count);
  free(list);
  return s;
}

cubert_status cubert_status_set_limits(cubert_status status, uint64_t requested, uint64_t max) {
  if (!status || status->is_static) return status;
  status->has_limits = true;
  status->requested = requested;
  status->max = max;
  status_rebuild(status);
  return status;
}

cubert_status cubert_status_set_kind(cubert_status status, cubert_kind kind) {
  if (!status || status->is_static) return status;
  /* Only OUT_OF_MEMORY exists in two families (the reference's LaunchError and IoError). */
  if (status->code == CUBERT_CODE_OUT_OF_MEMORY &&
      (kind == CUBERT_KIND_LAUNCH || kind == CUBERT_KIND_IO))
    status->kind = kind;
  return status;
}

cubert_status cubert_status_set_headline(cubert_status status, const char *headline) {
  if (!status || status->is_static) return status;
  status->headline = headline;
  status_rebuild(status);
  return status;
}

cubert_status cubert_status_set_size(cubert_status status, uint64_t size) {
  if (!status || status->is_static) return status;
  status->has_size = true;
  status->size = size;
  status_rebuild(status);
  return status;
}

cubert_status cubert_status_set_dims(cubert_status status, const uint32_t requested[3],
                                     const uint32_t max[3]) {
  if (!status || status->is_static || !requested || !max) return status;
  status->has_dims = true;
  memcpy(status->dims_requested, requested, sizeof(status->dims_requested));
  memcpy(status->dims_max, max, sizeof(status->dims_max));
  /* requested/max report the products so callers comparing numbers need not know the axes. */
  status->has_limits = true;
  status->requested = (uint64_t)requested[0] * requested[1] * requested[2];
  status->max = (uint64_t)max[0] * max[1] * max[2];
  status_rebuild(status);
  return status;
}

cubert_status cubert_status_set_build_log(cubert_status status, const char *log) {
  if (!status || status->is_static) return status;
  char *copy = log ? strdup(log) : NULL;
  if (log && !copy) return status; /* the status stays valid, just without the log */
  free(status->build_log);
  status->build_log = copy;
  status_rebuild(status);
  return status;
}

static char *dup_or_null(const char *s, bool *failed) {
  if (!s) return NULL;
  char *copy = strdup(s);
  if (!copy) *failed = true;
  return copy;
}

cubert_status cubert_status_clone(cubert_status status) {
  if (!status || status->is_static) return status;
  struct cubert_status_s *s = calloc(1, sizeof(*s));
  if (!s) return &status_oom;
  *s = *status;
  s->reason = s->text = s->build_log = s->backtrace = NULL;
  s->cause = NULL;
  s->errors = NULL;
  s->error_count = 0;
  bool failed = false;
  s->reason = dup_or_null(status->reason, &failed);
  s->text = dup_or_null(status->text, &failed);
  s->build_log = dup_or_null(status->build_log, &failed);
  s->backtrace = dup_or_null(status->backtrace, &failed);
  if (status->cause) {
    s->cause = cubert_status_clone(status->cause);
    if (s->cause == &status_oom && status->cause != &status_oom) failed = true;
  }
  if (status->error_count) {
    s->errors = calloc(status->error_count, sizeof(*s->errors));
    if (!s->errors) failed = true;
    for (size_t i = 0; s->errors && i < status->error_count; ++i) {
      s->errors[i] = cubert_status_clone(status->errors[i]);
      s->error_count = i + 1;
      if (s->errors[i] == &status_oom && status->errors[i] != &status_oom) failed = true;
    }
  }
  if (failed) {
    cubert_status_free(s);
    return &status_oom;
  }
  return s;
}

void cubert_status_free(cubert_status status) {
  if (!status || status->is_static) return;
  cubert_status_free(status->cause);
  for (size_t i = 0; i < status->error_count; ++i) cubert_status_free(status->errors[i]);
  free(status->errors);
  free(status->reason);
  free(status->text);
  free(status->build_log);
  free(status->backtrace);
  free(status);
}

/* ---- accessors -------------------------------------------------------------------------- */

cubert_code cubert_status_code(cubert_status status) {
  return status ? status->code : CUBERT_CODE_OK;
}

cubert_kind cubert_status_kind(cubert_status status) {
  if (status && status->kind != CUBERT_KIND_OK) return status->kind;
  return cubert_code_kind(cubert_status_code(status));
}

const char *cubert_status_message(cubert_status status) {
  if (!status) return "ok";
  return status->text ? status->text : code_description(status->code);
}

cubert_status cubert_status_cause(cubert_status status) {
  return status ? status->cause : NULL;
}

size_t cubert_status_error_count(cubert_status status) {
  return status ? status->error_count : 0;
}

cubert_status cubert_status_error_at(cubert_status status, size_t index) {
  if (!status || index >= status->error_count) return NULL;
  return status->errors[index];
}

int cubert_status_has_code(cubert_status status, cubert_code code) {
  if (!status) return code == CUBERT_CODE_OK;
  for (cubert_status s = status; s; s = s->cause) {
    if (s->code == code) return 1;
    for (size_t i = 0; i < s->error_count; ++i) {
      if (cubert_status_has_code(s->errors[i], code)) return 1;
    }
  }
  return 0;
}

uint64_t cubert_status_requested(cubert_status status) {
  return status && status->has_limits ? status->requested : 0;
}

uint64_t cubert_status_max(cubert_status status) {
  return status && status->has_limits ? status->max : 0;
}

uint64_t cubert_status_size(cubert_status status) {
  return status && status->has_size ? status->size : 0;
}

int cubert_status_dims(cubert_status status, uint32_t out_requested[3], uint32_t out_max[3]) {
  if (!status || !status->has_dims) return 0;
  if (out_requested) memcpy(out_requested, status->dims_requested, sizeof(status->dims_requested));
  if (out_max) memcpy(out_max, status->dims_max, sizeof(status->dims_max));
  return 1;
}

const char *cubert_status_build_log(cubert_status status) {
  return status ? status->build_log : NULL;
}

const char *cubert_status_backtrace(cubert_status status) {
  return status ? status->backtrace : NULL;
}

/* cubert stress programs — the shared failure count and its two helpers. Plain C (the stress
   programs also run under TSan, where Criterion does not): FAIL prints a line and counts it,
   from any thread; ok() turns a status into a FAIL naming `what`. Each program returns
   non-zero when `failures` is. */
#ifndef CUBERT_STRESS_CHECK_H
#define CUBERT_STRESS_CHECK_H

#include <cubert/status.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int failures;

#define FAIL(...)                          \
  do {                                     \
    fprintf(stderr, "FAIL: " __VA_ARGS__); \
    fputc('\n', stderr);                   \
    atomic_fetch_add(&failures, 1);        \
  } while (0)

static inline int ok(cubert_status s, const char *what) {
  if (!s) return 1;
  FAIL("%s: %s", what, cubert_status_message(s));
  cubert_status_free(s);
  return 0;
}

#endif /* CUBERT_STRESS_CHECK_H */

/* cubert — internal configuration helpers (not exported; the public half is cubert/config.h). */
#ifndef CUBERT_BASE_CONFIG_H
#define CUBERT_BASE_CONFIG_H

#include <stddef.h>

#include "cubert/config.h"

/* Re-reads the environment into the configuration returned by cubert_config_get() and re-arms
   the one-time warnings. For tests only: not thread-safe against concurrent readers, and
   strings previously returned by cubert_config_get() are freed. */
void cubert_config_reload_for_tests(void);

/* True when a message of `level` and `category` (may be NULL) passes CUBERT_LOG: the level is
   at most the configured one and, when CUBERT_LOG names categories, messages above WARN
   belong to one of them (errors and warnings are never filtered by category). */
int cubert_config_log_wants(int level, const char *category);

/* The warnings produced by the last reading of the environment (one per bad value; every one
   is kept, however many), for tests. Strings are owned by the configuration. */
size_t cubert_config_warning_count(void);
const char *cubert_config_warning_at(size_t index);

#endif /* CUBERT_BASE_CONFIG_H */

/* Test helper: sets one CUBERT_* variable (or unsets it: value NULL) and re-reads the
   library's configuration (cubert_config_reload_for_tests, base/config.h), so that the next
   call sees the new value. Not thread-safe, like the reload itself. */
#ifndef CUBERT_TESTS_CORE_ENV_H
#define CUBERT_TESTS_CORE_ENV_H

#include <stdlib.h>

#include "base/config.h"
#include "cubert/config.h"

static inline void core_env_set(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  cubert_config_reload_for_tests();
  cubert_config_get();
}

#endif /* CUBERT_TESTS_CORE_ENV_H */

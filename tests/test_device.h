/* The device a test runs on, chosen at run time: CUBERT_TEST_DEVICE.

   CUBERT_TEST_DEVICE is a device selector ("cpu", "opencl", "opencl:1", "opencl:cpu",
   "opencl:gpu"; see `cubert-info`). A test binary written for one backend (the conformance
   suite's cts_opencl, the OpenCL unit tests, the examples and stress programs run through
   tests/with_test_device.sh) uses it when it names that backend, so that
   `CUBERT_TEST_DEVICE=opencl:cpu ctest` runs the OpenCL tests on PoCL on a machine whose first
   OpenCL device is a GPU; binaries of another backend keep their default ("cpu" for cts_cpu).
   Unset or empty: every binary uses its default, as before.

   A value that names no backend of this build, or has an empty part ("opencl:"), is an error,
   and so is a device it names that cannot be opened: the tests fail with the reason (they skip,
   exit 77, only when the *default* device is absent). */
#ifndef CUBERT_TESTS_TEST_DEVICE_H
#define CUBERT_TESTS_TEST_DEVICE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/backend.h"
#include "cubert/server.h"

typedef struct cubert_test_device_choice {
  const char *selector; /* the selector to open (the variable's value or the default) */
  int from_env;         /* 1: CUBERT_TEST_DEVICE chose it, so a failure to open it is an error */
  char error[512];      /* non-empty: the variable's value is bad (selector is then NULL) */
} cubert_test_device_choice;

/* The device for a test of `backend` ("cpu" or "opencl") whose default selector is
   `default_selector`. */
static inline cubert_test_device_choice cubert_test_device(const char *backend,
                                                           const char *default_selector) {
  cubert_test_device_choice c = {default_selector, 0, ""};
  const char *env = getenv("CUBERT_TEST_DEVICE");
  if (!env || !*env) return c;
  const char *colon = strchr(env, ':');
  size_t len = colon ? (size_t)(colon - env) : strlen(env);
  if (len == 0 || (colon && !colon[1])) {
    snprintf(c.error, sizeof(c.error),
             "CUBERT_TEST_DEVICE=\"%s\" has an empty %s (selectors: cpu, opencl, opencl:N, "
             "opencl:cpu, opencl:gpu)",
             env, len == 0 ? "backend before the colon" : "device after the colon");
    c.selector = NULL;
    return c;
  }
  char known[128] = "";
  int found = 0;
  const cubert_backend *const *backends = cubert_backends();
  for (size_t i = 0; backends[i]; ++i) {
    if (strlen(backends[i]->name) == len && strncmp(backends[i]->name, env, len) == 0) found = 1;
    size_t used = strlen(known);
    snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "", backends[i]->name);
  }
  if (!found) {
    snprintf(c.error, sizeof(c.error),
             "CUBERT_TEST_DEVICE=\"%s\" names no backend of this build (backends: %s; "
             "selectors: cpu, opencl, opencl:N, opencl:cpu, opencl:gpu)",
             env, known);
    c.selector = NULL;
    return c;
  }
  if (strlen(backend) == len && strncmp(backend, env, len) == 0) {
    c.selector = env;
    c.from_env = 1;
  }
  return c;
}

/* The part after "<backend>:" of a selector ("" for a bare backend name), as a backend's
   create() takes it. */
static inline const char *cubert_test_device_spec(const char *selector) {
  const char *colon = strchr(selector, ':');
  return colon ? colon + 1 : "";
}

#endif /* CUBERT_TESTS_TEST_DEVICE_H */

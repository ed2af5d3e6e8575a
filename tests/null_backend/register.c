/* Registers the null backend before main() runs, in every process of a test binary (Criterion
   runs each test in a process of its own). */
#include <stdio.h>

#include "cubert/backend.h"
#include "null_backend.h"

__attribute__((constructor)) static void register_null_backend(void) {
  cubert_status s = cubert_backend_register(&cubert_null_backend);
  if (s) { /* the test that opens "null" then fails, naming the device */
    fprintf(stderr, "registering the null backend failed: %s\n", cubert_status_message(s));
    cubert_status_free(s);
  }
}

/* cubert — CUBERT_OCLGRIND=1: a program's OpenCL work on Oclgrind's simulated device with its
   checks on (data races, out-of-bounds and uninitialised accesses, barrier divergence, API
   misuse), without changing the program. The ICD loader (ocl-icd) reads OCL_ICD_VENDORS once,
   at the process's first OpenCL call, and accepts the path of one ICD library there, so the
   switch sets it before cubert lists the platforms; the machine's /etc/OpenCL/vendors is not
   touched. Oclgrind reports on stderr (or to OCLGRIND_LOG), not through cubert's errors. */
#include "opencl/oclgrind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where Debian, Ubuntu and a default source build install Oclgrind's ICD library. */
static const char *const kIcdPaths[] = {
    "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
    "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so",
    "/usr/local/lib/liboclgrind-rt-icd.so",
};

int cubert_ocl_oclgrind_select(char *reason, size_t capacity) {
  const char *on = getenv("CUBERT_OCLGRIND");
  if (!on || strcmp(on, "1") != 0) return 1;
  const char *path = getenv("CUBERT_OCLGRIND_ICD");
  for (size_t i = 0; !path && i < sizeof kIcdPaths / sizeof kIcdPaths[0]; ++i)
    if (access(kIcdPaths[i], R_OK) == 0) path = kIcdPaths[i];
  if (!path || access(path, R_OK) != 0) {
    snprintf(reason, capacity,
             "CUBERT_OCLGRIND=1 but Oclgrind's ICD library (liboclgrind-rt-icd.so) was not found "
             "%s%s; install oclgrind or set CUBERT_OCLGRIND_ICD to its path",
             path ? "at " : "in /usr/lib/oclgrind or /usr/local/lib", path ? path : "");
    return 0;
  }
  setenv("OCL_ICD_VENDORS", path, 1);
  setenv("OCLGRIND_CHECK_API", "1", 0);
  setenv("OCLGRIND_DATA_RACES", "1", 0);
  setenv("OCLGRIND_UNINITIALIZED", "1", 0);
  /* Oclgrind 21.10 stops at LLVM's `freeze` instruction, which optimised code may hold
     (tests/oclgrind.sh says more). */
  setenv("OCLGRIND_BUILD_OPTIONS", "-cl-opt-disable", 0);
  return 1;
}

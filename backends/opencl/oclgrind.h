/* cubert — the OpenCL server under Oclgrind (oclgrind.c): CUBERT_OCLGRIND=1 makes Oclgrind's
   simulated device, with its checks on, the only OpenCL platform of the process. */
#ifndef CUBERT_OPENCL_OCLGRIND_H
#define CUBERT_OPENCL_OCLGRIND_H

#include <stddef.h>

/* Called before the process's first clGetPlatformIDs. With CUBERT_OCLGRIND=1 it points the ICD
   loader at Oclgrind's ICD library alone (OCL_ICD_VENDORS) and turns Oclgrind's checks on
   (OCLGRIND_CHECK_API, OCLGRIND_DATA_RACES, OCLGRIND_UNINITIALIZED, and
   OCLGRIND_BUILD_OPTIONS=-cl-opt-disable, each unless already set). Returns 1 when done or not
   asked for; 0 when asked for and Oclgrind's library was not found, with the reason in
   `reason` (`capacity` bytes). Not thread-safe (it sets environment variables): the device
   list calls it once, under its lock. */
int cubert_ocl_oclgrind_select(char *reason, size_t capacity);

#endif /* CUBERT_OPENCL_OCLGRIND_H */

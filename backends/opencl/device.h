/* cubert — OpenCL device enumeration and properties (device.c): the stable order of platforms
   and devices that selector specs index, the selectors themselves, the device queries behind
   cubert_device_properties, and the backend's enumerate() and describe(). Needs no server: these
   run before one exists. */
#ifndef CUBERT_OPENCL_DEVICE_H
#define CUBERT_OPENCL_DEVICE_H

#include <stddef.h>
#include <stdio.h>

#include "opencl/api.h"

/* One entry of the stable device enumeration. `device` is NULL for a platform whose device
   list could not be read. */
typedef struct cubert_ocl_device_entry {
  cl_platform_id platform;
  cl_device_id device;
  int available;
  char reason[256];
  cubert_device_properties properties;
} cubert_ocl_device_entry;

/* Lists every platform (sorted by name, then vendor; loader order among equals) and its
   devices in the platform's order. Never fails for a broken platform or device: those are
   entries with available = 0 and a reason. Zero platforms gives *out_count = 0. The array is
   freed with free(). OUT_OF_MEMORY only. */
cubert_status cubert_ocl_list_devices(cubert_ocl_device_entry **out, size_t *out_count);
/* Resolves a selector spec ("", "N", "gpu", "cpu") to an index of `entries`. NOT_FOUND
   listing the valid choices for an unknown spec; UNAVAILABLE for an entry that exists but
   cannot be opened, or for "" when no device is available. */
cubert_status cubert_ocl_select(const char *spec, const cubert_ocl_device_entry *entries,
                                size_t count, size_t *out_index);
/* Fills `out` from device queries. `probe_context` may be NULL: a context is then created for
   the trivial kernel that measures the preferred work-group multiple when no device-level
   query gives it. */
cubert_status cubert_ocl_query_properties(cl_platform_id platform, cl_device_id device,
                                          cl_context probe_context, cubert_device_properties *out);
/* True when the device shares memory with the host (PoCL CPU devices, integrated GPUs):
   staging through pinned memory would only add a copy there. */
int cubert_ocl_device_host_unified(cl_device_id device);
/* Reads a string device/platform info into a malloc'd string ("" on failure; NULL only when
   out of memory). */
char *cubert_ocl_device_string(cl_device_id device, cl_device_info param);
char *cubert_ocl_platform_string(cl_platform_id platform, cl_platform_info param);
/* The backend's enumerate() and describe() (the vtable in server.c): every entry of the
   enumeration as a cubert_device_info, and a multi-line description of entry `index`. */
cubert_status cubert_ocl_enumerate(cubert_device_info *out, size_t capacity, size_t *out_count);
void cubert_ocl_describe(size_t index, FILE *out);

#endif /* CUBERT_OPENCL_DEVICE_H */

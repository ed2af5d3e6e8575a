/* cubert — OpenCL devices: the stable enumeration, selectors and device properties.

   Enumeration never fails because one platform or device misbehaves: ICD loaders list
   whatever vendor libraries are installed, and a broken one (a stale driver, a GPU that went
   away) must not hide the others. Such entries are listed as unavailable with the reason. */
#include "opencl/device.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/backend.h"
#include "opencl/errors.h"
#include "opencl/oclgrind.h"

#ifndef CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE_3_0
#define CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE_3_0 0x1067 /* OpenCL 3.0 device query */
#endif
#define CUBERT_OCL_WARP_SIZE_NV 0x4003          /* cl_nv_device_attribute_query */
#define CUBERT_OCL_WAVEFRONT_WIDTH_AMD 0x4043   /* cl_amd_device_attribute_query */
#define CUBERT_OCL_SUB_GROUP_SIZES_INTEL 0x4108 /* cl_intel_required_subgroup_size */
/* cl_ext_float_atomics (not in every cl_ext.h yet) */
#define CUBERT_OCL_SINGLE_FP_ATOMIC_CAPABILITIES_EXT 0x4231
#define CUBERT_OCL_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT 0x4232
#define CUBERT_OCL_GLOBAL_FP_ATOMIC_ADD_EXT (1u << 1)
/* cl_khr_integer_dot_product */
#define CUBERT_OCL_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR 0x1073
#define CUBERT_OCL_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR (1u << 1)
/* OpenCL 2.1 core */
#define CUBERT_OCL_MAX_NUM_SUB_GROUPS 0x105C
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

/* ---- small query helpers ----------------------------------------------------------------- */

char *cubert_ocl_device_string(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, NULL, &size) != CL_SUCCESS) size = 0;
  char *s = calloc(1, size + 1);
  if (!s) return NULL;
  if (size && clGetDeviceInfo(device, param, size, s, NULL) != CL_SUCCESS) s[0] = '\0';
  s[size] = '\0';
  return s;
}

char *cubert_ocl_platform_string(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, NULL, &size) != CL_SUCCESS) size = 0;
  char *s = calloc(1, size + 1);
  if (!s) return NULL;
  if (size && clGetPlatformInfo(platform, param, size, s, NULL) != CL_SUCCESS) s[0] = '\0';
  s[size] = '\0';
  return s;
}

static void copy_string(char *dst, size_t capacity, const char *src) {
  snprintf(dst, capacity, "%s", src ? src : "");
}

/* True when the space-separated extension list holds `name` as a whole word. */
static int has_extension(const char *extensions, const char *name) {
  size_t len = strlen(name);
  for (const char *p = extensions; p && (p = strstr(p, name)) != NULL; p += len) {
    int starts = p == extensions || p[-1] == ' ';
    int ends = p[len] == '\0' || p[len] == ' ';
    if (starts && ends) return 1;
  }
  return 0;
}

/* "OpenCL 1.2 foo" -> 102; 0 when unparsable. */
static int parse_version(const char *text) {
  int major = 0, minor = 0;
  if (!text || sscanf(text, "OpenCL %d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor;
}

int cubert_ocl_device_host_unified(cl_device_id device) {
  cl_bool unified = CL_FALSE;
  /* CL_DEVICE_HOST_UNIFIED_MEMORY is deprecated in 2.0 but present in 1.2 and later. */
  if (clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified, NULL) !=
      CL_SUCCESS)
    return 0;
  return unified == CL_TRUE;
}

#define QUERY(param, var)                                                                    \
  do {                                                                                       \
    cl_int err_ = clGetDeviceInfo(device, param, sizeof(var), &(var), NULL);                 \
    if (err_ != CL_SUCCESS)                                                                  \
      return cubert_ocl_status(err_, CUBERT_CODE_UNAVAILABLE, "clGetDeviceInfo(%s) of '%s'", \
                               #param, out->name);                                           \
  } while (0)

/* The preferred work-group size multiple of a trivial kernel: what drivers without a device
   level query report as their SIMD width. 0 when it cannot be measured. */
static uint32_t probe_kernel_multiple(cl_platform_id platform, cl_device_id device,
                                      cl_context context) {
  static const char *kSource =
      "__kernel void cubert_probe(__global int *p) { p[get_global_id(0)] = 0; }";
  cl_int err = CL_SUCCESS;
  int own_context = context == NULL;
  if (own_context) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    context = clCreateContext(props, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 0;
  }
  uint32_t result = 0;
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, NULL, &err);
  if (err == CL_SUCCESS && clBuildProgram(program, 1, &device, "", NULL, NULL) == CL_SUCCESS) {
    cl_kernel kernel = clCreateKernel(program, "cubert_probe", &err);
    size_t multiple = 0;
    if (err == CL_SUCCESS &&
        clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof(multiple), &multiple, NULL) == CL_SUCCESS)
      result = multiple > UINT32_MAX ? UINT32_MAX : (uint32_t)multiple;
    if (err == CL_SUCCESS) clReleaseKernel(kernel);
  }
  if (program) clReleaseProgram(program);
  if (own_context) clReleaseContext(context);
  return result;
}

/* Plane (SIMD group) size: vendor queries first, then the OpenCL 3.0 device query, then a
   trivial kernel. Each is what the vendor documents as its warp/wavefront/sub-group width. */
static void query_plane_size(cl_platform_id platform, cl_device_id device, cl_context context,
                             const char *extensions, int version, uint32_t *out_min,
                             uint32_t *out_max) {
  cl_uint width = 0;
  if (has_extension(extensions, "cl_nv_device_attribute_query") &&
      clGetDeviceInfo(device, CUBERT_OCL_WARP_SIZE_NV, sizeof(width), &width, NULL) == CL_SUCCESS &&
      width) {
    *out_min = *out_max = width;
    return;
  }
  if (has_extension(extensions, "cl_amd_device_attribute_query") &&
      clGetDeviceInfo(device, CUBERT_OCL_WAVEFRONT_WIDTH_AMD, sizeof(width), &width, NULL) ==
          CL_SUCCESS &&
      width) {
    *out_min = *out_max = width;
    return;
  }
  if (has_extension(extensions, "cl_intel_required_subgroup_size")) {
    size_t sizes[16] = {0}, bytes = 0;
    if (clGetDeviceInfo(device, CUBERT_OCL_SUB_GROUP_SIZES_INTEL, sizeof(sizes), sizes, &bytes) ==
            CL_SUCCESS &&
        bytes >= sizeof(size_t)) {
      size_t n = bytes / sizeof(size_t), lo = SIZE_MAX, hi = 0;
      for (size_t i = 0; i < n; ++i) {
        if (sizes[i] && sizes[i] < lo) lo = sizes[i];
        if (sizes[i] > hi) hi = sizes[i];
      }
      if (hi) {
        *out_min = (uint32_t)lo;
        *out_max = (uint32_t)hi;
        return;
      }
    }
  }
  if (version >= 300) {
    size_t multiple = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE_3_0, sizeof(multiple),
                        &multiple, NULL) == CL_SUCCESS &&
        multiple) {
      *out_min = *out_max = multiple > UINT32_MAX ? UINT32_MAX : (uint32_t)multiple;
      return;
    }
  }
  uint32_t multiple = probe_kernel_multiple(platform, device, context);
  *out_min = *out_max = multiple ? multiple : 1;
}

/* The plane sizes the device runs (device.h, plane_sizes): every size the driver lists under
   cl_intel_required_subgroup_size, ascending; else the ends of the range query_plane_size
   found. */
static void query_plane_sizes(cl_device_id device, const char *extensions,
                              cubert_device_properties *out) {
  const cubert_hardware_properties *hw = &out->hardware;
  out->plane_size_count = 0;
  size_t sizes[16] = {0}, bytes = 0;
  if (has_extension(extensions, "cl_intel_required_subgroup_size") &&
      clGetDeviceInfo(device, CUBERT_OCL_SUB_GROUP_SIZES_INTEL, sizeof(sizes), sizes, &bytes) ==
          CL_SUCCESS) {
    size_t n = bytes / sizeof(size_t);
    for (size_t i = 0; i < n; ++i) { /* insertion into the ascending list, no duplicates */
      uint32_t v = (uint32_t)(sizes[i] > UINT32_MAX ? UINT32_MAX : sizes[i]);
      if (!v || out->plane_size_count == CUBERT_MAX_PLANE_SIZES) continue;
      uint32_t at = 0;
      while (at < out->plane_size_count && out->plane_sizes[at] < v) ++at;
      if (at < out->plane_size_count && out->plane_sizes[at] == v) continue;
      for (uint32_t j = out->plane_size_count; j > at; --j)
        out->plane_sizes[j] = out->plane_sizes[j - 1];
      out->plane_sizes[at] = v;
      ++out->plane_size_count;
    }
  }
  if (out->plane_size_count) return;
  out->plane_sizes[out->plane_size_count++] = hw->plane_size_min ? hw->plane_size_min : 1;
  if (hw->plane_size_max > hw->plane_size_min)
    out->plane_sizes[out->plane_size_count++] = hw->plane_size_max;
}

/* The optional capabilities beyond fp64/fp16/atomic64 (device.h): subgroups, float atomics,
   integer dot products. An extension counts only where its capability query, when there is
   one, confirms the operation. */
static uint32_t query_capabilities(cl_device_id device, const char *extensions, int version) {
  uint32_t features = 0;
  cl_uint subgroups = 0;
  if (has_extension(extensions, "cl_khr_subgroups") ||
      has_extension(extensions, "cl_intel_subgroups") ||
      (version >= 201 &&
       clGetDeviceInfo(device, CUBERT_OCL_MAX_NUM_SUB_GROUPS, sizeof(subgroups), &subgroups,
                       NULL) == CL_SUCCESS &&
       subgroups > 0))
    features |= CUBERT_FEATURE_PLANE;
  if (has_extension(extensions, "cl_ext_float_atomics")) {
    cl_bitfield caps = 0;
    if (clGetDeviceInfo(device, CUBERT_OCL_SINGLE_FP_ATOMIC_CAPABILITIES_EXT, sizeof(caps), &caps,
                        NULL) == CL_SUCCESS &&
        (caps & CUBERT_OCL_GLOBAL_FP_ATOMIC_ADD_EXT))
      features |= CUBERT_FEATURE_ATOMIC_F32_ADD;
    caps = 0;
    if (clGetDeviceInfo(device, CUBERT_OCL_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT, sizeof(caps), &caps,
                        NULL) == CL_SUCCESS &&
        (caps & CUBERT_OCL_GLOBAL_FP_ATOMIC_ADD_EXT))
      features |= CUBERT_FEATURE_ATOMIC_F64_ADD;
  }
  if (has_extension(extensions, "cl_khr_integer_dot_product")) {
    cl_bitfield caps = 0;
    if (clGetDeviceInfo(device, CUBERT_OCL_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR, sizeof(caps),
                        &caps, NULL) != CL_SUCCESS ||
        (caps & CUBERT_OCL_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR))
      features |= CUBERT_FEATURE_DOT_PRODUCT_I8;
  }
  return features;
}

static uint32_t clamp_u32(uint64_t v) {
  return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The preferred vector widths (out->vector_widths); returns at the first failing query. */
static cubert_status query_vector_widths(cl_device_id device, cubert_device_properties *out) {
  cl_uint pref[7] = {0}; /* char, short, int, long, half, float, double */
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, pref[0]);
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, pref[1]);
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, pref[2]);
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, pref[3]);
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, pref[5]);
  QUERY(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, pref[6]);
  /* HALF is OpenCL 1.1; a 1.0 driver may reject it: 0, no half vectors */
  if (clGetDeviceInfo(device, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, sizeof pref[4], &pref[4],
                      NULL) != CL_SUCCESS)
    pref[4] = 0;
  out->vector_widths = (cubert_vector_widths){.i8 = pref[0],
                                              .i16 = pref[1],
                                              .i32 = pref[2],
                                              .i64 = pref[3],
                                              .f16 = pref[4],
                                              .f32 = pref[5],
                                              .f64 = pref[6]};
  return NULL;
}

/* The device type and timing method of cubert_ocl_query_properties, from the device's type and
   queue properties. */
static void classify(cubert_device_properties *out, cl_device_type type,
                     cl_command_queue_properties queue_props) {
  if (queue_props & CL_QUEUE_PROFILING_ENABLE) {
    out->features |= CUBERT_FEATURE_PROFILING;
    out->timing_method = CUBERT_TIMING_DEVICE;
  } else {
    out->timing_method = CUBERT_TIMING_SYSTEM;
  }
  if (type & CL_DEVICE_TYPE_GPU)
    out->type = CUBERT_DEVICE_TYPE_OPENCL_GPU;
  else if (type & CL_DEVICE_TYPE_CPU)
    out->type = CUBERT_DEVICE_TYPE_OPENCL_CPU;
  else
    out->type = CUBERT_DEVICE_TYPE_OPENCL_OTHER;
}

/* hardware.max_total_cubes. PoCL's CPU drivers deal a launch's work-groups out by 32-bit
   indices (pthread_scheduler.c, get_wg_index_range, PoCL 3.1): from 2^32 groups in total it
   asserts `max_wgs > 0` or crashes (measured in a child process: (65536, 65536, 1) groups of
   one item die with SIGILL, (65537, 65535, 1) runs). OpenCL has no query for this; other
   drivers report an invalid global size from the enqueue instead (0: no limit). */
static cubert_status query_total_cubes(cl_platform_id platform, cubert_device_properties *out) {
  char *platform_name = cubert_ocl_platform_string(platform, CL_PLATFORM_NAME);
  if (!platform_name)
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                              "host allocation failed while querying '%s'", out->name);
  out->hardware.max_total_cubes =
      strstr(platform_name, "Portable Computing Language") ? UINT32_MAX : 0;
  free(platform_name);
  return NULL;
}

/* The numeric queries of cubert_ocl_query_properties (returns at the first failing query). */
static cubert_status query_numbers(cl_device_id device, cubert_device_properties *out,
                                   const char *extensions, int version, cl_platform_id platform,
                                   cl_context probe_context) {
  cl_device_type type = 0;
  size_t max_group = 0;
  cl_uint dims = 0, compute_units = 0, align_bits = 0, address_bits = 0;
  size_t param_bytes = 0;
  cl_uint native_float = 0;
  cl_ulong local_mem = 0, max_alloc = 0;
  cl_device_fp_config fp64 = 0;
  cl_command_queue_properties queue_props = 0;
  QUERY(CL_DEVICE_TYPE, type);
  QUERY(CL_DEVICE_MAX_WORK_GROUP_SIZE, max_group);
  QUERY(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, dims);
  QUERY(CL_DEVICE_MAX_COMPUTE_UNITS, compute_units);
  QUERY(CL_DEVICE_LOCAL_MEM_SIZE, local_mem);
  QUERY(CL_DEVICE_MEM_BASE_ADDR_ALIGN, align_bits);
  QUERY(CL_DEVICE_MAX_MEM_ALLOC_SIZE, max_alloc);
  QUERY(CL_DEVICE_ADDRESS_BITS, address_bits);
  QUERY(CL_DEVICE_MAX_PARAMETER_SIZE, param_bytes);
  QUERY(CL_DEVICE_QUEUE_PROPERTIES, queue_props);
  QUERY(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, native_float);
  CUBERT_RETURN_IF_ERROR(query_vector_widths(device, out));
  /* CL_DEVICE_DOUBLE_FP_CONFIG is core in 1.2 but some drivers reject it without fp64. */
  if (clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL) != CL_SUCCESS)
    fp64 = 0;
  if (dims < 1 || dims > 64)
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "device '%s' reports %u work-item dimensions (expected 1..64)",
                              out->name, dims);
  size_t item_sizes[64] = {0};
  cl_int err = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(size_t),
                               item_sizes, NULL);
  if (err != CL_SUCCESS)
    return cubert_ocl_status(err, CUBERT_CODE_UNAVAILABLE,
                             "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES) of '%s'", out->name);

  cubert_hardware_properties *hw = &out->hardware;
  hw->max_units_per_cube = clamp_u32(max_group);
  for (int i = 0; i < 3; ++i) hw->max_cube_dim[i] = i < (int)dims ? clamp_u32(item_sizes[i]) : 1;
  hw->num_compute_units = compute_units;
  hw->max_shared_memory_size = local_mem;
  /* Global size = count * dim per axis must fit the device's size_t: with 64-bit addresses any
     u32 count does; with 32-bit ones keep counts below 2^31 (the launch still checks the
     product against the address width). */
  uint32_t max_count = address_bits >= 64 ? UINT32_MAX : 0x7fffffffu;
  for (int i = 0; i < 3; ++i) hw->max_cube_count[i] = max_count;
  CUBERT_RETURN_IF_ERROR(query_total_cubes(platform, out));
  /* One pointer per buffer argument plus the trailing info pointer must fit the parameter
     space; 1.2 FULL_PROFILE guarantees at least 1024 bytes. */
  uint32_t pointer_bytes = address_bits >= 64 ? 8 : 4;
  size_t pointers = param_bytes / pointer_bytes;
  hw->max_bindings = pointers > 1 ? clamp_u32(pointers - 1) : 1;
  hw->load_width = 128;
  /* Kernels vectorise up to the device's native float width, but never below 4: GPUs report 1
     yet load 128-bit vectors fastest. */
  hw->max_vector_size = native_float < 4 ? 4 : (native_float > 16 ? 16 : native_float);
  hw->num_cpu_cores = 0;
  query_plane_size(platform, device, probe_context, extensions, version, &hw->plane_size_min,
                   &hw->plane_size_max);

  out->memory.alignment = align_bits >= 8 ? align_bits / 8 : 1;
  out->memory.max_page_size = max_alloc;
  if (has_extension(extensions, "cl_khr_fp64") || fp64 != 0) out->features |= CUBERT_FEATURE_FP64;
  if (has_extension(extensions, "cl_khr_fp16")) out->features |= CUBERT_FEATURE_FP16;
  if (has_extension(extensions, "cl_khr_int64_base_atomics"))
    out->features |= CUBERT_FEATURE_ATOMIC64;
  out->features |= query_capabilities(device, extensions, version);
  query_plane_sizes(device, extensions, out);
  classify(out, type, queue_props);
  return NULL;
}

cubert_status cubert_ocl_query_properties(cl_platform_id platform, cl_device_id device,
                                          cl_context probe_context, cubert_device_properties *out) {
  memset(out, 0, sizeof(*out));
  copy_string(out->backend, sizeof(out->backend), "opencl");
  char *name = cubert_ocl_device_string(device, CL_DEVICE_NAME);
  char *vendor = cubert_ocl_device_string(device, CL_DEVICE_VENDOR);
  char *driver = cubert_ocl_device_string(device, CL_DRIVER_VERSION);
  char *platform_version = cubert_ocl_platform_string(platform, CL_PLATFORM_VERSION);
  char *device_version = cubert_ocl_device_string(device, CL_DEVICE_VERSION);
  char *extensions = cubert_ocl_device_string(device, CL_DEVICE_EXTENSIONS);
  cubert_status status = NULL;
  if (!name || !vendor || !driver || !platform_version || !device_version || !extensions) {
    status = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "host allocation failed while "
                                "querying an OpenCL device");
    goto done;
  }
  copy_string(out->name, sizeof(out->name), name);
  copy_string(out->vendor, sizeof(out->vendor), vendor);
  copy_string(out->driver_version, sizeof(out->driver_version), driver);
  copy_string(out->platform_version, sizeof(out->platform_version), platform_version);
  status = query_numbers(device, out, extensions, parse_version(device_version), platform,
                         probe_context);
done:
  free(name);
  free(vendor);
  free(driver);
  free(platform_version);
  free(device_version);
  free(extensions);
  return status;
}

/* ---- enumeration ------------------------------------------------------------------------- */

typedef struct platform_key {
  cl_platform_id id;
  char *name, *vendor;
  size_t loader_index;
} platform_key;

static int platform_less(const platform_key *a, const platform_key *b) {
  int c = strcmp(a->name, b->name);
  if (c == 0) c = strcmp(a->vendor, b->vendor);
  if (c == 0) return a->loader_index < b->loader_index;
  return c < 0;
}

static cubert_status push_entry(cubert_ocl_device_entry **entries, size_t *count, size_t *capacity,
                                cubert_ocl_device_entry **out) {
  if (*count == *capacity) {
    size_t cap = *capacity ? *capacity * 2 : 8;
    cubert_ocl_device_entry *grown = realloc(*entries, cap * sizeof(*grown));
    if (!grown)
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "host allocation of %zu device entries failed", cap);
    *entries = grown;
    *capacity = cap;
  }
  *out = &(*entries)[(*count)++];
  memset(*out, 0, sizeof(**out));
  return NULL;
}

/* Fills one device's entry; problems make it unavailable rather than failing the listing. */
static void fill_device_entry(cubert_ocl_device_entry *e) {
  cubert_status s = cubert_ocl_query_properties(e->platform, e->device, NULL, &e->properties);
  if (s) {
    copy_string(e->reason, sizeof(e->reason), cubert_status_message(s));
    cubert_status_free(s);
    return;
  }
  cl_bool available = CL_FALSE, compiler = CL_FALSE;
  char *version = cubert_ocl_device_string(e->device, CL_DEVICE_VERSION);
  int v = parse_version(version);
  free(version);
  if (clGetDeviceInfo(e->device, CL_DEVICE_AVAILABLE, sizeof(available), &available, NULL) !=
          CL_SUCCESS ||
      !available) {
    snprintf(e->reason, sizeof(e->reason), "device '%.200s' reports CL_DEVICE_AVAILABLE = false",
             e->properties.name);
  } else if (clGetDeviceInfo(e->device, CL_DEVICE_COMPILER_AVAILABLE, sizeof(compiler), &compiler,
                             NULL) != CL_SUCCESS ||
             !compiler) {
    snprintf(e->reason, sizeof(e->reason), "device '%.200s' has no OpenCL C compiler",
             e->properties.name);
  } else if (v < 102) {
    snprintf(e->reason, sizeof(e->reason), "device '%.200s' supports OpenCL %d.%d; 1.2 is needed",
             e->properties.name, v / 100, v % 100);
  } else {
    e->available = 1;
  }
}

/* The keys of the loader's platforms ids[0, count), sorted (platform_less). */
static cubert_status platform_keys(const cl_platform_id *ids, cl_uint count, platform_key *keys) {
  for (cl_uint i = 0; i < count; ++i) {
    keys[i].id = ids[i];
    keys[i].loader_index = i;
    keys[i].name = cubert_ocl_platform_string(ids[i], CL_PLATFORM_NAME);
    keys[i].vendor = cubert_ocl_platform_string(ids[i], CL_PLATFORM_VENDOR);
    if (!keys[i].name || !keys[i].vendor)
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  /* Insertion sort: stable, and platform counts are tiny. */
  for (cl_uint i = 1; i < count; ++i) {
    platform_key k = keys[i];
    cl_uint j = i;
    for (; j > 0 && platform_less(&k, &keys[j - 1]); --j) keys[j] = keys[j - 1];
    keys[j] = k;
  }
  return NULL;
}

/* Appends the devices of one platform to the list, or one entry saying why they could not be
   listed; a platform without devices adds nothing. Errors: host allocation only. */
static cubert_status list_platform(const platform_key *key, cubert_ocl_device_entry **entries,
                                   size_t *count, size_t *capacity) {
  cubert_ocl_device_entry *e = NULL;
  cl_uint device_count = 0;
  cl_int err = clGetDeviceIDs(key->id, CL_DEVICE_TYPE_ALL, 0, NULL, &device_count);
  if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && device_count == 0)) return NULL;
  cl_device_id *devices = NULL;
  if (err == CL_SUCCESS) {
    devices = calloc(device_count, sizeof(*devices));
    if (!devices) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    err = clGetDeviceIDs(key->id, CL_DEVICE_TYPE_ALL, device_count, devices, &device_count);
  }
  if (err != CL_SUCCESS) {
    free(devices);
    CUBERT_RETURN_IF_ERROR(push_entry(entries, count, capacity, &e));
    e->platform = key->id;
    copy_string(e->properties.name, sizeof(e->properties.name), key->name);
    copy_string(e->properties.backend, sizeof(e->properties.backend), "opencl");
    snprintf(e->reason, sizeof(e->reason), "platform '%s': clGetDeviceIDs failed: %s (%d)",
             key->name, cubert_ocl_error_name(err), (int)err);
    return NULL;
  }
  for (cl_uint d = 0; d < device_count; ++d) {
    cubert_status status = push_entry(entries, count, capacity, &e);
    if (status) {
      free(devices);
      return status;
    }
    e->platform = key->id;
    e->device = devices[d];
    fill_device_entry(e);
  }
  free(devices);
  return NULL;
}

/* CUBERT_OCLGRIND (oclgrind.c), once per process, before the first clGetPlatformIDs. */
static pthread_once_t oclgrind_once = PTHREAD_ONCE_INIT;
static int oclgrind_ok;
static char oclgrind_reason[256];
static void oclgrind_select_once(void) {
  oclgrind_ok = cubert_ocl_oclgrind_select(oclgrind_reason, sizeof oclgrind_reason);
}

cubert_status cubert_ocl_list_devices(cubert_ocl_device_entry **out, size_t *out_count) {
  *out = NULL;
  *out_count = 0;
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0, capacity = 0;
  cubert_ocl_device_entry *e = NULL;
  pthread_once(&oclgrind_once, oclgrind_select_once);
  if (!oclgrind_ok) {
    /* Asked for Oclgrind and it is missing: no device rather than another one silently. */
    CUBERT_RETURN_IF_ERROR(push_entry(&entries, &count, &capacity, &e));
    copy_string(e->reason, sizeof(e->reason), oclgrind_reason);
    *out = entries;
    *out_count = count;
    return NULL;
  }
  cl_uint platform_count = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &platform_count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && platform_count == 0))
    return NULL; /* no OpenCL installed: zero devices, not an error */
  if (err != CL_SUCCESS) {
    CUBERT_RETURN_IF_ERROR(push_entry(&entries, &count, &capacity, &e));
    snprintf(e->reason, sizeof(e->reason), "clGetPlatformIDs failed: %s (%d)",
             cubert_ocl_error_name(err), (int)err);
    *out = entries;
    *out_count = count;
    return NULL;
  }
  cl_platform_id *ids = calloc(platform_count, sizeof(*ids));
  platform_key *keys = calloc(platform_count, sizeof(*keys));
  cubert_status status = NULL;
  if (!ids || !keys) {
    status = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
    goto done;
  }
  err = clGetPlatformIDs(platform_count, ids, &platform_count);
  if (err != CL_SUCCESS) platform_count = 0;
  status = platform_keys(ids, platform_count, keys);
  if (status) goto done;
  for (cl_uint p = 0; p < platform_count; ++p) {
    status = list_platform(&keys[p], &entries, &count, &capacity);
    if (status) goto done;
  }
done:
  for (cl_uint i = 0; keys && i < platform_count; ++i) {
    free(keys[i].name);
    free(keys[i].vendor);
  }
  free(keys);
  free(ids);
  if (status) {
    free(entries);
    return status;
  }
  *out = entries;
  *out_count = count;
  return NULL;
}

/* ---- selectors --------------------------------------------------------------------------- */

/* "valid specs: ..." listing every choice, into buf. */
static void list_choices(const cubert_ocl_device_entry *entries, size_t count, char *buf,
                         size_t capacity) {
  size_t used = (size_t)snprintf(buf, capacity,
                                 "valid specs: \"\" (first GPU, else first device), \"gpu\", "
                                 "\"cpu\"");
  for (size_t i = 0; i < count && used < capacity; ++i)
    used += (size_t)snprintf(buf + used, capacity - used, ", \"%zu\" (%s%s)", i,
                             entries[i].properties.name[0] ? entries[i].properties.name : "?",
                             entries[i].available ? "" : ", unavailable");
  if (count == 0 && used < capacity)
    snprintf(buf + used, capacity - used, "; no OpenCL device was found");
}

static int find_type(const cubert_ocl_device_entry *entries, size_t count, cubert_device_type type,
                     size_t *out) {
  for (size_t i = 0; i < count; ++i)
    if (entries[i].available && entries[i].properties.type == type) {
      *out = i;
      return 1;
    }
  return 0;
}

cubert_status cubert_ocl_select(const char *spec, const cubert_ocl_device_entry *entries,
                                size_t count, size_t *out_index) {
  char choices[2048];
  if (!spec) spec = "";
  if (spec[0] == '\0') {
    if (find_type(entries, count, CUBERT_DEVICE_TYPE_OPENCL_GPU, out_index)) return NULL;
    for (size_t i = 0; i < count; ++i)
      if (entries[i].available) {
        *out_index = i;
        return NULL;
      }
    list_choices(entries, count, choices, sizeof(choices));
    if (count)
      return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                                "no OpenCL device is available (first reason: %s); %s",
                                entries[0].reason, choices);
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE, "no OpenCL platform or device found");
  }
  if (strcmp(spec, "gpu") == 0 &&
      find_type(entries, count, CUBERT_DEVICE_TYPE_OPENCL_GPU, out_index))
    return NULL;
  if (strcmp(spec, "cpu") == 0 &&
      find_type(entries, count, CUBERT_DEVICE_TYPE_OPENCL_CPU, out_index))
    return NULL;
  int digits = 1;
  for (const char *p = spec; *p; ++p) digits &= isdigit((unsigned char)*p) != 0;
  if (digits && strlen(spec) < 10) {
    size_t index = (size_t)strtoul(spec, NULL, 10);
    if (index < count) {
      if (!entries[index].available)
        return cubert_status_make(CUBERT_CODE_UNAVAILABLE, "OpenCL device %zu is unavailable: %s",
                                  index, entries[index].reason);
      *out_index = index;
      return NULL;
    }
  }
  list_choices(entries, count, choices, sizeof(choices));
  return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                            "no OpenCL device matches \"%s\" (%zu listed); %s", spec, count,
                            choices);
}

/* ---- backend entry points ---------------------------------------------------------------- */

cubert_status cubert_ocl_enumerate(cubert_device_info *out, size_t capacity, size_t *out_count) {
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0;
  *out_count = 0;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_list_devices(&entries, &count));
  for (size_t i = 0; i < count && i < capacity; ++i) {
    cubert_device_info *info = &out[i];
    memset(info, 0, sizeof(*info));
    snprintf(info->selector, sizeof(info->selector), "opencl:%zu", i);
    info->available = entries[i].available;
    copy_string(info->reason, sizeof(info->reason), entries[i].reason);
    info->properties = entries[i].properties;
  }
  *out_count = count;
  free(entries);
  return NULL;
}

static void print_size(FILE *out, const char *label, uint64_t bytes) {
  fprintf(out, "  %-28s %" PRIu64 " bytes (%.1f MiB)\n", label, bytes, bytes / 1048576.0);
}

/* The device's names and versions, and how many extensions it has. */
static void describe_identity(const cubert_ocl_device_entry *e, FILE *out) {
  char *version = cubert_ocl_device_string(e->device, CL_DEVICE_VERSION);
  char *c_version = cubert_ocl_device_string(e->device, CL_DEVICE_OPENCL_C_VERSION);
  char *extensions = cubert_ocl_device_string(e->device, CL_DEVICE_EXTENSIONS);
  size_t ext_count = 0;
  for (const char *p = extensions; p && *p;) {
    while (*p == ' ') ++p;
    if (!*p) break;
    ++ext_count;
    while (*p && *p != ' ') ++p;
  }
  const cubert_device_properties *pr = &e->properties;
  fprintf(out, "  %-28s %s\n", "device", pr->name);
  fprintf(out, "  %-28s %s\n", "vendor", pr->vendor);
  fprintf(out, "  %-28s %s\n", "device version", version ? version : "?");
  fprintf(out, "  %-28s %s\n", "OpenCL C version", c_version ? c_version : "?");
  fprintf(out, "  %-28s %s\n", "driver version", pr->driver_version);
  fprintf(out, "  %-28s %zu\n", "extensions", ext_count);
  free(version);
  free(c_version);
  free(extensions);
}

/* The device's memory, work-group limits and features. */
static void describe_limits(const cubert_ocl_device_entry *e, FILE *out) {
  const cubert_device_properties *pr = &e->properties;
  cl_ulong global_mem = 0, global_cache = 0, constant_mem = 0;
  cl_uint clock_mhz = 0;
  size_t timer_ns = 0;
  cl_device_local_mem_type local_type = CL_LOCAL;
  clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global_mem), &global_mem, NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(global_cache), &global_cache,
                  NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof(constant_mem),
                  &constant_mem, NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(clock_mhz), &clock_mhz, NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof(timer_ns), &timer_ns,
                  NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_LOCAL_MEM_TYPE, sizeof(local_type), &local_type, NULL);
  fprintf(out, "  %-28s %u x %u MHz\n", "compute units", pr->hardware.num_compute_units, clock_mhz);
  print_size(out, "global memory", global_mem);
  print_size(out, "global memory cache", global_cache);
  print_size(out, "max allocation", pr->memory.max_page_size);
  print_size(out, "constant buffer", constant_mem);
  fprintf(out, "  %-28s %" PRIu64 " bytes (%s)\n", "local memory",
          pr->hardware.max_shared_memory_size, local_type == CL_LOCAL ? "dedicated" : "global");
  fprintf(out, "  %-28s %" PRIu64 " bytes\n", "base address alignment", pr->memory.alignment);
  fprintf(out, "  %-28s %u (%u x %u x %u)\n", "max work-group size",
          pr->hardware.max_units_per_cube, pr->hardware.max_cube_dim[0],
          pr->hardware.max_cube_dim[1], pr->hardware.max_cube_dim[2]);
  fprintf(out, "  %-28s %u..%u\n", "preferred multiple (plane)", pr->hardware.plane_size_min,
          pr->hardware.plane_size_max);
  fprintf(out, "  %-28s %s\n", "host unified memory",
          cubert_ocl_device_host_unified(e->device) ? "yes" : "no");
  fprintf(out, "  %-28s fp64 %s, fp16 %s, int64 atomics %s, profiling %s (%zu ns)\n", "features",
          pr->features & CUBERT_FEATURE_FP64 ? "yes" : "no",
          pr->features & CUBERT_FEATURE_FP16 ? "yes" : "no",
          pr->features & CUBERT_FEATURE_ATOMIC64 ? "yes" : "no",
          pr->features & CUBERT_FEATURE_PROFILING ? "yes" : "no", timer_ns);
}

void cubert_ocl_describe(size_t index, FILE *out) {
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0;
  cubert_status s = cubert_ocl_list_devices(&entries, &count);
  if (s) {
    fprintf(out, "  OpenCL enumeration failed: %s\n", cubert_status_message(s));
    cubert_status_free(s);
    return;
  }
  if (index >= count) {
    fprintf(out, "  no OpenCL device %zu (%zu listed)\n", index, count);
    free(entries);
    return;
  }
  const cubert_ocl_device_entry *e = &entries[index];
  char *pname = cubert_ocl_platform_string(e->platform, CL_PLATFORM_NAME);
  char *pvendor = cubert_ocl_platform_string(e->platform, CL_PLATFORM_VENDOR);
  char *pversion = cubert_ocl_platform_string(e->platform, CL_PLATFORM_VERSION);
  fprintf(out, "  %-28s %s (%s)\n", "platform", pname ? pname : "?", pvendor ? pvendor : "?");
  fprintf(out, "  %-28s %s\n", "platform version", pversion ? pversion : "?");
  free(pname);
  free(pvendor);
  free(pversion);
  if (!e->device || !e->available) {
    fprintf(out, "  %-28s %s\n", "unavailable", e->reason);
    if (!e->device) {
      free(entries);
      return;
    }
  }
  describe_identity(e, out);
  describe_limits(e, out);
  free(entries);
}

/* The OpenCL server's devices: enumeration, selectors, the property mapping (compared with
   direct clGetDeviceInfo queries on the same device, PoCL in CI), describe(), and the
   translation of OpenCL error codes. */
#include "cubert/backend.h"
#include "opencl/errors.h"
#include "opencl_test.h"

static void query(cl_device_id device, cl_device_info param, void *out, size_t size) {
  cr_assert_eq(clGetDeviceInfo(device, param, size, out, NULL), CL_SUCCESS, "clGetDeviceInfo(0x%x)",
               (unsigned)param);
}

static char *query_string(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  cr_assert_eq(clGetDeviceInfo(device, param, 0, NULL, &size), CL_SUCCESS);
  char *s = calloc(1, size + 1);
  cr_assert_eq(clGetDeviceInfo(device, param, size, s, NULL), CL_SUCCESS);
  return s;
}

static int has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

Test(opencl_device, enumerate_lists_devices_in_order) {
  ocl_test_env();
  size_t count = 0;
  OCL_OK(cubert_opencl_backend.enumerate(NULL, 0, &count));
  if (count == 0) cr_skip_test("no OpenCL device is installed: nothing to enumerate");
  cubert_device_info *infos = calloc(count, sizeof(*infos));
  size_t again = 0;
  OCL_OK(cubert_opencl_backend.enumerate(infos, count, &again));
  cr_assert_eq(again, count, "two enumerations disagree: %zu then %zu", count, again);
  int available = 0;
  for (size_t i = 0; i < count; ++i) {
    char expected[64];
    snprintf(expected, sizeof(expected), "opencl:%zu", i);
    cr_expect_str_eq(infos[i].selector, expected);
    cr_expect_str_eq(infos[i].properties.backend, "opencl");
    if (infos[i].available) {
      available++;
      cr_expect_gt(infos[i].properties.hardware.max_units_per_cube, 0);
      cr_expect_str_empty(infos[i].reason);
    } else {
      cr_expect_str_not_empty(infos[i].reason, "unavailable device %zu gives no reason", i);
    }
  }
  cr_expect_gt(available, 0);
  /* Capacity smaller than the count: the total is still reported. */
  cubert_device_info one;
  OCL_OK(cubert_opencl_backend.enumerate(&one, 1, &again));
  cr_expect_eq(again, count);
  cr_expect_str_eq(one.properties.name, infos[0].properties.name);
  free(infos);
}

Test(opencl_device, properties_match_device_queries) {
  cubert_server *server = ocl_test_server();
  cl_context context = NULL;
  cl_device_id device = NULL;
  OCL_OK(cubert_ocl_server_context(server, &context, &device));
  const cubert_device_properties *p = &server->properties;

  size_t max_group = 0, item_sizes[3] = {0};
  cl_uint units = 0, align_bits = 0, address_bits = 0;
  cl_ulong local_mem = 0, max_alloc = 0;
  cl_device_type type = 0;
  cl_command_queue_properties queue_props = 0;
  query(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, &max_group, sizeof(max_group));
  query(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, item_sizes, sizeof(item_sizes));
  query(device, CL_DEVICE_MAX_COMPUTE_UNITS, &units, sizeof(units));
  query(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &align_bits, sizeof(align_bits));
  query(device, CL_DEVICE_ADDRESS_BITS, &address_bits, sizeof(address_bits));
  query(device, CL_DEVICE_LOCAL_MEM_SIZE, &local_mem, sizeof(local_mem));
  query(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &max_alloc, sizeof(max_alloc));
  query(device, CL_DEVICE_TYPE, &type, sizeof(type));
  query(device, CL_DEVICE_QUEUE_PROPERTIES, &queue_props, sizeof(queue_props));
  char *name = query_string(device, CL_DEVICE_NAME);
  char *vendor = query_string(device, CL_DEVICE_VENDOR);
  char *driver = query_string(device, CL_DRIVER_VERSION);
  char *extensions = query_string(device, CL_DEVICE_EXTENSIONS);

  cr_expect_eq(p->hardware.max_units_per_cube, max_group);
  for (int i = 0; i < 3; ++i)
    cr_expect_eq(p->hardware.max_cube_dim[i], item_sizes[i], "axis %d", i);
  cr_expect_eq(p->hardware.num_compute_units, units);
  cr_expect_eq(p->hardware.max_shared_memory_size, local_mem);
  cr_expect_eq(p->memory.alignment, align_bits / 8, "alignment %llu bytes vs %u bits",
               (unsigned long long)p->memory.alignment, align_bits);
  cr_expect_eq(p->memory.max_page_size, max_alloc);
  uint32_t max_count = address_bits >= 64 ? UINT32_MAX : 0x7fffffffu;
  for (int i = 0; i < 3; ++i) cr_expect_eq(p->hardware.max_cube_count[i], max_count);
  cr_expect_eq(p->hardware.num_cpu_cores, 0);
  cr_expect_str_eq(p->name, name);
  cr_expect_str_eq(p->vendor, vendor);
  cr_expect_str_eq(p->driver_version, driver);
  cr_expect_str_eq(p->backend, "opencl");
  cr_expect_not(p->platform_version[0] == '\0');
  cr_expect_eq((p->features & CUBERT_FEATURE_FP16) != 0, has_word(extensions, "cl_khr_fp16"));
  cr_expect_eq((p->features & CUBERT_FEATURE_ATOMIC64) != 0,
               has_word(extensions, "cl_khr_int64_base_atomics"));
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL);
  cr_expect_eq((p->features & CUBERT_FEATURE_FP64) != 0,
               has_word(extensions, "cl_khr_fp64") || fp64 != 0);
  int profiling = (queue_props & CL_QUEUE_PROFILING_ENABLE) != 0;
  cr_expect_eq((p->features & CUBERT_FEATURE_PROFILING) != 0, profiling);
  cr_expect_eq(p->timing_method, profiling ? CUBERT_TIMING_DEVICE : CUBERT_TIMING_SYSTEM);
  cubert_device_type expected_type = (type & CL_DEVICE_TYPE_GPU) ? CUBERT_DEVICE_TYPE_OPENCL_GPU
                                     : (type & CL_DEVICE_TYPE_CPU)
                                         ? CUBERT_DEVICE_TYPE_OPENCL_CPU
                                         : CUBERT_DEVICE_TYPE_OPENCL_OTHER;
  cr_expect_eq(p->type, expected_type);

  /* The plane size is the preferred work-group multiple of a kernel on this device. */
  const char *source = "__kernel void k(__global int *p) { p[get_global_id(0)] = 1; }";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(clBuildProgram(program, 1, &device, "", NULL, NULL), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "k", &err);
  cr_assert_eq(err, CL_SUCCESS);
  size_t multiple = 0;
  cr_assert_eq(
      clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                               sizeof(multiple), &multiple, NULL),
      CL_SUCCESS);
  cr_expect_eq(p->hardware.plane_size_max, multiple, "plane size %u vs preferred multiple %zu",
               p->hardware.plane_size_max, multiple);
  cr_expect_leq(p->hardware.plane_size_min, p->hardware.plane_size_max);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  free(name);
  free(vendor);
  free(driver);
  free(extensions);
  ocl_test_server_destroy(server);
}

/* Issue 25 item 3, the device description (seed-client.rs.txt: `features`, the vector sizes of
   `io_optimized_vector_sizes`): the preferred vector widths are the driver's
   CL_DEVICE_PREFERRED_VECTOR_WIDTH_* answers, and the new feature bits follow the extensions
   (a bit is set only with its extension; subgroups also from the OpenCL 2.1 query). */
Test(opencl_device, description_matches_device_queries) {
  cubert_server *server = ocl_test_server();
  cl_context context = NULL;
  cl_device_id device = NULL;
  OCL_OK(cubert_ocl_server_context(server, &context, &device));
  const cubert_device_properties *p = &server->properties;
  const cl_device_info params[] = {
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE};
  const cubert_vector_widths *w = &p->vector_widths;
  const uint32_t got[] = {w->i8, w->i16, w->i32, w->i64, w->f16, w->f32, w->f64};
  for (size_t i = 0; i < 7; ++i) {
    cl_uint want = 0;
    query(device, params[i], &want, sizeof want);
    cr_expect_eq(got[i], want, "vector width %zu: %u, the driver says %u", i, got[i], want);
  }
  char *extensions = query_string(device, CL_DEVICE_EXTENSIONS);
  int subgroups =
      has_word(extensions, "cl_khr_subgroups") || has_word(extensions, "cl_intel_subgroups");
  if (!subgroups) {
    cl_uint n = 0;
    char *version = query_string(device, CL_DEVICE_VERSION);
    int major = 0, minor = 0;
    sscanf(version, "OpenCL %d.%d", &major, &minor);
    if (major * 100 + minor >= 201 &&
        clGetDeviceInfo(device, 0x105C /* CL_DEVICE_MAX_NUM_SUB_GROUPS */, sizeof n, &n, NULL) ==
            CL_SUCCESS)
      subgroups = n > 0;
    free(version);
  }
  cr_expect_eq((p->features & CUBERT_FEATURE_PLANE) != 0, subgroups);
  if (!has_word(extensions, "cl_ext_float_atomics"))
    cr_expect_eq(p->features & (CUBERT_FEATURE_ATOMIC_F32_ADD | CUBERT_FEATURE_ATOMIC_F64_ADD), 0);
  if (!has_word(extensions, "cl_khr_integer_dot_product"))
    cr_expect_eq(p->features & CUBERT_FEATURE_DOT_PRODUCT_I8, 0);
  cr_expect_geq(p->plane_size_count, 1);
  cr_expect_eq(p->plane_sizes[0], p->hardware.plane_size_min);
  cr_expect_eq(p->plane_sizes[p->plane_size_count - 1], p->hardware.plane_size_max);
  free(extensions);
  ocl_test_server_destroy(server);
}

Test(opencl_device, selectors) {
  cubert_server *server = ocl_test_server();
  char name[256];
  snprintf(name, sizeof(name), "%s", server->properties.name);
  cubert_device_type type = server->properties.type;
  ocl_test_server_destroy(server);

  size_t count = 0;
  OCL_OK(cubert_opencl_backend.enumerate(NULL, 0, &count));
  /* "N": an index of the enumeration. */
  cubert_device_info *infos = calloc(count, sizeof(*infos));
  OCL_OK(cubert_opencl_backend.enumerate(infos, count, &count));
  for (size_t i = 0; i < count; ++i) {
    if (!infos[i].available) continue;
    char spec[32];
    snprintf(spec, sizeof(spec), "%zu", i);
    OCL_OK(cubert_opencl_backend.create(spec, &server));
    cr_expect_str_eq(server->properties.name, infos[i].properties.name);
    server->vtable->destroy(server);
  }
  /* "cpu"/"gpu": the first device of that type, else NOT_FOUND listing the choices. */
  const char *typed = type == CUBERT_DEVICE_TYPE_OPENCL_GPU ? "gpu" : "cpu";
  if (type != CUBERT_DEVICE_TYPE_OPENCL_OTHER) {
    OCL_OK(cubert_opencl_backend.create(typed, &server));
    cr_expect_str_eq(server->properties.name, name,
                     "\"\" picks the first GPU, else the first "
                     "device; \"%s\" the first of its type",
                     typed);
    server->vtable->destroy(server);
  }
  int has_gpu = 0;
  for (size_t i = 0; i < count; ++i)
    has_gpu |= infos[i].available && infos[i].properties.type == CUBERT_DEVICE_TYPE_OPENCL_GPU;
  const char *unknown[] = {"bogus", "99999", "-1", "1x", has_gpu ? "tpu" : "gpu"};
  for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); ++i) {
    server = NULL;
    cubert_status s = cubert_opencl_backend.create(unknown[i], &server);
    cr_expect_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND, "spec \"%s\": %s", unknown[i],
                 cubert_status_message(s));
    cr_expect_null(server);
    const char *m = cubert_status_message(s);
    cr_expect(strstr(m, unknown[i]) != NULL, "message names the spec: %s", m);
    cr_expect(strstr(m, "\"gpu\"") && strstr(m, "\"cpu\"") && strstr(m, "\"0\""),
              "message lists the valid choices: %s", m);
    cr_expect(strstr(m, infos[0].properties.name) != NULL, "message names the devices: %s", m);
    cubert_status_free(s);
  }
  free(infos);
}

Test(opencl_device, describe_prints_the_platform_and_device) {
  ocl_test_env();
  size_t count = 0;
  OCL_OK(cubert_opencl_backend.enumerate(NULL, 0, &count));
  if (count == 0) cr_skip_test("no OpenCL device is installed: nothing to describe");
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cubert_opencl_backend.describe(0, out);
  cubert_opencl_backend.describe(count + 5, out);
  fclose(out);
  cr_expect(strstr(text, "platform version") != NULL, "%s", text);
  cr_expect(strstr(text, "extensions") != NULL, "%s", text);
  cr_expect(strstr(text, "global memory") != NULL, "%s", text);
  cr_expect(strstr(text, "base address alignment") != NULL, "%s", text);
  char missing[64];
  snprintf(missing, sizeof(missing), "no OpenCL device %zu", count + 5);
  cr_expect(strstr(text, missing) != NULL, "%s", text);
  free(text);
}

/* With no OpenCL platform at all (an empty vendor folder for the ICD loader), enumeration
   lists nothing and is not an error; create() reports UNAVAILABLE. */
Test(opencl_device, zero_platforms_is_not_an_error) {
  char dir[2200];
  ocl_test_temp_dir(dir, sizeof(dir));
  setenv("OCL_ICD_VENDORS", dir, 1);
  setenv("OPENCL_VENDOR_PATH", dir, 1); /* Khronos loader */
  cl_uint platforms = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &platforms);
  if (err == CL_SUCCESS && platforms > 0)
    cr_skip_test("the ICD loader ignores OCL_ICD_VENDORS (%u platforms still listed)", platforms);
  size_t count = 99;
  OCL_OK(cubert_opencl_backend.enumerate(NULL, 0, &count));
  cr_expect_eq(count, 0);
  cubert_server *server = NULL;
  cubert_status s = cubert_opencl_backend.create("", &server);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_UNAVAILABLE, "%s", cubert_status_message(s));
  cr_expect_null(server);
  cubert_status_free(s);
  s = cubert_opencl_backend.create("0", &server);
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND, "%s", cubert_status_message(s));
  cubert_status_free(s);
  rmdir(dir);
}

Test(opencl_device, error_translation) {
  cr_expect_str_eq(cubert_ocl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  cr_expect_str_eq(cubert_ocl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  cr_expect_str_eq(cubert_ocl_error_name(-12345), "CL_UNKNOWN_ERROR");
  const cl_int oom[] = {CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                        CL_OUT_OF_HOST_MEMORY};
  for (size_t i = 0; i < 3; ++i)
    cr_expect_eq(cubert_ocl_error_code(oom[i], CUBERT_CODE_GENERIC), CUBERT_CODE_OUT_OF_MEMORY,
                 "%s", cubert_ocl_error_name(oom[i]));
  cr_expect_eq(cubert_ocl_error_code(CL_BUILD_PROGRAM_FAILURE, CUBERT_CODE_GENERIC),
               CUBERT_CODE_COMPILATION);
  cr_expect_eq(cubert_ocl_error_code(CL_INVALID_BUFFER_SIZE, CUBERT_CODE_GENERIC),
               CUBERT_CODE_BUFFER_TOO_BIG);
  cr_expect_eq(cubert_ocl_error_code(CL_INVALID_WORK_GROUP_SIZE, CUBERT_CODE_GENERIC),
               CUBERT_CODE_UNITS);
  cr_expect_eq(cubert_ocl_error_code(CL_PROFILING_INFO_NOT_AVAILABLE, CUBERT_CODE_GENERIC),
               CUBERT_CODE_PROFILE_FAILED);
  /* Codes without a specific meaning take the caller's fallback. */
  cr_expect_eq(cubert_ocl_error_code(CL_INVALID_CONTEXT, CUBERT_CODE_IO_UNKNOWN),
               CUBERT_CODE_IO_UNKNOWN);
  cr_expect_eq(cubert_ocl_error_code(-12345, CUBERT_CODE_UNKNOWN), CUBERT_CODE_UNKNOWN);
  cubert_status s = cubert_ocl_status(CL_OUT_OF_RESOURCES, CUBERT_CODE_GENERIC,
                                      "clEnqueueNDRangeKernel of kernel '%s'", "add");
  cr_expect_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY);
  cr_expect(strstr(cubert_status_message(s), "kernel 'add'") != NULL, "%s",
            cubert_status_message(s));
  cr_expect(strstr(cubert_status_message(s), "CL_OUT_OF_RESOURCES (-5)") != NULL, "%s",
            cubert_status_message(s));
  cubert_status_free(s);
}

Test(opencl_device, storage_alloc_reports_sizes) {
  cubert_server *server = ocl_test_server();
  cubert_storage page;
  OCL_OK(server->vtable->storage_alloc(server, 4096, &page));
  cr_expect_not_null(page.native);
  cr_expect_null(page.host_ptr);
  cr_expect_eq(page.size, 4096);
  cubert_storage other;
  OCL_OK(server->vtable->storage_alloc(server, 0, &other));
  cr_expect_neq(other.id, page.id, "storage ids are unique");
  server->vtable->storage_free(server, &other);
  /* Larger than the device's max allocation: an error with the size, not a crash. */
  uint64_t huge = server->properties.memory.max_page_size * 2 + 4096;
  cubert_storage big;
  cubert_status s = server->vtable->storage_alloc(server, huge, &big);
  cr_assert_not_null(s, "allocating %llu bytes succeeded", (unsigned long long)huge);
  cubert_code code = cubert_status_code(s);
  cr_expect(code == CUBERT_CODE_BUFFER_TOO_BIG || code == CUBERT_CODE_OUT_OF_MEMORY, "%s",
            cubert_status_message(s));
  cr_expect_eq(cubert_status_size(s), huge);
  cubert_status_free(s);
  /* Pages left to destroy() are freed there. */
  ocl_test_server_destroy(server);
}

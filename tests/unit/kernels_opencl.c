/* The kernel library's OpenCL C sources, built and run through the raw OpenCL API on the
   first device of the first platform that has one (PoCL in CI; CUBERT_TEST_DEVICE=opencl:...
   picks another), independent of the OpenCL server: every source must build (checked and
   unchecked), every entry must exist with the argument count of the calling convention, and each
   kernel must match the scalar references of kernels_reference.h over 1-D, 2-D and 3-D launch
   shapes. Without an OpenCL platform every test skips and says why. */
#include <CL/cl.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/kernels.h"
#include "kernels_reference.h"
#include "opencl/device.h"
#include "opencl/program.h"
#include "test_device.h"

/* The kernel definitions also reference the CPU server's kernel services; this file never
   runs a CPU implementation, so weak stand-ins satisfy the linker until (and, being weak,
   after) the CPU server provides them. */
__attribute__((weak)) void cubert_cpu_fail(const cubert_cpu_ctx *ctx, const char *reason) {
  (void)ctx;
  (void)reason;
}
__attribute__((weak)) void cubert_cpu_sync_cube(const cubert_cpu_ctx *ctx) {
  (void)ctx;
}

/* ---- one device, one queue, programs cached per (source, checked) ------------------------- */

typedef struct program_entry {
  const char *source;
  int checked;
  cl_program program;
} program_entry;

static struct {
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  program_entry programs[16];
  size_t program_count;
} env;

#define CL_OK(call)                                                \
  do {                                                             \
    cl_int err_ = (call);                                          \
    cr_assert_eq(err_, CL_SUCCESS, "%s returned %d", #call, err_); \
  } while (0)

/* The device CUBERT_TEST_DEVICE names ("opencl:cpu", "opencl:1"; tests/test_device.h), through
   the OpenCL server's own enumeration; it must exist. */
static void ocl_open_test_device(const char *selector) {
  cubert_ocl_device_entry *entries = NULL;
  size_t count = 0, index = 0;
  cubert_status s = cubert_ocl_list_devices(&entries, &count);
  if (!s) s = cubert_ocl_select(cubert_test_device_spec(selector), entries, count, &index);
  cr_assert_null(s, "CUBERT_TEST_DEVICE=\"%s\": %s", selector, cubert_status_message(s));
  env.device = entries[index].device;
  free(entries);
}

/* Opens the device CUBERT_TEST_DEVICE names, else the first device of any type, or skips the
   test. */
static void ocl_open(void) {
  cubert_test_device_choice choice = cubert_test_device("opencl", "opencl");
  cr_assert_not_null(choice.selector, "%s", choice.error);
  if (choice.from_env) {
    ocl_open_test_device(choice.selector);
    cl_int err = CL_SUCCESS;
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    CL_OK(err);
    env.queue = clCreateCommandQueue(env.context, env.device, 0, &err);
    CL_OK(err);
    env.program_count = 0;
    return;
  }
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, NULL, &platform_count) != CL_SUCCESS || platform_count == 0)
    cr_skip_test(
        "no OpenCL platform (clGetPlatformIDs found none): the kernel library's "
        "OpenCL C was not compiled or run");
  cl_platform_id platforms[16];
  if (platform_count > 16) platform_count = 16;
  CL_OK(clGetPlatformIDs(platform_count, platforms, NULL));
  cl_uint p = 0;
  for (; p < platform_count; ++p)
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &env.device, NULL) == CL_SUCCESS) break;
  if (p == platform_count)
    cr_skip_test(
        "%u OpenCL platform(s) but no device: the kernel library's OpenCL C was not "
        "compiled or run",
        platform_count);
  cl_int err = CL_SUCCESS;
  env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
  CL_OK(err);
  env.queue = clCreateCommandQueue(env.context, env.device, 0, &err);
  CL_OK(err);
  env.program_count = 0;
}

static void ocl_close(void) {
  for (size_t i = 0; i < env.program_count; ++i) clReleaseProgram(env.programs[i].program);
  clReleaseCommandQueue(env.queue);
  clReleaseContext(env.context);
}

/* Whether the test device's platform is NVIDIA's (the OpenCL server's test, server.c). */
static int device_is_nvidia(void) {
  cl_platform_id platform = NULL;
  char name[256] = "";
  if (clGetDeviceInfo(env.device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) !=
          CL_SUCCESS ||
      clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL) != CL_SUCCESS)
    return 0;
  return strstr(name, "NVIDIA") != NULL;
}

/* Builds the kernel's source with the options the tests and the OpenCL server use (the
   definition's own, -cl-nv- ones only for NVIDIA's compiler: kernel.h), failing the test with
   the build log. */
static cl_program build(const cubert_kernel_def *def, int checked) {
  for (size_t i = 0; i < env.program_count; ++i)
    if (env.programs[i].source == def->opencl_source && env.programs[i].checked == checked)
      return env.programs[i].program;
  cr_assert_lt(env.program_count, sizeof env.programs / sizeof env.programs[0]);
  cl_int err = CL_SUCCESS;
  const char *source = def->opencl_source;
  cl_program program = clCreateProgramWithSource(env.context, 1, &source, NULL, &err);
  CL_OK(err);
  char options[512];
  snprintf(options, sizeof options, "-cl-std=CL1.2 -DCUBERT_MODE=%d %s", checked ? 0 : 2,
           def->opencl_options != NULL ? def->opencl_options : "");
  if (!device_is_nvidia()) cubert_ocl_drop_options(options, "-cl-nv-");
  err = clBuildProgram(program, 1, &env.device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    size_t log_size = 0;
    clGetProgramBuildInfo(program, env.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    char *log = calloc(log_size + 1, 1);
    clGetProgramBuildInfo(program, env.device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
    cr_assert_fail("%s (%s) failed to build with '%s' (error %d):\n%s", def->name,
                   def->opencl_entry, options, err, log);
  }
  env.programs[env.program_count++] = (program_entry){def->opencl_source, checked, program};
  return program;
}

static cl_kernel kernel_of(const cubert_kernel_def *def, int checked) {
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(build(def, checked), def->opencl_entry, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateKernel(%s) returned %d", def->opencl_entry, err);
  return kernel;
}

static cl_mem buffer_from(const void *data, size_t bytes) {
  cl_int err = CL_SUCCESS;
  /* 1 byte for empty buffers: OpenCL refuses size 0. */
  cl_mem mem = clCreateBuffer(env.context, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 1, bytes ? (void *)data : NULL, &err);
  CL_OK(err);
  return mem;
}

/* A launch shape: cube count and cube dim, as the OpenCL server maps them (global size =
   count * dim per axis, local size = dim). */
typedef struct shape {
  size_t count[3], dim[3];
} shape;

static size_t shape_units(const shape *s) {
  return s->count[0] * s->count[1] * s->count[2] * s->dim[0] * s->dim[1] * s->dim[2];
}

/* Calls the kernel as the OpenCL server calls a kernel-language kernel (cube_prelude.cl):
   argument 0 the info words behind a header (word count | first word << 32, validate tag,
   each buffer's size in bytes), argument 1 a validate record, then the buffers. Runs it over
   `s` and waits. */
static void launch(cl_kernel kernel, cl_mem *buffers, cl_uint buffer_count, const uint64_t *info,
                   cl_uint info_count, const shape *s) {
  uint64_t words[64] = {0};
  cr_assert_leq(2 + buffer_count + info_count, 64);
  words[0] = info_count | (uint64_t)(2 + buffer_count) << 32;
  for (cl_uint i = 0; i < buffer_count; ++i) {
    size_t bytes = 0;
    CL_OK(clGetMemObjectInfo(buffers[i], CL_MEM_SIZE, sizeof bytes, &bytes, NULL));
    words[2 + i] = bytes;
    CL_OK(clSetKernelArg(kernel, 2 + i, sizeof(cl_mem), &buffers[i]));
  }
  for (cl_uint i = 0; i < info_count; ++i) words[2 + buffer_count + i] = info[i];
  cl_mem info_mem = buffer_from(words, (2 + buffer_count + info_count) * sizeof(uint64_t));
  uint32_t record[16] = {0};
  cl_mem record_mem = buffer_from(record, sizeof record);
  CL_OK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &info_mem));
  CL_OK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &record_mem));
  size_t global[3];
  for (int d = 0; d < 3; ++d) global[d] = s->count[d] * s->dim[d];
  CL_OK(clEnqueueNDRangeKernel(env.queue, kernel, 3, NULL, global, s->dim, 0, NULL, NULL));
  CL_OK(clFinish(env.queue));
  clReleaseMemObject(info_mem);
  clReleaseMemObject(record_mem);
}

static void read_back(cl_mem mem, void *dst, size_t bytes) {
  if (bytes > 0) CL_OK(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, bytes, dst, 0, NULL, NULL));
}

/* ---- every source builds; every entry has the convention's arguments ----------------------- */

Test(kernels_opencl, every_source_builds_and_entries_match_convention) {
  ocl_open();
  /* info words + validate record + the buffers */
  static const struct {
    const cubert_kernel_def *def;
    cl_uint args;
  } expected[] = {
      {&cubert_kernel_noop, 2},
      {&cubert_kernel_fill_u32, 3},
      {&cubert_kernel_copy_strided, 4},
      {&cubert_kernel_add_f32, 5},
      {&cubert_kernel_add_i32, 5},
      {&cubert_kernel_mul_f32, 5},
      {&cubert_kernel_mul_i32, 5},
      {&cubert_kernel_saxpy_f32, 4},
      {&cubert_kernel_reduce_sum_f32, 4},
      {&cubert_kernel_matmul_simple_f32, 5},
      {&cubert_kernel_matmul_tile32x32_f32, 5},
      {&cubert_kernel_matmul_tile64x64_f32, 5},
      {&cubert_kernel_matmul_tile128x64_f32, 5},
      {&cubert_kernel_matmul_tile128x256c_f32, 5},
      {&cubert_kernel_matmul_vec8x32_f32, 5},
      {&cubert_kernel_matmul_big128k8_f32, 5},
      {&cubert_kernel_matmul_big128k16_f32, 5},
      {&cubert_kernel_matmul_big128k16mn_f32, 5},
      {&cubert_kernel_matmul_beta_f32, 4},
      {&cubert_kernel_matmul_simple_f64, 5},
      {&cubert_kernel_matmul_tile32x32_f64, 5},
      {&cubert_kernel_matmul_tile64x64_f64, 5},
      {&cubert_kernel_matmul_tile128x64_f64, 5},
      {&cubert_kernel_matmul_tile128x256c_f64, 5},
      {&cubert_kernel_matmul_beta_f64, 4},
  };
  size_t count = 0;
  for (const cubert_kernel_def *const *k = cubert_kernel_library; *k != NULL; ++k) {
    cr_assert_lt(count, sizeof expected / sizeof expected[0], "a kernel the test does not know");
    cr_assert_eq(*k, expected[count].def, "library entry %zu", count);
    for (int checked = 0; checked <= 1; ++checked) {
      cl_kernel kernel = kernel_of(*k, checked);
      cl_uint args = 0;
      CL_OK(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, NULL));
      cr_assert_eq(args, expected[count].args, "%s takes %u arguments, expected %u", (*k)->name,
                   args, expected[count].args);
      clReleaseKernel(kernel);
    }
    ++count;
  }
  cr_assert_eq(count, sizeof expected / sizeof expected[0]);
  ocl_close();
}

/* ---- elementwise ---------------------------------------------------------------------------- */

/* 1-D; a 1-D cube dim over a 2-D spread count; 2-D dims over a 3-D count; 3-D odd dims. */
static const shape elementwise_shapes[] = {
    {{17, 1, 1}, {64, 1, 1}},
    {{4, 5, 1}, {64, 1, 1}},
    {{3, 3, 2}, {8, 4, 1}},
    {{7, 2, 1}, {4, 2, 3}},
};

Test(kernels_opencl, elementwise_match_reference) {
  ocl_open();
  for (size_t k = 0; k < KREF_ELEMENTWISE_COUNT; ++k) {
    const kref_elementwise *c = &kref_elementwise_cases[k];
    cl_kernel kernel = kernel_of(c->def, 1);
    for (size_t s = 0; s < sizeof elementwise_shapes / sizeof elementwise_shapes[0]; ++s) {
      const shape *sh = &elementwise_shapes[s];
      /* Fewer elements than units: the bound check must hold off the rest (and the slack). */
      const uint64_t n = shape_units(sh) - 7, total = n + KREF_SLACK;
      uint32_t *got[3] = {0}, *want[3] = {0};
      cl_mem mems[3];
      for (uint32_t b = 0; b < c->buffer_count; ++b) {
        got[b] = malloc(total * 4);
        want[b] = malloc(total * 4);
      }
      kref_elementwise_init(c, got, n);
      kref_elementwise_init(c, want, n);
      kref_elementwise_run(c, want, n);
      for (uint32_t b = 0; b < c->buffer_count; ++b) mems[b] = buffer_from(got[b], total * 4);
      const uint64_t info[2] = {n, c->scalar};
      launch(kernel, mems, c->buffer_count, info, c->info_count, sh);
      for (uint32_t b = 0; b < c->buffer_count; ++b) {
        read_back(mems[b], got[b], total * 4);
        const int64_t diff = kref_first_diff(got[b], want[b], total);
        cr_assert_eq(diff, -1,
                     "%s shape %zu n=%llu: buffer %u element %lld is 0x%08x, expected 0x%08x",
                     c->def->name, s, (unsigned long long)n, b, (long long)diff,
                     diff >= 0 ? got[b][diff] : 0, diff >= 0 ? want[b][diff] : 0);
        clReleaseMemObject(mems[b]);
        free(got[b]);
        free(want[b]);
      }
    }
    clReleaseKernel(kernel);
  }
  ocl_close();
}

/* noop runs over a 3-D launch without arguments. */
Test(kernels_opencl, noop_runs) {
  ocl_open();
  cl_kernel kernel = kernel_of(&cubert_kernel_noop, 1);
  const shape s = {{2, 3, 4}, {4, 2, 1}};
  launch(kernel, NULL, 0, NULL, 0, &s);
  clReleaseKernel(kernel);
  ocl_close();
}

/* ---- copy_strided --------------------------------------------------------------------------- */

Test(kernels_opencl, copy_strided_matches_reference) {
  ocl_open();
  static const uint64_t elem_sizes[] = {1, 2, 3, 4, 8, 12};
  for (int checked = 0; checked <= 1; ++checked) {
    cl_kernel kernel = kernel_of(&cubert_kernel_copy_strided, checked);
    for (size_t k = 0; k < KREF_COPY_COUNT; ++k)
      for (size_t e = 0; e < sizeof elem_sizes / sizeof elem_sizes[0]; ++e) {
        const kref_copy *c = &kref_copy_cases[k];
        const uint64_t elem = elem_sizes[e];
        const uint64_t n = kref_copy_count(c), src_count = kref_copy_src_count(c);
        const size_t src_bytes = src_count * elem, dst_bytes = (n + KREF_SLACK) * elem;
        uint8_t *src = malloc(src_bytes), *got = malloc(dst_bytes), *want = malloc(dst_bytes);
        kref_fill_bytes(src, src_bytes, (uint32_t)elem);
        memset(got, 0xCD, dst_bytes);
        memset(want, 0xCD, dst_bytes);
        kref_copy_run(c, elem, src, want);
        cl_mem mems[2] = {buffer_from(src, src_bytes), buffer_from(got, dst_bytes)};
        uint64_t info[3 + 2 * CUBERT_KERNEL_COPY_MAX_RANK];
        const uint32_t info_count = kref_copy_info(c, elem, info);
        /* 1-D in cubes of 4 with spare units, spread over y on odd cases */
        shape s = {{n / 4 + 1, 1, 1}, {4, 1, 1}};
        if (k % 2) s = (shape){{2, n / 8 + 1, 1}, {4, 1, 1}};
        launch(kernel, mems, 2, info, info_count, &s);
        read_back(mems[1], got, dst_bytes);
        for (size_t i = 0; i < dst_bytes; ++i)
          cr_assert_eq(got[i], want[i], "%s elem %llu checked %d: byte %zu (element %llu)", c->what,
                       (unsigned long long)elem, checked, i, (unsigned long long)(i / elem));
        clReleaseMemObject(mems[0]);
        clReleaseMemObject(mems[1]);
        free(src);
        free(got);
        free(want);
      }
    clReleaseKernel(kernel);
  }
  ocl_close();
}

/* Checked builds leave units outside the shape alone even when n overstates it. */
Test(kernels_opencl, copy_strided_checked_ignores_units_outside_shape) {
  ocl_open();
  cl_kernel kernel = kernel_of(&cubert_kernel_copy_strided, 1);
  uint32_t src[6] = {1, 2, 3, 4, 5, 6}, dst[16];
  for (int i = 0; i < 16; ++i) dst[i] = KREF_SENTINEL;
  /* shape 2x3, but n = 16 claims more elements; and an empty inner dimension */
  const uint64_t info[7] = {2, 4, 16, 2, 3, 3, 1};
  cl_mem mems[2] = {buffer_from(src, sizeof src), buffer_from(dst, sizeof dst)};
  const shape s = {{4, 1, 1}, {4, 1, 1}};
  launch(kernel, mems, 2, info, 7, &s);
  read_back(mems[1], dst, sizeof dst);
  for (int i = 0; i < 6; ++i) cr_assert_eq(dst[i], src[i], "element %d", i);
  for (int i = 6; i < 16; ++i) cr_assert_eq(dst[i], KREF_SENTINEL, "element %d written", i);
  const uint64_t empty_inner[7] = {2, 4, 16, 2, 0, 3, 1};
  launch(kernel, mems, 2, empty_inner, 7, &s); /* must not divide by zero */
  read_back(mems[1], dst, sizeof dst);
  for (int i = 6; i < 16; ++i) cr_assert_eq(dst[i], KREF_SENTINEL, "element %d written", i);
  clReleaseMemObject(mems[0]);
  clReleaseMemObject(mems[1]);
  clReleaseKernel(kernel);
  ocl_close();
}

/* ---- reduce_sum_f32 ------------------------------------------------------------------------- */

static void check_reduce(cl_kernel kernel, const size_t dim[3], uint64_t n, uint64_t e,
                         size_t count_x, size_t count_y) {
  const uint64_t outputs = cubert_kernel_reduce_cube_count(n, e);
  const size_t launched = count_x * count_y;
  cr_assert_geq(launched, outputs, "test shape launches too few cubes");
  float *in = malloc(n * sizeof(float));
  float *got = malloc((launched + 1) * sizeof(float)),
        *want = malloc((launched + 1) * sizeof(float));
  for (uint64_t i = 0; i < n; ++i) in[i] = kref_reduce_input(i);
  for (size_t i = 0; i <= launched; ++i) got[i] = want[i] = -12345.0f;
  kref_reduce_run(in, n, e, want);
  cl_mem mems[2] = {buffer_from(in, n * sizeof(float)),
                    buffer_from(got, (launched + 1) * sizeof(float))};
  const uint64_t info[2] = {n, e};
  const shape s = {{count_x, count_y, 1}, {dim[0], dim[1], dim[2]}};
  launch(kernel, mems, 2, info, 2, &s);
  read_back(mems[1], got, (launched + 1) * sizeof(float));
  for (size_t c = 0; c <= launched; ++c)
    cr_assert_eq(got[c], want[c], "dim %zux%zux%zu n=%llu e=%llu cube %zu: %g, expected %g", dim[0],
                 dim[1], dim[2], (unsigned long long)n, (unsigned long long)e, c, (double)got[c],
                 (double)want[c]);
  clReleaseMemObject(mems[0]);
  clReleaseMemObject(mems[1]);
  free(in);
  free(got);
  free(want);
}

Test(kernels_opencl, reduce_sum_matches_reference) {
  ocl_open();
  cl_kernel kernel = kernel_of(&cubert_kernel_reduce_sum_f32, 1);
  size_t max_units = 0, max_dims[3] = {0};
  CL_OK(clGetKernelWorkGroupInfo(kernel, env.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_units,
                                 &max_units, NULL));
  CL_OK(
      clGetDeviceInfo(env.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_dims, max_dims, NULL));
  /* power of two, odd, 2-D, 3-D non power of two, the scratch size */
  const size_t dims[][3] = {{1, 1, 1}, {64, 1, 1},  {7, 1, 1},   {16, 4, 1},
                            {3, 5, 2}, {100, 1, 1}, {1024, 1, 1}};
  static const uint64_t shapes[][4] = {{1000, 256, 2, 2}, {77, 10, 3, 3}, {5000, 2500, 2, 1}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
    if (dims[d][0] * dims[d][1] * dims[d][2] > max_units || dims[d][0] > max_dims[0] ||
        dims[d][1] > max_dims[1] || dims[d][2] > max_dims[2]) {
      /* cr_log_warn would make Criterion exit 1; the 1024-unit case has a test of its own. */
      cr_log_info("cube dim %zux%zux%zu exceeds the device (%zu units): not run", dims[d][0],
                  dims[d][1], dims[d][2], max_units);
      continue;
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
      check_reduce(kernel, dims[d], shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
  }
  clReleaseKernel(kernel);
  ocl_close();
}

/* Cubes of more than twice the scratch size fold in several rounds (PoCL allows 4096 units;
   devices limited to 1024 skip with a reason). */
Test(kernels_opencl, reduce_sum_cube_larger_than_scratch) {
  ocl_open();
  cl_kernel kernel = kernel_of(&cubert_kernel_reduce_sum_f32, 1);
  size_t max_units = 0, max_dims[3] = {0};
  CL_OK(clGetKernelWorkGroupInfo(kernel, env.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_units,
                                 &max_units, NULL));
  CL_OK(
      clGetDeviceInfo(env.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_dims, max_dims, NULL));
  const size_t want_units = 2 * CUBERT_KERNEL_REDUCE_SCRATCH + 452;
  if (max_units < want_units || max_dims[0] < want_units) {
    clReleaseKernel(kernel);
    ocl_close();
    cr_skip_test(
        "the device runs at most %zu units per cube (%zu along x) for reduce_sum_f32; "
        "the fold over %zu units needs more",
        max_units, max_dims[0], want_units);
  }
  const size_t dim[3] = {want_units, 1, 1};
  check_reduce(kernel, dim, 6001, 3000, 3, 1);
  check_reduce(kernel, dim, 100, 100, 1, 1); /* most units have nothing to add */
  clReleaseKernel(kernel);
  ocl_close();
}

/* Interop (issue 13, item 3): the OpenCL objects behind an OpenCL client (cubert/opencl.h),
   mixed with cubert's own work on the same data in both directions, wrapped user buffers, and
   the host pointer behind a handle on the CPU server (cubert/cpu.h). Raw OpenCL calls go to
   the queue cubert hands out and rely on the ordering rules of the header only: no clFinish
   between cubert's work and the user's. */
#include <cubert/cpu.h>
#include <stdint.h>

#include "cts.h"
#ifdef CUBERT_WITH_OPENCL
#include <cubert/opencl.h>
#endif

TestSuite(interop, .init = cts_setup, .fini = cts_teardown);

static cubert_status fill(cubert_client *c, cubert_handle *h, uint32_t n, uint32_t value) {
  uint64_t info[2] = {n, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(n / 64, 1, 1),
                              cubert_cube_dim_new_3d(64, 1, 1), &args);
}

/* out = a + b with the library's f32 kernel over n elements. */
static void add_f32(cubert_client *c, cubert_handle *a, cubert_handle *b, cubert_handle *out,
                    uint64_t n) {
  cubert_handle *bufs[3] = {a, b, out};
  uint64_t info[1] = {n};
  cubert_kernel_args args = {bufs, 3, info, 1};
  ASSERT_OK(cubert_client_launch(c, &cubert_kernel_add_f32, cts_cubes(n, cts_dim()),
                                 cubert_cube_dim_new_3d(cts_dim(), 1, 1), &args));
}

/* ---- CPU server -------------------------------------------------------------------------- */

Test(interop, cpu_host_pointer_sees_cubert_writes_and_cubert_sees_its_writes) {
  if (!cts_is_cpu()) cr_skip_test("host pointers belong to the CPU server");
  enum { N = 4096 };
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 5, &other));
  cubert_handle *h = NULL, *v = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &h));
  /* written on another stream, read in place on this one: the call waits for it */
  ASSERT_OK(fill(other, h, N, 42));
  uint32_t *p = NULL;
  size_t size = 0;
  ASSERT_OK(cubert_cpu_handle_ptr(cts_client, h, (void **)&p, &size));
  cr_assert_eq(size, N * 4);
  for (int i = 0; i < N; ++i) cr_assert_eq(p[i], 42u, "p[%d]", i);
  /* host writes, then cubert work on the other stream reads them */
  for (int i = 0; i < N; ++i) p[i] = (uint32_t)i;
  cubert_handle *o = NULL;
  ASSERT_OK(cubert_client_empty(other, N * 4, &o));
  cubert_handle *bufs[3] = {h, h, o};
  uint64_t info[1] = {N};
  cubert_kernel_args args = {bufs, 3, info, 1};
  ASSERT_OK(cubert_client_launch(other, &cubert_kernel_add_i32,
                                 cubert_cube_count_new_3d(N / 64, 1, 1),
                                 cubert_cube_dim_new_3d(64, 1, 1), &args));
  uint32_t out[N];
  ASSERT_OK(cubert_client_read(other, o, out, sizeof out));
  for (int i = 0; i < N; ++i) cr_assert_eq(out[i], 2u * (uint32_t)i, "out[%d]", i);
  /* a view: its own bytes of the same memory */
  ASSERT_OK(cubert_handle_view(h, 400, 40, &v));
  uint32_t *pv = NULL;
  ASSERT_OK(cubert_cpu_handle_ptr(cts_client, v, (void **)&pv, NULL));
  cr_assert_eq(pv, p + 100);
  cubert_handle_release(v);
  cubert_handle_release(o);
  cubert_handle_release(h);
  cubert_client_release(other);
}

Test(interop, cpu_host_pointer_errors) {
  uint32_t x = 1;
  cubert_handle *h = cts_buffer(&x, 4);
  void *p = (void *)1;
  if (!cts_is_cpu()) {
    ASSERT_CODE(cubert_cpu_handle_ptr(cts_client, h, &p, NULL), CUBERT_CODE_INVALID_ARGUMENT,
                "client is on the 'opencl' server");
    cr_assert_null(p);
    cubert_handle_release(h);
    return;
  }
  ASSERT_CODE(cubert_cpu_handle_ptr(cts_client, NULL, &p, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "handle is NULL");
  ASSERT_CODE(cubert_cpu_handle_ptr(cts_client, h, NULL, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out_ptr is NULL");
  ASSERT_CODE(cubert_cpu_handle_ptr(NULL, h, &p, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "client is NULL");
  cubert_client *second = NULL;
  ASSERT_OK(cubert_client_create("cpu!private", &second));
  ASSERT_CODE(cubert_cpu_handle_ptr(second, h, &p, NULL), CUBERT_CODE_NOT_FOUND,
              "another device instance");
  cubert_client_release(second);
  cubert_handle_release(h);
  ASSERT_CODE(cubert_cpu_handle_ptr(cts_client, h, &p, NULL), CUBERT_CODE_NOT_FOUND,
              "handle was released");
}

/* ---- OpenCL server ----------------------------------------------------------------------- */

#ifdef CUBERT_WITH_OPENCL

Test(interop, opencl_calls_on_a_cpu_client_name_the_server) {
  if (!cts_is_cpu()) cr_skip_test("needs a client of another server");
  cl_context ctx = NULL;
  cl_command_queue q = NULL;
  ASSERT_CODE(cubert_opencl_context(cts_client, &ctx, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "cubert_opencl_context: client is on the 'cpu' server");
  ASSERT_CODE(cubert_opencl_queue(cts_client, &q), CUBERT_CODE_INVALID_ARGUMENT, "not 'opencl'");
  uint32_t x = 0;
  cubert_handle *h = cts_buffer(&x, 4), *w = NULL;
  cl_mem mem = NULL;
  ASSERT_CODE(cubert_opencl_handle_mem(cts_client, h, &mem, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "client is on the 'cpu' server");
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, (cl_mem)h, 4, &w), CUBERT_CODE_INVALID_ARGUMENT,
              "client is on the 'cpu' server");
  cubert_handle_release(h);
}

static const char *raw_source =
    "__kernel void affine(__global float *buf, ulong offset, ulong n, float a, float b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) buf[offset + i] = a * buf[offset + i] + b;\n"
    "}\n";

typedef struct raw {
  cl_context ctx;
  cl_device_id dev;
  cl_command_queue queue;
  cl_program program;
  cl_kernel kernel;
} raw;

static raw raw_open(cubert_client *c) {
  raw r = {0};
  ASSERT_OK(cubert_opencl_context(c, &r.ctx, &r.dev));
  ASSERT_OK(cubert_opencl_queue(c, &r.queue));
  cr_assert_not_null(r.ctx);
  cr_assert_not_null(r.dev);
  cr_assert_not_null(r.queue);
  cl_int err = CL_SUCCESS;
  r.program = clCreateProgramWithSource(r.ctx, 1, &raw_source, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(clBuildProgram(r.program, 1, &r.dev, "", NULL, NULL), CL_SUCCESS);
  r.kernel = clCreateKernel(r.program, "affine", &err);
  cr_assert_eq(err, CL_SUCCESS);
  return r;
}

static void raw_close(raw *r) {
  clReleaseKernel(r->kernel);
  clReleaseProgram(r->program);
}

/* Enqueues buf[offset/4 + i] = a * buf[..] + b for i < n on `queue`. */
static void raw_affine(raw *r, cl_command_queue queue, cl_mem mem, size_t offset, cl_ulong n,
                       float a, float b) {
  cr_assert_eq(offset % 4, 0);
  cl_ulong off = offset / 4;
  clSetKernelArg(r->kernel, 0, sizeof(cl_mem), &mem);
  clSetKernelArg(r->kernel, 1, sizeof(off), &off);
  clSetKernelArg(r->kernel, 2, sizeof(n), &n);
  clSetKernelArg(r->kernel, 3, sizeof(a), &a);
  clSetKernelArg(r->kernel, 4, sizeof(b), &b);
  size_t global = (size_t)(n + 63) / 64 * 64, local = 64;
  cr_assert_eq(clEnqueueNDRangeKernel(queue, r->kernel, 1, NULL, &global, &local, 0, NULL, NULL),
               CL_SUCCESS);
}

Test(interop, opencl_raw_commands_and_cubert_work_on_the_same_data_in_both_directions) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  enum { N = 3001 };
  raw r = raw_open(cts_client);
  float *x = malloc(N * 4), *y = malloc(N * 4), *out = malloc(N * 4);
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 97);
    y[i] = (float)(i % 13) - 6.0f;
  }
  /* a handle inside a shared page: an offset, probably non-zero */
  cubert_handle *pad = NULL, *hx = NULL, *hy = NULL, *ho = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4096, &pad));
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &hx));
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &hy));
  ASSERT_OK(cubert_client_empty(cts_client, N * 4, &ho));
  /* raw -> cubert: raw writes (non-blocking) and a raw kernel, then a cubert launch and read */
  cl_mem mx = NULL, my = NULL;
  size_t ox = 0, oy = 0;
  ASSERT_OK(cubert_opencl_handle_mem(cts_client, hx, &mx, &ox));
  ASSERT_OK(cubert_opencl_handle_mem(cts_client, hy, &my, &oy));
  cr_assert_eq(clEnqueueWriteBuffer(r.queue, mx, CL_FALSE, ox, N * 4, x, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(clEnqueueWriteBuffer(r.queue, my, CL_FALSE, oy, N * 4, y, 0, NULL, NULL),
               CL_SUCCESS);
  raw_affine(&r, r.queue, mx, ox, N, 2.0f, 1.0f); /* x' = 2x + 1 */
  add_f32(cts_client, hx, hy, ho, N);             /* o = x' + y */
  cts_read(ho, out, N * 4);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(out[i], 2.0f * x[i] + 1.0f + y[i], "raw->cubert out[%d] = %g", i, out[i]);
  /* cubert -> raw: a cubert launch, then a raw kernel and a raw copy into a user buffer */
  add_f32(cts_client, hx, hx, ho, N); /* o = 2x' */
  cl_mem mo = NULL;
  size_t oo = 0;
  ASSERT_OK(cubert_opencl_handle_mem(cts_client, ho, &mo, &oo));
  raw_affine(&r, r.queue, mo, oo, N, 1.0f, -3.0f); /* o' = o - 3 */
  cl_int err = CL_SUCCESS;
  cl_mem user = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, N * 4, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(clEnqueueCopyBuffer(r.queue, mo, user, oo, 0, N * 4, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(clEnqueueReadBuffer(r.queue, user, CL_TRUE, 0, N * 4, out, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; ++i) {
    float xp = 2.0f * x[i] + 1.0f;
    cr_assert_eq(out[i], 2.0f * xp - 3.0f, "cubert->raw out[%d] = %g", i, out[i]);
  }
  /* and cubert reads what the raw kernel left in its handle */
  cts_read(ho, out, N * 4);
  for (int i = 0; i < N; ++i) cr_assert_eq(out[i], 2.0f * (2.0f * x[i] + 1.0f) - 3.0f, "o'[%d]", i);
  clReleaseMemObject(user);
  cubert_handle_release(pad), cubert_handle_release(hx), cubert_handle_release(hy);
  cubert_handle_release(ho);
  raw_close(&r);
  free(x), free(y), free(out);
}

Test(interop, opencl_handle_mem_orders_after_another_streams_writes) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  enum { N = 1 << 16 };
  cubert_client *writer = NULL, *reader = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 21, &writer));
  ASSERT_OK(cubert_client_with_stream(cts_client, 22, &reader));
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(writer, N * 4, &h));
  uint32_t *out = malloc(N * 4);
  for (uint32_t round = 1; round <= 4; ++round) {
    ASSERT_OK(fill(writer, h, N, round * 1000)); /* queued on the writer's stream only */
    cl_command_queue q = NULL;
    cl_mem mem = NULL;
    size_t off = 0;
    ASSERT_OK(cubert_opencl_queue(reader, &q));
    ASSERT_OK(cubert_opencl_handle_mem(reader, h, &mem, &off));
    cr_assert_eq(clEnqueueReadBuffer(q, mem, CL_TRUE, off, N * 4, out, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < N; ++i) cr_assert_eq(out[i], round * 1000, "round %u out[%d]", round, i);
  }
  free(out);
  cubert_handle_release(h);
  cubert_client_release(writer);
  cubert_client_release(reader);
}

Test(interop, opencl_wrapped_user_buffer_runs_library_kernels) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  enum { N = 2049 };
  raw r = raw_open(cts_client);
  float *a = malloc(N * 4), *out = malloc(N * 4);
  for (int i = 0; i < N; ++i) a[i] = (float)i * 0.25f;
  cl_int err = CL_SUCCESS;
  cl_mem user = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, N * 4 + 64, NULL, &err);
  cl_mem user_out = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, N * 4, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  /* filled on cubert's queue, non-blocking: ordered before cubert's use by rule 1 */
  cr_assert_eq(clEnqueueWriteBuffer(r.queue, user, CL_FALSE, 0, N * 4, a, 0, NULL, NULL),
               CL_SUCCESS);
  cubert_handle *w = NULL, *wo = NULL, *v = NULL;
  ASSERT_OK(cubert_opencl_wrap_mem(cts_client, user, N * 4, &w));
  ASSERT_OK(cubert_opencl_wrap_mem(cts_client, user_out, N * 4, &wo));
  cr_assert_eq(cubert_handle_size(w), N * 4);
  add_f32(cts_client, w, w, wo, N); /* a library kernel reads and writes user buffers */
  cts_read(wo, out, N * 4);
  for (int i = 0; i < N; ++i) cr_assert_eq(out[i], 2.0f * a[i], "wo[%d]", i);
  /* cubert writes, the user reads with raw OpenCL on the handed-out queue */
  ASSERT_OK(cubert_client_write(cts_client, w, 8, a, 16));
  cl_mem back = NULL;
  size_t off = 1;
  ASSERT_OK(cubert_opencl_handle_mem(cts_client, w, &back, &off));
  cr_assert_eq(back, user);
  cr_assert_eq(off, 0);
  float four[6];
  cr_assert_eq(clEnqueueReadBuffer(r.queue, user, CL_TRUE, 0, sizeof four, four, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(four[0], a[0]);
  cr_assert_eq(four[1], a[1]);
  for (int i = 0; i < 4; ++i) cr_assert_eq(four[2 + i], a[i], "written [%d]", i);
  /* a view of a wrapped buffer: cubert reads part of it */
  ASSERT_OK(cubert_handle_view(w, 400, 40, &v));
  float part[10];
  cts_read(v, part, sizeof part);
  for (int i = 0; i < 10; ++i) cr_assert_eq(part[i], a[100 + i], "view[%d]", i);
  /* cubert releases its reference once the handles are gone and the device synced */
  cl_uint refs = 0;
  clGetMemObjectInfo(user, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_geq(refs, 2, "cubert holds a reference while the handle lives (%u)", refs);
  cubert_handle_release(v);
  cubert_handle_release(w);
  cubert_handle_release(wo);
  ASSERT_OK(cubert_client_sync(cts_client));
  clGetMemObjectInfo(user, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_eq(refs, 1, "cubert still holds the user's buffer (%u references)", refs);
  cr_assert_eq(clReleaseMemObject(user), CL_SUCCESS);
  cr_assert_eq(clReleaseMemObject(user_out), CL_SUCCESS);
  raw_close(&r);
  free(a), free(out);
}

Test(interop, opencl_errors_name_the_argument) {
  if (cts_is_cpu()) cr_skip_test("OpenCL server only");
  cl_context ctx = NULL;
  cl_device_id dev = NULL;
  ASSERT_OK(cubert_opencl_context(cts_client, &ctx, &dev));
  ASSERT_CODE(cubert_opencl_context(cts_client, NULL, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out_context and out_device are both NULL");
  ASSERT_CODE(cubert_opencl_queue(cts_client, NULL), CUBERT_CODE_INVALID_ARGUMENT, "out_queue");
  ASSERT_CODE(cubert_opencl_queue(NULL, (cl_command_queue[1]){0}), CUBERT_CODE_INVALID_ARGUMENT,
              "client is NULL");
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 256, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cubert_handle *w = (cubert_handle *)1;
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, mem, 257, &w), CUBERT_CODE_INVALID_ARGUMENT,
              "size is 257 bytes but mem holds 256 bytes");
  cr_assert_null(w);
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, NULL, 4, &w), CUBERT_CODE_INVALID_ARGUMENT,
              "mem is NULL");
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, mem, 4, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out is NULL");
  cl_buffer_region region = {0, 64};
  cl_mem sub =
      clCreateSubBuffer(mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  cr_assert_eq(err, CL_SUCCESS);
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, sub, 4, &w), CUBERT_CODE_INVALID_ARGUMENT,
              "sub-buffer");
  cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
  ASSERT_CODE(cubert_opencl_wrap_mem(cts_client, foreign, 4, &w), CUBERT_CODE_INVALID_ARGUMENT,
              "another cl_context");
  clReleaseMemObject(foreign);
  clReleaseContext(other);
  uint32_t x = 0;
  cubert_handle *h = cts_buffer(&x, 4);
  cl_mem out = NULL;
  ASSERT_CODE(cubert_opencl_handle_mem(cts_client, h, NULL, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "out_mem is NULL");
  ASSERT_CODE(cubert_opencl_handle_mem(cts_client, NULL, &out, NULL), CUBERT_CODE_INVALID_ARGUMENT,
              "handle is NULL");
  cubert_handle_release(h);
  ASSERT_CODE(cubert_opencl_handle_mem(cts_client, h, &out, NULL), CUBERT_CODE_NOT_FOUND,
              "handle was released");
  /* a size-0 wrap is a valid, empty handle */
  ASSERT_OK(cubert_opencl_wrap_mem(cts_client, mem, 0, &w));
  cr_assert_eq(cubert_handle_size(w), 0);
  cubert_handle_release(w);
  clReleaseMemObject(sub);
  clReleaseMemObject(mem);
}

#endif /* CUBERT_WITH_OPENCL */

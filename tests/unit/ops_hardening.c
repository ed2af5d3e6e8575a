/* Operations, views and validate mode on the library's own kernels (issue 22, items 4, 5 and
   7): in-place detection by memory, views that break the element alignment, released handles
   and NULL clients, validate-mode reports from the reduce and strided-copy kernels, and error
   texts that name the argument and the limit. The CPU server always; the OpenCL cases run on
   the first OpenCL device and are skipped without one. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(expr)                                                       \
  do {                                                                 \
    cubert_status s_ = (expr);                                         \
    cr_assert(s_ == NULL, "%s: %s", #expr, cubert_status_message(s_)); \
  } while (0)

/* `expr` fails with `code` and a message that contains every string of the NULL-ended list. */
static void expect_error(cubert_status s, cubert_code code, const char *what, ...) {
  cr_assert(s != NULL, "%s succeeded, expected %s", what, cubert_code_name(code));
  const char *msg = cubert_status_message(s);
  cr_expect_eq(cubert_status_code(s), code, "%s: expected %s, got %s: %s", what,
               cubert_code_name(code), cubert_code_name(cubert_status_code(s)), msg);
  va_list ap;
  va_start(ap, what);
  for (const char *text; (text = va_arg(ap, const char *)) != NULL;)
    cr_expect(strstr(msg, text) != NULL, "%s: the message lacks \"%s\": %s", what, text, msg);
  va_end(ap);
  cubert_status_free(s);
}
#define ERR(expr, code, ...) expect_error((expr), (code), #expr, __VA_ARGS__, (const char *)NULL)

static cubert_client *client;

static void setup(void) {
  /* a fresh tuner (a private instance, no disk cache): the first softmax measures candidates */
  setenv("CUBERT_AUTOTUNE_CACHE", "0", 1);
  OK(cubert_client_create("cpu!private", &client));
}

static void teardown(void) {
  cubert_client_release(client);
}

TestSuite(ops_hardening, .init = setup, .fini = teardown);

static cubert_tensor f32_2d(cubert_handle *h, uint64_t rows, uint64_t cols) {
  cubert_tensor t = {.handle = h, .rank = 2, .elem_size = 4, .dtype = CUBERT_DTYPE_F32};
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

static cubert_handle *upload(cubert_client *c, const void *data, size_t bytes) {
  cubert_handle *h = NULL;
  OK(cubert_client_create_buffer(c, data, bytes, &h));
  return h;
}

/* ---- item 4: in place by memory ----------------------------------------------------------- */

Test(ops_hardening, softmax_through_a_second_handle_over_the_same_bytes_is_applied_once) {
  enum { R = 8, C = 100 };
  float x[R * C], y[R * C];
  for (int i = 0; i < R * C; ++i) x[i] = (float)((i * 37) % 23) / 5.0f - 2.0f;
  cubert_handle *h = upload(client, x, sizeof x), *alias = NULL;
  OK(cubert_handle_view(h, 0, sizeof x, &alias));
  cubert_tensor in = f32_2d(h, R, C), out = f32_2d(alias, R, C);
  OK(cubert_op_softmax(client, &in, &out));
  OK(cubert_client_read(client, h, y, sizeof y));
  for (int r = 0; r < R; ++r) {
    double m = -INFINITY, sum = 0;
    for (int k = 0; k < C; ++k) m = fmax(m, x[r * C + k]);
    for (int k = 0; k < C; ++k) sum += exp(x[r * C + k] - m);
    for (int k = 0; k < C; ++k) {
      double want = exp(x[r * C + k] - m) / sum;
      cr_assert(fabs(y[r * C + k] - want) < 1e-5,
                "row %d, column %d: %g, softmax once gives %g (applied more than once?)", r, k,
                (double)y[r * C + k], want);
    }
  }
  cubert_handle_release(alias);
  cubert_handle_release(h);
}

Test(ops_hardening, softmax_over_overlapping_views_is_refused) {
  float x[2 * 64] = {0};
  cubert_handle *h = upload(client, x, sizeof x), *shifted = NULL;
  OK(cubert_handle_view(h, 16, sizeof x - 16, &shifted));
  cubert_tensor in = f32_2d(h, 1, 64), out = f32_2d(shifted, 1, 64);
  ERR(cubert_op_softmax(client, &in, &out), CUBERT_CODE_INVALID_ARGUMENT, "softmax: out",
      "overlaps in", "very same view");
  cubert_handle_release(shifted);
  cubert_handle_release(h);
}

/* ---- item 4: views that break the element alignment -------------------------------------- */

Test(ops_hardening, an_op_on_a_view_inside_an_element_is_refused_with_offset_and_alignment) {
  float x[65] = {0};
  cubert_handle *h = upload(client, x, sizeof x), *view = NULL, *out = NULL;
  OK(cubert_handle_view(h, 2, 64 * 4, &view));
  OK(cubert_client_empty(client, 64 * 4, &out));
  cubert_tensor a = f32_2d(view, 1, 64), o = f32_2d(out, 1, 64);
  ERR(cubert_op_unary(client, CUBERT_UNARY_NEG, &a, &o), CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
      "in.handle starts at byte offset 2", "4-byte alignment");
  ERR(cubert_op_copy(client, &o, &a), CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
      "out.handle starts at byte offset 2", "4-byte alignment");
  cubert_handle_release(out);
  cubert_handle_release(view);
  cubert_handle_release(h);
}

Test(ops_hardening, a_kernel_launch_on_a_view_inside_an_element_is_refused) {
  float x[66] = {0};
  cubert_handle *h = upload(client, x, sizeof x), *view = NULL;
  OK(cubert_handle_view(h, 6, 64 * 4, &view));
  cubert_handle *bufs[3] = {view, view, view};
  uint64_t info[1] = {64};
  cubert_kernel_args args = {bufs, 3, info, 1};
  ERR(cubert_client_launch(client, &cubert_kernel_add_f32, cubert_cube_count_new_1d(1),
                           cubert_cube_dim_new_3d(64, 1, 1), &args),
      CUBERT_CODE_UNSUPPORTED_IO_OPERATION, "add_f32", "byte offset 6", "4-byte alignment");
  cubert_handle_release(view);
  cubert_handle_release(h);
}

/* ---- item 4: released handles and NULL clients ------------------------------------------- */

Test(ops_hardening, a_released_handle_is_not_found_and_a_null_client_invalid) {
  float x[16] = {0};
  cubert_handle *h = upload(client, x, sizeof x), *o = upload(client, x, sizeof x);
  cubert_tensor in = f32_2d(h, 4, 4), out = f32_2d(o, 4, 4);
  ERR(cubert_op_softmax(NULL, &in, &out), CUBERT_CODE_INVALID_ARGUMENT, "softmax: client is NULL");
  ERR(cubert_op_copy(NULL, &in, &out), CUBERT_CODE_INVALID_ARGUMENT, "copy: client is NULL");
  ERR(cubert_op_unary(NULL, CUBERT_UNARY_NEG, &in, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "client is NULL");
  ERR(cubert_op_binary(NULL, CUBERT_BINARY_ADD, &in, &in, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "client is NULL");
  ERR(cubert_op_reduce(NULL, CUBERT_REDUCE_SUM, &in, 1, 1, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "client is NULL");
  ERR(cubert_op_cast(NULL, &in, &out), CUBERT_CODE_INVALID_ARGUMENT, "client is NULL");
  cubert_handle_release(h);
  ERR(cubert_op_softmax(client, &in, &out), CUBERT_CODE_NOT_FOUND,
      "softmax: in.handle was released");
  ERR(cubert_op_copy(client, &out, &in), CUBERT_CODE_NOT_FOUND, "copy: out.handle was released");
  ERR(cubert_op_unary(client, CUBERT_UNARY_NEG, &in, &out), CUBERT_CODE_NOT_FOUND,
      "in.handle was released");
  cubert_handle_release(o);
}

/* ---- item 5: validate mode on the library's kernels ------------------------------------- */

/* reduce_sum_f32 told n = 2000 over an input of 1000 floats: validate mode reports it. */
static void reduce_past_its_input(cubert_client *c) {
  float x[1000];
  for (int i = 0; i < 1000; ++i) x[i] = 1.0f;
  cubert_handle *in = upload(c, x, sizeof x), *out = NULL;
  OK(cubert_client_empty(c, 8 * 4, &out));
  cubert_handle *bufs[2] = {in, out};
  uint64_t info[2] = {2000, 256};
  cubert_kernel_args args = {bufs, 2, info, 2};
  OK(cubert_client_launch_mode(c, &cubert_kernel_reduce_sum_f32, cubert_cube_count_new_1d(8),
                               cubert_cube_dim_new_3d(64, 1, 1), &args, CUBERT_EXECUTION_VALIDATE));
  ERR(cubert_client_sync(c), CUBERT_CODE_SERVER_UNHEALTHY, "reduce_sum_f32", "validate mode",
      "holds 1000 elements");
  cubert_handle_release(out);
  cubert_handle_release(in);
}

/* copy_strided with rank 9 (the maximum is 8) and all its info words: validate mode reports
   it, naming the info word, its value and the limit. */
static void copy_rank_above_the_maximum(cubert_client *c, const cubert_kernel_def *kernel) {
  enum { RANK = CUBERT_KERNEL_COPY_MAX_RANK + 1 };
  uint8_t x[64] = {0};
  cubert_handle *src = upload(c, x, sizeof x), *dst = NULL;
  OK(cubert_client_empty(c, sizeof x, &dst));
  cubert_handle *bufs[2] = {src, dst};
  uint64_t info[3 + 2 * RANK];
  info[0] = RANK;
  info[1] = 1;
  info[2] = 1;
  for (int d = 0; d < RANK; ++d) {
    info[3 + d] = 1;
    info[3 + RANK + d] = 1;
  }
  cubert_kernel_args args = {bufs, 2, info, 3 + 2 * RANK};
  OK(cubert_client_launch_mode(c, kernel, cubert_cube_count_new_1d(1),
                               cubert_cube_dim_new_3d(1, 1, 1), &args, CUBERT_EXECUTION_VALIDATE));
  char limit[64];
  snprintf(limit, sizeof limit, "info word 0 = %d, above the kernel's limit of %d", RANK,
           CUBERT_KERNEL_COPY_MAX_RANK);
  ERR(cubert_client_sync(c), CUBERT_CODE_SERVER_UNHEALTHY, "validate mode", limit);
  cubert_handle_release(dst);
  cubert_handle_release(src);
}

/* reduce_inner / reduce_outer (kernels.h) over 1 output and 1 split, with in of 1000 floats
   and in_idx of 10 ints: the reduced length R, its stride and the flags as given. */
static cubert_status reduce_axis_launch(cubert_client *c, const cubert_kernel_def *k, uint64_t R,
                                        uint64_t stride, uint64_t flags) {
  float x[1000];
  for (int i = 0; i < 1000; ++i) x[i] = 1.0f;
  int32_t idx[10] = {0};
  cubert_handle *in = upload(c, x, sizeof x), *in_idx = upload(c, idx, sizeof idx), *part = NULL,
                *part_idx = NULL, *out = NULL;
  OK(cubert_client_empty(c, 64, &part));
  OK(cubert_client_empty(c, 64, &part_idx));
  OK(cubert_client_empty(c, 64, &out));
  cubert_handle *bufs[5] = {in, in_idx, part, part_idx, out};
  /* kr 1 (one kept axis of length 1), R, stride, offsets 0, 1 split of R, flags, divisor R,
     1 row, then the kept length 1 and its strides 0 */
  uint64_t info[13] = {1, R, stride, 0, 0, 1, R, flags, R, 1, 1, 0, 0};
  cubert_kernel_args args = {bufs, 5, info, 13};
  OK(cubert_client_launch_mode(c, k, cubert_cube_count_new_1d(1), cubert_cube_dim_new_3d(64, 1, 1),
                               &args, CUBERT_EXECUTION_VALIDATE));
  cubert_status s = cubert_client_sync(c);
  cubert_handle_release(out);
  cubert_handle_release(part_idx);
  cubert_handle_release(part);
  cubert_handle_release(in_idx);
  cubert_handle_release(in);
  return s;
}

/* The axis kernels' own bound hid two launches from validate mode: a walk whose last element
   lies past 2^64 (its wrapped index fell inside `in`) and an in_idx shorter than the walk. */
static void reduce_axis_hidden_violations(cubert_client *c) {
  const uint64_t huge = (uint64_t)1 << 63; /* 3 elements 2^63 apart: the last wraps to 0 */
  ERR(reduce_axis_launch(c, &cubert_kernel_reduce_inner_sum_f32, 3, huge, 0),
      CUBERT_CODE_SERVER_UNHEALTHY, "reduce_inner_sum_f32", "validate mode",
      "element 18446744073709551615 of buffer 0");
  ERR(reduce_axis_launch(c, &cubert_kernel_reduce_outer_sum_f32, 3, huge, 0),
      CUBERT_CODE_SERVER_UNHEALTHY, "reduce_outer_sum_f32", "element 18446744073709551615");
  ERR(reduce_axis_launch(c, &cubert_kernel_reduce_inner_argmax_f32, 100, 1, 1),
      CUBERT_CODE_SERVER_UNHEALTHY, "reduce_inner_argmax_f32", "element 99 of buffer 1", "in_idx",
      "holds 10 elements");
  /* within bounds: no report */
  OK(reduce_axis_launch(c, &cubert_kernel_reduce_inner_argmax_f32, 10, 1, 1));
}

static cubert_client *opencl_or_skip(void) {
  cubert_client *c = NULL;
  cubert_status s = cubert_client_create("opencl", &c);
  if (s) {
    cubert_status_free(s);
    cr_skip_test("no OpenCL device");
  }
  return c;
}

Test(ops_hardening, reduce_past_its_input_is_reported_in_validate_mode_cpu) {
  reduce_past_its_input(client);
}

Test(ops_hardening, reduce_past_its_input_is_reported_in_validate_mode_opencl) {
  cubert_client *c = opencl_or_skip();
  reduce_past_its_input(c);
  cubert_client_release(c);
}

Test(ops_hardening, reduce_axis_walks_past_2_64_or_in_idx_are_reported_in_validate_mode_cpu) {
  reduce_axis_hidden_violations(client);
}

Test(ops_hardening, reduce_axis_walks_past_2_64_or_in_idx_are_reported_in_validate_mode_opencl) {
  cubert_client *c = opencl_or_skip();
  reduce_axis_hidden_violations(c);
  cubert_client_release(c);
}

Test(ops_hardening, copy_strided_rank_above_the_maximum_is_reported_in_validate_mode) {
  /* the portable body on the CPU server; the OpenCL one when there is a device */
  copy_rank_above_the_maximum(client, &cubert_kernel_copy_strided_portable);
  cubert_client *c = NULL;
  cubert_status s = cubert_client_create("opencl", &c);
  if (s) {
    cubert_status_free(s);
    return;
  }
  copy_rank_above_the_maximum(c, &cubert_kernel_copy_strided);
  cubert_client_release(c);
}

/* ---- item 7: error texts name the argument and the limit -------------------------------- */

Test(ops_hardening, reduce_errors_name_the_axis_and_the_limit) {
  float x[4] = {0};
  cubert_handle *h = upload(client, x, sizeof x), *o = upload(client, x, sizeof x);
  cubert_tensor in = f32_2d(h, 4, 0), out = f32_2d(o, 4, 1);
  ERR(cubert_op_reduce(client, CUBERT_REDUCE_MAX, &in, 1, 1, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "axis 1 of in (in.shape[1])", "0 elements long", "at least 1");
  ERR(cubert_op_reduce(client, (cubert_reduce_op)99, &in, 1, 1, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "op is 99", "(0..");
  ERR(cubert_op_unary(client, (cubert_unary_op)99, &in, &out), CUBERT_CODE_INVALID_ARGUMENT,
      "op is 99", "(0..");
  ERR(cubert_tensor_permute(&in, NULL, &out), CUBERT_CODE_INVALID_ARGUMENT, "axes is NULL",
      "rank 2");
  cubert_handle_release(o);
  cubert_handle_release(h);
}

Test(ops_hardening, to_client_errors_name_the_offset_and_the_size) {
  /* an earlier failure on the source's stream comes back from to_client's read of src */
  cubert_client *dst = NULL;
  OK(cubert_client_create("cpu!private", &dst));
  float x[1000] = {0};
  cubert_handle *src = upload(client, x, sizeof x), *part = NULL, *out = NULL;
  OK(cubert_client_empty(client, 8 * 4, &part));
  cubert_handle *bufs[2] = {src, part};
  uint64_t info[2] = {2000, 256};
  cubert_kernel_args args = {bufs, 2, info, 2};
  OK(cubert_client_launch_mode(client, &cubert_kernel_reduce_sum_f32, cubert_cube_count_new_1d(8),
                               cubert_cube_dim_new_3d(64, 1, 1), &args, CUBERT_EXECUTION_VALIDATE));
  cubert_status s = cubert_client_to_client_range(client, src, 64, 128, dst, &out);
  cr_assert(s != NULL, "to_client succeeded over a failed stream");
  const char *msg = cubert_status_message(s);
  cr_expect(strstr(msg, "128 bytes at offset 64 of src (4000 bytes)") != NULL, "%s", msg);
  cubert_status_free(s);
  cubert_handle_release(out);
  cubert_handle_release(part);
  cubert_handle_release(src);
  cubert_client_release(dst);
}

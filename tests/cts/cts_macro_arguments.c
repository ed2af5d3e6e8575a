/* The function-like macros of the public headers take every expression a function call takes:
   compound literals with commas inside (`(uint32_t[2]){1, 0}`), which the preprocessor splits
   at the comma, reached the type-check macros of cubert/ops.h and cubert/client.h as extra
   arguments ("macro passed 4 arguments, but takes just 3"). Each macro is called here with such
   an argument, so a macro that splits them again fails the build; the results are checked. */
#include <math.h>

#include "cts.h"

TestSuite(macro_arguments, .init = cts_setup, .fini = cts_teardown);

/* A 2 x 2 tensor of `dtype` holding `data` (row-major), made with write_tensor's macro. */
static cubert_tensor tensor_2x2(cubert_dtype dtype, const void *data) {
  cubert_layout_desc desc = {.rank = 2, .shape = {2, 2}, .dtype = dtype};
  cubert_tensor t;
  ASSERT_OK(cubert_client_empty_tensor(cts_client, &desc, &t));
  if (data) ASSERT_OK(cubert_client_write_tensor(cts_client, &t, data, 16));
  return t;
}

/* The tensor's 4 elements, read with read_tensor's macro and a literal size argument. */
static void read4(const cubert_tensor *t, void *back) {
  ASSERT_OK(cubert_client_read_tensor(cts_client, t, back, (size_t[2]){16, 0}[0]));
}

static cubert_status permute_twice(const cubert_tensor *a, cubert_tensor *out) {
  cubert_tensor once;
  CUBERT_RETURN_IF_ERROR(cubert_tensor_permute(a, (uint32_t[2]){1, 0}, &once));
  CUBERT_RETURN_IF_ERROR((cubert_status[2]){NULL, NULL}[0]);
  return cubert_tensor_permute(&once, (const uint32_t[2]){1, 0}, out);
}

Test(macro_arguments, views_and_descriptors_take_compound_literals) {
  cubert_tensor a = tensor_2x2(CUBERT_DTYPE_F32, NULL);
  ASSERT_OK(cubert_client_write_tensor(cts_client, &a, (float[4]){1, 2, 3, 4}, 16));
  cubert_tensor p;
  ASSERT_OK(cubert_tensor_permute(&a, (uint32_t[2]){1, 0}, &p));
  cr_assert_eq(p.strides[0], 1);
  cr_assert_eq(p.strides[1], 2);
  cubert_tensor back_again;
  ASSERT_OK(permute_twice(&a, &back_again));
  cr_assert_eq(back_again.strides[0], 2);
  cubert_copy_desc d;
  ASSERT_OK(cubert_copy_desc_from_tensor(&(cubert_tensor){.handle = a.handle,
                                                          .rank = 1,
                                                          .shape = {2},
                                                          .strides = {2},
                                                          .elem_size = 4,
                                                          .dtype = CUBERT_DTYPE_F32,
                                                          .offset = 1},
                                         &d));
  cr_assert_eq(d.handle, a.handle);
  cr_assert_eq(d.shape[0], 2);
  cr_assert_eq(d.strides[0], 2);
  cr_assert_eq(d.offset, 1);
  float col[2] = {0};
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, col, (size_t[2]){8, 0}[0]));
  cr_assert(col[0] == 2 && col[1] == 4, "column 1 is %g %g", col[0], col[1]);
  ASSERT_OK(cubert_client_write_tensor(cts_client, &d, (float[2]){20, 40}, 8));
  float got[4];
  read4(&a, got);
  cr_assert(got[0] == 1 && got[1] == 20 && got[2] == 3 && got[3] == 40, "%g %g %g %g", got[0],
            got[1], got[2], got[3]);
  cr_assert_eq(CUBERT_KERNEL_REDUCE_AXIS_INFO((uint32_t[2]){2, 3}[0]), 16);
  cr_assert_eq(CUBERT_KERNEL_SOFTMAX_INFO((uint32_t[2]){2, 3}[1]), 16);
  cubert_tensor_release(&a);
}

Test(macro_arguments, operations_take_compound_literals) {
  cubert_tensor a = tensor_2x2(CUBERT_DTYPE_F32, (float[4]){1, 2, 3, 4});
  cubert_tensor o = tensor_2x2(CUBERT_DTYPE_F32, NULL);
  float got[4];
  ASSERT_OK(cubert_op_permute(cts_client, &a, (uint32_t[2]){1, 0}, &o));
  read4(&o, got);
  cr_assert(got[0] == 1 && got[1] == 3 && got[2] == 2 && got[3] == 4, "transpose: %g %g %g %g",
            got[0], got[1], got[2], got[3]);
  /* a's transpose as a literal view. */
  ASSERT_OK(cubert_op_copy(cts_client,
                           &(cubert_tensor){.handle = a.handle,
                                            .rank = 2,
                                            .shape = {2, 2},
                                            .strides = {1, 2},
                                            .elem_size = 4,
                                            .dtype = CUBERT_DTYPE_F32},
                           &o));
  read4(&o, got);
  cr_assert(got[1] == 3 && got[2] == 2, "copy of the transposed view: %g %g", got[1], got[2]);
  ASSERT_OK(cubert_op_unary(cts_client, (cubert_unary_op[2]){CUBERT_UNARY_NEG, 0}[0], &a, &o));
  read4(&o, got);
  cr_assert(got[0] == -1 && got[3] == -4, "neg: %g %g", got[0], got[3]);
  ASSERT_OK(cubert_op_binary(cts_client, CUBERT_BINARY_ADD, &a,
                             &(cubert_tensor){.handle = a.handle,
                                              .rank = 2,
                                              .shape = {2, 2},
                                              .strides = {2, 1},
                                              .elem_size = 4,
                                              .dtype = CUBERT_DTYPE_F32},
                             &o));
  read4(&o, got);
  cr_assert(got[0] == 2 && got[3] == 8, "a + a: %g %g", got[0], got[3]);
  ASSERT_OK(cubert_op_matmul(cts_client, (double[2]){1.0, 2.0}[1], &a, &a, 0.0, &o));
  read4(&o, got);
  cr_assert(got[0] == 14 && got[1] == 20 && got[2] == 30 && got[3] == 44, "2 a.a: %g %g %g %g",
            got[0], got[1], got[2], got[3]);
  ASSERT_OK(cubert_op_softmax(cts_client, &a, &o));
  read4(&o, got);
  cr_assert(fabsf(got[0] - 0.26894142f) < 1e-6f && fabsf(got[1] - 0.73105858f) < 1e-6f,
            "softmax of (1, 2): %g %g", got[0], got[1]);

  cubert_layout_desc row = {.rank = 1, .shape = {2}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor sums;
  ASSERT_OK(cubert_client_empty_tensor(cts_client, &row, &sums));
  ASSERT_OK(cubert_op_reduce(cts_client, CUBERT_REDUCE_SUM, &a, (uint32_t[2]){1, 0}[0], 0, &sums));
  float s[2];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &sums, s, sizeof s));
  cr_assert(s[0] == 3 && s[1] == 7, "row sums: %g %g", s[0], s[1]);

  cubert_tensor i = tensor_2x2(CUBERT_DTYPE_I32, NULL);
  ASSERT_OK(cubert_op_cast(cts_client, &a,
                           &(cubert_tensor){.handle = i.handle,
                                            .rank = 2,
                                            .shape = {2, 2},
                                            .strides = {2, 1},
                                            .elem_size = 4,
                                            .dtype = CUBERT_DTYPE_I32}));
  int32_t ints[4];
  read4(&i, ints);
  cr_assert(ints[0] == 1 && ints[3] == 4, "cast: %d %d", ints[0], ints[3]);
  cubert_tensor_release(&i);
  cubert_tensor_release(&sums);
  cubert_tensor_release(&o);
  cubert_tensor_release(&a);
}

/* read/write_tensor pick their function by the type of the second argument, which the macro
   must see whole: a tensor or descriptor written as a compound literal goes in parentheses (the
   one argument of the public macros that must, docs/OPS.md says why). */
Test(macro_arguments, tensor_io_takes_a_parenthesised_literal_view) {
  cubert_tensor a = tensor_2x2(CUBERT_DTYPE_F32, (float[4]){1, 2, 3, 4});
  float col[2] = {0};
  ASSERT_OK(cubert_client_read_tensor(cts_client,
                                      (&(cubert_tensor){.handle = a.handle,
                                                        .rank = 1,
                                                        .shape = {2},
                                                        .strides = {2},
                                                        .elem_size = 4,
                                                        .dtype = CUBERT_DTYPE_F32,
                                                        .offset = 1}),
                                      col, (size_t[2]){8, 0}[0]));
  cr_assert(col[0] == 2 && col[1] == 4, "column 1 is %g %g", col[0], col[1]);
  cubert_copy_desc d;
  ASSERT_OK(cubert_copy_desc_from_tensor(&a, &d));
  ASSERT_OK(cubert_client_write_tensor(cts_client,
                                       (&(cubert_copy_desc){.handle = d.handle,
                                                            .rank = 1,
                                                            .shape = {2},
                                                            .strides = {1},
                                                            .elem_size = 4,
                                                            .offset = 2}),
                                       (float[2]){30, 40}, 8));
  float got[4];
  read4(&a, got);
  cr_assert(got[0] == 1 && got[1] == 2 && got[2] == 30 && got[3] == 40, "%g %g %g %g", got[0],
            got[1], got[2], got[3]);
  cubert_tensor_release(&a);
}

/* ---- the kernel language (tests/kernels/macro_arguments.cube.c) ------------------------------
   Every function-like macro of cubert/cube.h called with compound literals whose commas the
   preprocessor splits (and OpenCL vector literals): the file builds on both sides, and the
   results match the host's. */
extern const cubert_kernel_def macro_args_unit, macro_args_store_unit, macro_args_fiber,
    macro_args_phased;

static cubert_handle *int_buffer(const int32_t *data, size_t count) {
  return cts_buffer(data, count * sizeof *data);
}

Test(macro_arguments, kernel_language_unit_macros_take_compound_literals) {
  enum { units = 16 };
  float in[units], out[units * 8], vec[units * 8];
  for (int u = 0; u < units; ++u) in[u] = (float)(u - 5) * 0.5f;
  const int32_t counts0[6] = {0, 0, INT32_MAX, -1, 0, 0};
  const uint32_t flags0[1] = {0};
  cubert_handle *b[5] = {cts_buffer(in, sizeof in), NULL, NULL, int_buffer(counts0, 6),
                         cts_buffer(flags0, sizeof flags0)};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof out, &b[1]));
  ASSERT_OK(cubert_client_empty(cts_client, sizeof vec, &b[2]));
  const uint64_t info[2] = {units, cubert_kernel_info_f32(3.5f)};
  const cubert_kernel_args args = {b, 5, info, 2};
  ASSERT_OK(cubert_client_launch(cts_client, &macro_args_unit, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(units, 1, 1), &args));
  cts_read(b[1], out, sizeof out);
  cts_read(b[2], vec, sizeof vec);
  int32_t counts[6];
  uint32_t flags[1];
  cts_read(b[3], counts, sizeof counts);
  cts_read(b[4], flags, sizeof flags);
  for (int u = 0; u < units; ++u) {
    const float x = in[u];
    const float want[8] = {x + 3.5f,
                           2 * x,
                           fminf(x, 2.0f),
                           fmaxf(-x, -1.0f),
                           fminf(fmaxf(x, -1.0f), 1.0f),
                           (float)abs((int32_t)x - 3),
                           1.0f + 16.0f + 0.5f,
                           17.0f};
    /* (rsqrt need not be exact on OpenCL: a few ulp) */
    for (int j = 0; j < 8; ++j)
      cr_assert(fabsf(out[u * 8 + j] - want[j]) <= 1e-5f * fmaxf(1.0f, fabsf(want[j])),
                "unit %d, result %d: %g, host %g", u, j, out[u * 8 + j], want[j]);
    const float vwant[8] = {2 * x + 0.5f, 2.25f, 4.125f, 9.5f, 2 * x + 1.5f, 4.25f, 7.125f, 13.5f};
    for (int j = 0; j < 8; ++j)
      cr_assert(vec[u * 8 + j] == vwant[j], "unit %d, vector lane %d: %g, host %g", u, j,
                vec[u * 8 + j], vwant[j]);
  }
  const int32_t cwant[6] = {units, -2 * units, 0, units - 1, 7, 55};
  for (int j = 0; j < 6; ++j)
    cr_assert_eq(counts[j], cwant[j], "atomic %d: %d, host %d", j, counts[j], cwant[j]);
  cr_assert_eq(flags[0], units, "ATOMIC_MAX on u32: %u", flags[0]);
  for (int i = 0; i < 5; ++i) cubert_handle_release(b[i]);
}

Test(macro_arguments, kernel_language_store_unit_and_float_atomic_take_compound_literals) {
  enum { n = 100 };
  float in[n], out[n], sum[1] = {0};
  for (int i = 0; i < n; ++i) in[i] = (float)i;
  cubert_handle *b[3] = {cts_buffer(in, sizeof in), NULL, cts_buffer(sum, sizeof sum)};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof out, &b[1]));
  const cubert_kernel_args args = {b, 3, NULL, 0};
  ASSERT_OK(cubert_client_launch(cts_client, &macro_args_store_unit,
                                 cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(25, 1, 1), &args));
  cts_read(b[1], out, sizeof out);
  cts_read(b[2], sum, sizeof sum);
  for (int i = 0; i < n; ++i) cr_assert(out[i] == 2.0f * i, "out[%d] = %g", i, out[i]);
  cr_assert(sum[0] == 4950.0f, "sum %g, host 4950", sum[0]);
  for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
}

/* Reduce and scan with a literal value, and (fiber form) shared atomics with literal arguments. */
static void check_cube_macros(const cubert_kernel_def *k, int shared_atomics) {
  static const uint32_t dims[] = {1, 7, 64};
  enum { cubes = 3 };
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
    const uint32_t dim = dims[d], n = dim * cubes;
    int32_t *in = malloc(n * sizeof *in), *out = calloc((size_t)n * 4 + cubes * 4, sizeof *out);
    for (uint32_t i = 0; i < n; ++i) in[i] = (int32_t)((i * 37u) % 101u) - 50;
    cubert_handle *b[2] = {int_buffer(in, n), NULL};
    ASSERT_OK(cubert_client_empty(cts_client, ((size_t)n * 4 + cubes * 4) * sizeof *out, &b[1]));
    const cubert_kernel_args args = {b, 2, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, k, cubert_cube_count_new_3d(cubes, 1, 1),
                                   cubert_cube_dim_new_3d(dim, 1, 1), &args));
    cts_read(b[1], out, ((size_t)n * 4 + cubes * 4) * sizeof *out);
    for (uint32_t c = 0; c < cubes; ++c) {
      int32_t sum = 0, mx = INT32_MIN, incl = 0;
      for (uint32_t u = 0; u < dim; ++u) {
        sum += in[c * dim + u];
        mx = in[c * dim + u] > mx ? in[c * dim + u] : mx;
      }
      for (uint32_t u = 0; u < dim; ++u) {
        const int32_t *r = out + (size_t)(c * dim + u) * 4;
        const int32_t excl = incl;
        incl += in[c * dim + u];
        const int32_t want[4] = {sum, mx, incl, excl};
        for (int j = 0; j < 4; ++j)
          cr_assert_eq(r[j], want[j], "%s, dim %u, cube %u, unit %u, result %d: %d, host %d",
                       k->name, dim, c, u, j, r[j], want[j]);
      }
      if (shared_atomics) {
        const int32_t *s = out + (size_t)n * 4 + c * 4;
        const int32_t want[4] = {(int32_t)dim, (int32_t)dim - 1, (int32_t)dim, 1};
        for (int j = 0; j < 4; ++j)
          cr_assert_eq(s[j], want[j], "%s, dim %u, cube %u, shared result %d: %d, host %d", k->name,
                       dim, c, j, s[j], want[j]);
      }
    }
    cubert_handle_release(b[0]);
    cubert_handle_release(b[1]);
    free(in);
    free(out);
  }
}

Test(macro_arguments, kernel_language_cube_macros_take_compound_literals) {
  check_cube_macros(&macro_args_fiber, 1);
  check_cube_macros(&macro_args_phased, 0);
}

/* Conformance of the kernel language's named scalars, dynamic shared memory, 64-bit atomics and
   buffers of structs on every server (kernels: tests/kernels/lang_features.cube.c, lang_fp64
   and atomics64_unavailable), with the host's checks of each: typed scalar setters, the scalar
   words a launch must pass, the dynamic size against the declaration and the device. */
#include <stdint.h>
#include <string.h>

#include "cts.h"
#include "kernels/lang_particle.h"

TestSuite(lang_features, .init = cts_setup, .fini = cts_teardown);

extern const cubert_kernel_def scalars_axpy, scalars_fiber, scalars_phased, scalars_only,
    dynamic_reverse_fiber, dynamic_reverse_phased, dynamic_overflow, atomics64, particles_step,
    atomic_add_f64, atomics64_unavailable, shared_atomics64, shared_atomics64_unavailable;

/* Launches with `options` and syncs; returns the first error. */
static cubert_status run_with(const cubert_kernel_def *k, cubert_cube_count count,
                              cubert_cube_dim dim, cubert_handle **buffers, uint32_t buffer_count,
                              const uint64_t *info, uint32_t info_count,
                              const cubert_launch_options *options) {
  cubert_kernel_args a = {buffers, buffer_count, info, info_count};
  cubert_status s = cubert_client_launch_with(cts_client, k, count, dim, &a, options);
  if (s) return s;
  return cubert_client_sync(cts_client);
}

static void assert_message(cubert_status s, cubert_code code, const char *const *parts) {
  cr_assert_not_null(s);
  const char *m = cubert_status_message(s);
  cr_assert_eq(cubert_status_code(s), code, "%s", m);
  for (; *parts; ++parts) cr_assert(strstr(m, *parts) != NULL, "no \"%s\" in: %s", *parts, m);
  cubert_status_free(s);
}

/* ---- named scalars ------------------------------------------------------------------------- */

Test(lang_features, named_scalars_by_type_and_position) {
  enum { N = 300 };
  float x[N + 8], y[N + 8];
  for (int i = 0; i < N + 8; ++i) x[i] = (float)i, y[i] = -7.0f;
  cubert_handle *b[2] = {cts_buffer(x, sizeof x), cts_buffer(y, sizeof y)};
  uint64_t info[4] = {0};
  uint32_t n_at = 99;
  ASSERT_OK(cubert_kernel_scalar_find(&scalars_axpy, "n", &n_at));
  cr_assert_eq(n_at, 2);
  ASSERT_OK(cubert_kernel_scalar_set_f32(&scalars_axpy, info, 4, 0, 2.5f));
  ASSERT_OK(cubert_kernel_scalar_set_i32(&scalars_axpy, info, 4, 1, -3));
  ASSERT_OK(cubert_kernel_scalar_set_u64(&scalars_axpy, info, 4, n_at, N));
  info[3] = cubert_kernel_info_f32(0.25f);
  cubert_status s = run_with(&scalars_axpy, cts_cubes(N + 8, 64), cubert_cube_dim_new_3d(64, 1, 1),
                             b, 2, info, 4, NULL);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b[1], y, sizeof y);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(y[i], 2.5f * (float)i - 3.0f + 0.25f, "y[%d] = %g", i, (double)y[i]);
  for (int i = N; i < N + 8; ++i) cr_assert_eq(y[i], -7.0f, "units past n stay idle: y[%d]", i);
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

static void check_scalar_forms(const cubert_kernel_def *k) {
  const uint32_t cubes = 3, dim = 16;
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, cubes * dim * 8, &out));
  uint64_t info[2] = {0};
  ASSERT_OK(cubert_kernel_scalar_set_i64(k, info, 2, 0, -((int64_t)1 << 40)));
  ASSERT_OK(cubert_kernel_scalar_set_u8(k, info, 2, 1, 200));
  cubert_status s = run_with(k, cubert_cube_count_new_3d(cubes, 1, 1),
                             cubert_cube_dim_new_3d(dim, 1, 1), &out, 1, info, 2, NULL);
  cr_assert_null(s, "%s: %s", k->name, cubert_status_message(s));
  int64_t got[3 * 16];
  cts_read(out, got, sizeof got);
  for (uint32_t i = 0; i < cubes * dim; ++i)
    cr_assert_eq(got[i], -((int64_t)1 << 40) + 200 * (int64_t)(i % dim), "%s: unit %u", k->name, i);
  cubert_handle_release(out);
}

Test(lang_features, named_scalars_in_cube_and_phased_kernels) {
  check_scalar_forms(&scalars_fiber);
  check_scalar_forms(&scalars_phased);
}

Test(lang_features, scalar_setters_check_type_position_and_words) {
  uint64_t info[3] = {11, 12, 13};
  assert_message(cubert_kernel_scalar_set_u32(&scalars_axpy, info, 3, 0, 1),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"kernel \"scalars_axpy\" scalar 0 \"alpha\" is float, not "
                                  "uint32_t: set it with cubert_kernel_scalar_set_f32",
                                  NULL});
  assert_message(cubert_kernel_scalar_set_f32(&scalars_axpy, info, 3, 3, 1.0f),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"kernel \"scalars_axpy\" has 3 named scalars (positions 0 .. 2: "
                                  "alpha: float, offset: int32_t, n: uint64_t); got position 3",
                                  NULL});
  assert_message(cubert_kernel_scalar_set_u64(&scalars_axpy, info, 2, 2, 5),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"info has 2 words, but kernel \"scalars_axpy\" scalar 2 \"n\"",
                                  "pass at least 3 words", NULL});
  assert_message(
      cubert_kernel_scalar_set_i32(&atomics64_unavailable, info, 3, 0, 1),
      CUBERT_CODE_INVALID_ARGUMENT,
      (const char *[]){"kernel \"atomics64_unavailable\" declares no named scalars", NULL});
  uint32_t at = 0;
  assert_message(cubert_kernel_scalar_find(&scalars_axpy, "beta", &at),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"no named scalar \"beta\"; its scalars are: alpha: float", NULL});
  cr_assert_eq(info[0], 11, "a refused store leaves the words");
  cr_assert_eq(info[1], 12);
  cr_assert_eq(info[2], 13);
  /* A store writes the value's bytes and clears the rest of the word. */
  ASSERT_OK(cubert_kernel_scalar_set_i32(&scalars_axpy, info, 3, 1, -1));
  cr_assert_eq(info[1], 0xffffffffu);
  ASSERT_OK(cubert_kernel_scalar_set_i16(&scalars_only, info, 3, 0, -2));
  cr_assert_eq(info[0], 0xfffeu);
}

Test(lang_features, a_launch_without_the_scalar_words_is_refused) {
  const uint64_t info[1] = {1};
  assert_message(run_with(&scalars_only, cubert_cube_count_new_3d(1, 1, 1),
                          cubert_cube_dim_new_3d(1, 1, 1), NULL, 0, info, 1, NULL),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"kernel \"scalars_only\" declares 2 named scalars (a: int16_t, "
                                  "b: uint16_t), info words 0 .. 1, but the launch passes 1 info "
                                  "words",
                                  NULL});
}

/* ---- dynamic shared memory ----------------------------------------------------------------- */

static void check_dynamic_reverse(const cubert_kernel_def *k, uint32_t elements) {
  enum { CUBES = 3, DIM = 32 };
  float x[CUBES * DIM], y[CUBES * DIM];
  for (int i = 0; i < CUBES * DIM; ++i) x[i] = (float)(i * 3);
  cubert_handle *b[2] = {cts_buffer(x, sizeof x), cts_buffer(x, sizeof x)};
  const cubert_launch_options o = {.dynamic_shared_bytes = elements * sizeof(float)};
  cubert_status s = run_with(k, cubert_cube_count_new_3d(CUBES, 1, 1),
                             cubert_cube_dim_new_3d(DIM, 1, 1), b, 2, NULL, 0, &o);
  cr_assert_null(s, "%s: %s", k->name, cubert_status_message(s));
  cts_read(b[1], y, sizeof y);
  for (uint32_t c = 0; c < CUBES; ++c)
    for (uint32_t u = 0; u < DIM; ++u) {
      const uint32_t from = DIM - 1 - u;
      const float want = from < elements ? x[c * DIM + from] : -1.0f;
      cr_assert_eq(y[c * DIM + u], want, "%s with %u elements: cube %u unit %u: %g", k->name,
                   elements, c, u, (double)y[c * DIM + u]);
    }
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(lang_features, dynamic_shared_sized_at_launch) {
  check_dynamic_reverse(&dynamic_reverse_fiber, 32);
  check_dynamic_reverse(&dynamic_reverse_fiber, 20);
  check_dynamic_reverse(&dynamic_reverse_phased, 32);
  check_dynamic_reverse(&dynamic_reverse_phased, 9);
  check_dynamic_reverse(&dynamic_reverse_phased, 0);
}

Test(lang_features, dynamic_shared_is_checked_against_the_kernel_and_the_device) {
  float x[32] = {0};
  cubert_handle *b[2] = {cts_buffer(x, sizeof x), cts_buffer(x, sizeof x)};
  const cubert_cube_count one = cubert_cube_count_new_3d(1, 1, 1);
  const cubert_cube_dim dim = cubert_cube_dim_new_3d(32, 1, 1);
  cubert_launch_options o = {.dynamic_shared_bytes = 6};
  assert_message(run_with(&dynamic_reverse_fiber, one, dim, b, 2, NULL, 0, &o),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"kernel \"dynamic_reverse_fiber\" dynamic shared array \"tile\" "
                                  "(float) takes whole 4-byte elements, got 6 bytes",
                                  NULL});
  const uint64_t max = cubert_client_properties(cts_client)->hardware.max_shared_memory_size;
  o.dynamic_shared_bytes = (max / 4) * 4; /* with the 4-byte static struct, 64 bytes too many */
  assert_message(run_with(&dynamic_reverse_fiber, one, dim, b, 2, NULL, 0, &o),
                 CUBERT_CODE_SHARED_MEMORY,
                 (const char *[]){"kernel \"dynamic_reverse_fiber\" dynamic shared array \"tile\"",
                                  "after 64 bytes of static shared memory exceed the maximum",
                                  "pass at most", NULL});
  o.dynamic_shared_bytes = 64;
  const uint64_t dt[1] = {0};
  assert_message(run_with(&particles_step, one, dim, b, 2, dt, 1, &o), CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"kernel \"particles_step\" declares no (dynamic_shared, type, "
                                  "name) array, but the launch gives it 64 bytes",
                                  NULL});
  /* A size within the limit runs (each unit writes its element only if it is in range). */
  o.dynamic_shared_bytes = ((max - 64) / 8) * 4;
  if (o.dynamic_shared_bytes > (1u << 20)) o.dynamic_shared_bytes = 1u << 20;
  cubert_status s = run_with(&dynamic_reverse_fiber, one, dim, b, 2, NULL, 0, &o);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

/* The sanitizer's bounds of a cube's shared memory cover the dynamic array (the CPU server's
   validate mode; OpenCL does not check shared memory). */
Test(lang_features, validate_reports_a_write_past_the_dynamic_array_on_the_cpu) {
  if (!cts_is_cpu()) cr_skip_test("shared memory is checked by the CPU server's sanitizer");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 32 * 4, &out));
  cubert_launch_options o = {.mode = CUBERT_EXECUTION_VALIDATE, .dynamic_shared_bytes = 32 * 4};
  cubert_status s = run_with(&dynamic_overflow, cubert_cube_count_new_3d(1, 1, 1),
                             cubert_cube_dim_new_3d(32, 1, 1), &out, 1, NULL, 0, &o);
  cr_assert_null(s, "32 elements for 32 units: %s", cubert_status_message(s));
  uint32_t got[32];
  cts_read(out, got, sizeof got);
  for (uint32_t u = 0; u < 32; ++u) cr_assert_eq(got[u], (u + 1) % 32);
  o.dynamic_shared_bytes = 16 * 4;
  s = run_with(&dynamic_overflow, cubert_cube_count_new_3d(1, 1, 1),
               cubert_cube_dim_new_3d(32, 1, 1), &out, 1, NULL, 0, &o);
  cr_assert_not_null(s, "16 elements for 32 units: the sanitizer reports the write past them");
  const char *m = cubert_status_message(s);
  cr_assert(strstr(m, "kernel \"dynamic_overflow\" (validate mode, sanitizer)") != NULL, "%s", m);
  cubert_status_free(s);
  cubert_handle_release(out);
}

/* On OpenCL the dynamic array is a __local argument of exactly the launch's bytes, so the
   OpenCL side's checker, Oclgrind (CUBERT_OCLGRIND=1), reports the write past it: the ctest
   cts_dynamic_shared_oclgrind runs this test so and passes on Oclgrind's report of an invalid
   local-memory write (the CPU server's sanitizer: the test above). */
Test(lang_features, oclgrind_reports_a_write_past_the_dynamic_array) {
  const char *on = getenv("CUBERT_OCLGRIND");
  if (!on || strcmp(on, "1") != 0)
    cr_skip_test("set CUBERT_OCLGRIND=1 (ctest: cts_dynamic_shared_oclgrind)");
  cr_assert(cts_is_opencl());
  cr_assert(strstr(cubert_client_properties(cts_client)->name, "Oclgrind"),
            "not Oclgrind's device");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 32 * 4, &out));
  const cubert_launch_options o = {.dynamic_shared_bytes = 16 * 4};
  cubert_status s = run_with(&dynamic_overflow, cubert_cube_count_new_3d(1, 1, 1),
                             cubert_cube_dim_new_3d(32, 1, 1), &out, 1, NULL, 0, &o);
  cr_assert_null(s, "the launch runs; Oclgrind reports on stderr: %s", cubert_status_message(s));
  cubert_handle_release(out);
}

/* ---- 64-bit atomics ------------------------------------------------------------------------ */

Test(lang_features, atomics_on_64_bit_elements) {
  const uint32_t n = 500;
  const int64_t big = (int64_t)1 << 40;
  int64_t c[7] = {0, 5, 0, 0, 0, 0, 0};
  uint64_t u[4] = {0, 0, UINT64_MAX, UINT64_MAX};
  cubert_handle *b[2] = {cts_buffer(c, sizeof c), cts_buffer(u, sizeof u)};
  uint64_t info[1];
  ASSERT_OK(cubert_kernel_scalar_set_u32(&atomics64, info, 1, 0, n));
  cubert_status s =
      run_with(&atomics64, cts_cubes(n, 64), cubert_cube_dim_new_3d(64, 1, 1), b, 2, info, 1, NULL);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b[0], c, sizeof c);
  cts_read(b[1], u, sizeof u);
  cr_assert_eq(c[0], (int64_t)n * (big + 1));
  cr_assert_eq(c[1], 5 - (int64_t)n * big);
  cr_assert_eq(c[2], -(int64_t)(n - 1) * big);
  cr_assert_eq(c[3], (int64_t)(n - 1) * big);
  cr_assert_eq(c[4], 7 * big, "compare-and-swap from 0, once");
  cr_assert(c[5] >= big && c[5] < big + n, "one unit's exchange: %lld", (long long)c[5]);
  cr_assert_eq(c[6], 3 * (int64_t)n, "a compare-and-swap loop per unit: %lld", (long long)c[6]);
  cr_assert_eq(u[0], (uint64_t)n << 33);
  cr_assert_eq(u[1], (uint64_t)(n - 1) << 32);
  cr_assert_eq(u[2], (uint64_t)5 << 32);
  cr_assert(u[3] < n, "the first unit's compare-and-swap wins: %llu", (unsigned long long)u[3]);
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(lang_features, atomic_add_f64_where_the_device_has_fp64) {
  if (!(cubert_client_properties(cts_client)->features & CUBERT_FEATURE_FP64))
    cr_skip_test("the device has no fp64");
  const uint32_t n = 1000;
  double sum = 1.0;
  cubert_handle *b = cts_buffer(&sum, sizeof sum);
  uint64_t info[2];
  ASSERT_OK(cubert_kernel_scalar_set_f64(&atomic_add_f64, info, 2, 0, 0.5));
  ASSERT_OK(cubert_kernel_scalar_set_u32(&atomic_add_f64, info, 2, 1, n));
  cubert_status s = run_with(&atomic_add_f64, cts_cubes(n, 64), cubert_cube_dim_new_3d(64, 1, 1),
                             &b, 1, info, 2, NULL);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b, &sum, sizeof sum);
  cr_assert_eq(sum, 1.0 + 0.5 * n * (n + 1) / 2, "%.17g", sum);
  cubert_handle_release(b);
}

Test(lang_features, shared_atomics_on_64_bit_values) {
  const uint32_t cubes = 3, dims[2] = {64, 37};
  const int64_t big = (int64_t)1 << 40;
  for (int d = 0; d < 2; ++d) {
    const int64_t n = dims[d];
    cubert_handle *out = NULL;
    ASSERT_OK(cubert_client_empty(cts_client, cubes * 9 * 8, &out));
    cubert_status s = run_with(&shared_atomics64, cubert_cube_count_new_3d(cubes, 1, 1),
                               cubert_cube_dim_new_3d(dims[d], 1, 1), &out, 1, NULL, 0, NULL);
    cr_assert_null(s, "%s", cubert_status_message(s));
    int64_t got[3 * 9];
    cts_read(out, got, sizeof got);
    for (uint32_t c = 0; c < cubes; ++c) {
      const int64_t *v = got + c * 9;
      cr_assert_eq(v[0], n * big + n * (n - 1) / 2, "%lld units, cube %u: add", (long long)n, c);
      cr_assert_eq(v[1], -n * big, "cube %u: sub", c);
      cr_assert_eq(v[2], -(n - 1) * big, "cube %u: min", c);
      cr_assert_eq(v[3], (n - 1) * big, "cube %u: max", c);
      cr_assert(v[4] >= big && v[4] < big + n, "cube %u: one unit's exchange: %lld", c,
                (long long)v[4]);
      cr_assert_eq(v[5], 7 * big, "cube %u: compare-and-swap from 0, once", c);
      cr_assert_eq(v[6], 3 * n, "cube %u: a compare-and-swap loop per unit", c);
      cr_assert_eq((uint64_t)v[7], (uint64_t)n << 33, "cube %u: unsigned add", c);
      cr_assert_eq((uint64_t)v[8], (uint64_t)(n - 1) << 32, "cube %u: unsigned max", c);
    }
    cubert_handle_release(out);
  }
}

/* On OpenCL the 64-bit overloads exist only with the extension: built as on a device without it,
   the kernel fails to build, the error naming the kernel and the build log the extension and the
   kernel's line. The CPU server has 64-bit atomics everywhere: `k` (one cube of `units`) runs
   there and leaves `cpu_value` in the buffer, which holds 41 before. */
static void check_unavailable(const cubert_kernel_def *k, uint32_t units, uint64_t cpu_value,
                              const char *line, const char *message) {
  uint64_t c[1] = {41};
  cubert_handle *b = cts_buffer(c, sizeof c);
  cubert_status s = run_with(k, cubert_cube_count_new_3d(1, 1, 1),
                             cubert_cube_dim_new_3d(units, 1, 1), &b, 1, NULL, 0, NULL);
  if (cts_is_cpu()) {
    cr_assert_null(s, "%s", cubert_status_message(s));
    cts_read(b, c, sizeof c);
    cr_assert_eq(c[0], cpu_value, "%s: %llu", k->name, (unsigned long long)c[0]);
  } else {
    cr_assert_not_null(s);
    cr_assert_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION, "%s", cubert_status_message(s));
    cr_assert(strstr(cubert_status_message(s), k->name) != NULL, "%s", cubert_status_message(s));
    const char *log = cubert_status_build_log(s);
    cr_assert_not_null(log);
    cr_assert(strstr(log, line) != NULL, "no \"%s\" in: %s", line, log);
    cr_assert(strstr(log, message) != NULL, "no \"%s\" in: %s", message, log);
    cubert_status_free(s);
  }
  cubert_handle_release(b);
}

Test(lang_features, atomics_64_without_the_extension_name_it) {
  check_unavailable(&atomics64_unavailable, 1, 42, "atomics64_unavailable.cube.c:9:",
                    "ATOMIC_* on 64-bit elements needs the OpenCL extension "
                    "cl_khr_int64_base_atomics, which this device does not have");
}

/* The same for the shared-memory overloads: the message names SHARED_ATOMIC_*. */
Test(lang_features, shared_atomics_64_without_the_extension_name_it) {
  check_unavailable(&shared_atomics64_unavailable, 24, 24, "atomics64_unavailable.cube.c:23:",
                    "SHARED_ATOMIC_* on 64-bit values needs the OpenCL extension "
                    "cl_khr_int64_base_atomics, which this device does not have");
}

/* ---- buffers of structs -------------------------------------------------------------------- */

Test(lang_features, load_and_store_on_buffers_of_structs) {
  enum { N = 70 };
  particle in[N], out[N], same[N];
  for (int i = 0; i < N; ++i)
    in[i] = (particle){(float)i, 0.5f * (float)i, 10 * i, (uint32_t)i << 4, -((int64_t)i << 33)};
  cubert_handle *b[3] = {cts_buffer(in, sizeof in), cts_buffer(in, sizeof in),
                         cts_buffer(in, sizeof in)};
  uint64_t info[1];
  ASSERT_OK(cubert_kernel_scalar_set_f32(&particles_step, info, 1, 0, 2.0f));
  cubert_status s = run_with(&particles_step, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), b,
                             3, info, 1, NULL);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b[1], out, sizeof out);
  cts_read(b[2], same, sizeof same);
  for (int i = 0; i < N; ++i) {
    const particle p = i + 1 < N ? in[i + 1] : (particle){0};
    cr_assert_eq(out[i].x, p.x + 2.0f * p.v, "particle %d x", i);
    cr_assert_eq(out[i].v, p.v, "particle %d v", i);
    cr_assert_eq(out[i].id, p.id + 1, "particle %d id", i);
    cr_assert_eq(out[i].flags, p.flags | 1u, "particle %d flags", i);
    cr_assert_eq(out[i].tag, p.tag * 2 + 1, "particle %d tag", i);
    cr_assert(memcmp(&same[i], &in[i], sizeof in[i]) == 0, "LOAD_UNIT/STORE_UNIT: particle %d", i);
  }
  /* A buffer that is not a whole number of structs is refused, naming the type. */
  cubert_handle *odd = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, sizeof in - 4, &odd));
  cubert_handle *bad[3] = {b[0], odd, b[2]};
  assert_message(run_with(&particles_step, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), bad,
                          3, info, 1, NULL),
                 CUBERT_CODE_INVALID_ARGUMENT,
                 (const char *[]){"buffer 1 (out: particle) expects whole 24-byte elements", NULL});
  cubert_handle_release(odd);
  for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
}

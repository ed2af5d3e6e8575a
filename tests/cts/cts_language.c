/* Conformance of the kernel language (cubert/cube.h) on every server: positions in all three
   forms, execution modes (checked stays inside, validate names the violation, unchecked does
   not check), the declared signature, atomics, math, barriers, compile errors with file and
   line, and the CPU override of copy_strided against its portable body. The kernels are in
   tests/kernels/language.cube.c and bad_opencl.cube.c. */
#include <math.h>
#include <stdint.h>

#include "cts.h"

TestSuite(language, .init = cts_setup, .fini = cts_teardown);

/* Definitions from the kernel files in tests/kernels (cubert_add_kernels, bare names). */
extern const cubert_kernel_def positions_unit, positions_fiber, positions_phased, shifted_write,
    info_reader, atomics, shared_histogram, found_flags, math, cube_sum_fiber, cube_sum_phased,
    exclusive_carry, skips_barrier, different_barriers, uses_function_pointer, divide_unit,
    divide_fiber, divide_phased;
CUBERT_API extern const cubert_kernel_def cubert_kernel_copy_strided_portable;

static cubert_kernel_args args_of(cubert_handle **buffers, uint32_t count, const uint64_t *info,
                                  uint32_t info_count) {
  cubert_kernel_args a = {buffers, count, info, info_count};
  return a;
}

/* Launches in `mode` and syncs; returns the sync's status (launch errors assert). */
static cubert_status run_mode(const cubert_kernel_def *k, cubert_cube_count count,
                              cubert_cube_dim dim, cubert_handle **buffers, uint32_t buffer_count,
                              const uint64_t *info, uint32_t info_count,
                              cubert_execution_mode mode) {
  cubert_kernel_args a = args_of(buffers, buffer_count, info, info_count);
  ASSERT_OK(cubert_client_launch_mode(cts_client, k, count, dim, &a, mode));
  return cubert_client_sync(cts_client);
}

/* ---- positions ------------------------------------------------------------------------------ */

static void check_positions(const cubert_kernel_def *k) {
  const uint32_t c[3] = {3, 2, 2}, d[3] = {4, 3, 2};
  const uint64_t units = (uint64_t)c[0] * c[1] * c[2] * d[0] * d[1] * d[2];
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, units * 16 * 4, &out));
  const uint64_t info[1] = {units};
  cubert_status s = run_mode(k, cubert_cube_count_new_3d(c[0], c[1], c[2]),
                             cubert_cube_dim_new_3d(d[0], d[1], d[2]), &out, 1, info, 1,
                             CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s: %s", k->name, cubert_status_message(s));
  uint32_t *got = malloc(units * 16 * 4);
  cts_read(out, got, units * 16 * 4);
  for (uint32_t cz = 0; cz < c[2]; ++cz)
    for (uint32_t cy = 0; cy < c[1]; ++cy)
      for (uint32_t cx = 0; cx < c[0]; ++cx)
        for (uint32_t uz = 0; uz < d[2]; ++uz)
          for (uint32_t uy = 0; uy < d[1]; ++uy)
            for (uint32_t ux = 0; ux < d[0]; ++ux) {
              const uint32_t cube = cx + c[0] * (cy + c[1] * cz);
              const uint32_t unit = ux + d[0] * (uy + d[1] * uz);
              const uint64_t id = (uint64_t)cube * d[0] * d[1] * d[2] + unit;
              const uint32_t want[16] = {ux,
                                         uy,
                                         uz,
                                         unit,
                                         cx,
                                         cy,
                                         cz,
                                         cube,
                                         d[0] * 100 + d[1] * 10 + d[2],
                                         d[0] * d[1] * d[2],
                                         c[0] * 100 + c[1] * 10 + c[2],
                                         c[0] * c[1] * c[2],
                                         cx * d[0] + ux,
                                         cy * d[1] + uy,
                                         cz * d[2] + uz,
                                         (uint32_t)id};
              for (int w = 0; w < 16; ++w)
                cr_assert_eq(got[id * 16 + w], want[w],
                             "%s: unit (%u,%u,%u) of cube (%u,%u,%u), word %d: %u, expected %u",
                             k->name, ux, uy, uz, cx, cy, cz, w, got[id * 16 + w], want[w]);
            }
  free(got);
  cubert_handle_release(out);
}

Test(language, positions_unit_form) {
  check_positions(&positions_unit);
}
Test(language, positions_fiber_form) {
  check_positions(&positions_fiber);
}
Test(language, positions_phased_form) {
  check_positions(&positions_phased);
}

/* ---- execution modes ------------------------------------------------------------------------ */

/* A 256-float target and a guard allocated right after it; the kernel writes 64 floats past the
   target's end. */
typedef struct oob_setup {
  cubert_handle *target, *guard;
} oob_setup;

static oob_setup oob_make(void) {
  oob_setup o;
  float zeros[256] = {0}, pattern[256];
  for (int i = 0; i < 256; ++i) pattern[i] = -1.0f - (float)i;
  o.target = cts_buffer(zeros, sizeof zeros);
  o.guard = cts_buffer(pattern, sizeof pattern);
  return o;
}

static void oob_check_guard(const oob_setup *o, const char *what) {
  float guard[256];
  cts_read(o->guard, guard, sizeof guard);
  for (int i = 0; i < 256; ++i)
    cr_assert_eq(guard[i], -1.0f - (float)i, "%s: guard element %d changed to %g", what, i,
                 (double)guard[i]);
}

static cubert_status oob_launch(oob_setup *o, cubert_execution_mode mode) {
  const uint64_t info[2] = {256, 64}; /* 256 units, each writing 64 elements further on */
  return run_mode(&shifted_write, cubert_cube_count_new_3d(4, 1, 1),
                  cubert_cube_dim_new_3d(64, 1, 1), &o->target, 1, info, 2, mode);
}

Test(language, checked_write_past_the_end_leaves_the_guard) {
  oob_setup o = oob_make();
  cubert_status s = oob_launch(&o, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "checked mode reports nothing: %s", cubert_status_message(s));
  oob_check_guard(&o, "checked");
  float got[256];
  cts_read(o.target, got, sizeof got);
  for (int i = 0; i < 256; ++i)
    cr_assert_eq(got[i], i < 64 ? 0.0f : (float)(i - 64), "element %d inside the buffer", i);
  cubert_handle_release(o.target);
  cubert_handle_release(o.guard);
}

Test(language, validate_names_kernel_buffer_unit_and_index) {
  oob_setup o = oob_make();
  cubert_status s = oob_launch(&o, CUBERT_EXECUTION_VALIDATE);
  cr_assert_not_null(s, "validate mode reports the write past the end");
  const char *m = cubert_status_message(s);
  cr_assert(strstr(m, "kernel \"shifted_write\"") != NULL, "%s", m);
  cr_assert(strstr(m, "buffer 0 \"out\" (float)") != NULL, "%s", m);
  cr_assert(strstr(m, "which holds 256 elements") != NULL, "%s", m);
  cr_assert(strstr(m, "unit (") != NULL && strstr(m, "of cube (") != NULL, "%s", m);
  /* Units 192..255 write elements 256..319; any of them may be first. */
  unsigned long index = 0;
  const char *at = strstr(m, "accessed element ");
  cr_assert_not_null(at, "%s", m);
  index = strtoul(at + strlen("accessed element "), NULL, 10);
  cr_assert(index >= 256 && index < 320, "index %lu in %s", index, m);
  /* The unit named is the one that wrote that element: unit (index - 64) % 64 of cube
     (index - 64) / 64. */
  char unit[96];
  snprintf(unit, sizeof unit, "unit (%lu, 0, 0) of cube (%lu, 0, 0)", (index - 64) % 64,
           (index - 64) / 64);
  cr_assert(strstr(m, unit) != NULL, "\"%s\" in %s", unit, m);
  cubert_status_free(s);
  oob_check_guard(&o, "validate");
  /* The stream is usable afterwards and the record is clean. */
  s = oob_launch(&o, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cubert_handle_release(o.target);
  cubert_handle_release(o.guard);
}

/* Unchecked accesses are plain: on the CPU server the write lands in the next allocation of
   the page, which is what checked mode protects against (on OpenCL it is undefined, so it is
   not run there). */
Test(language, unchecked_write_is_not_checked_on_the_cpu) {
  if (!cts_is_cpu()) cr_skip_test("an unchecked write past a buffer is undefined on OpenCL");
  oob_setup o = oob_make();
  cubert_status s = oob_launch(&o, CUBERT_EXECUTION_UNCHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  float guard[256];
  cts_read(o.guard, guard, sizeof guard);
  int changed = 0;
  for (int i = 0; i < 256; ++i) changed += guard[i] != -1.0f - (float)i;
  cr_assert_gt(changed, 0, "the guard sits right after the target, so the test can fail");
  cubert_handle_release(o.target);
  cubert_handle_release(o.guard);
}

Test(language, validate_names_info_words_past_the_launch) {
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 8, &out));
  const uint64_t info[1] = {1};
  cubert_status s =
      run_mode(&info_reader, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(1, 1, 1),
               &out, 1, info, 1, CUBERT_EXECUTION_VALIDATE);
  cr_assert_not_null(s);
  cr_assert(strstr(cubert_status_message(s), "read info word 5, but the launch passed 1") != NULL,
            "%s", cubert_status_message(s));
  cubert_status_free(s);
  /* Checked: the missing word reads 0. */
  s = run_mode(&info_reader, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(1, 1, 1),
               &out, 1, info, 1, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  uint64_t got = 0;
  cts_read(out, &got, 8);
  cr_assert_eq(got, 1u);
  cubert_handle_release(out);
}

/* ---- the declared signature ----------------------------------------------------------------- */

Test(language, wrong_buffer_count_is_invalid_argument) {
  cubert_handle *b[2] = {cts_buffer("abcdefgh", 8), cts_buffer("abcdefgh", 8)};
  const uint64_t info[2] = {2, 0};
  cubert_kernel_args a = args_of(b, 2, info, 2);
  ASSERT_CODE(cubert_client_launch(cts_client, &shifted_write, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(2, 1, 1), &a),
              CUBERT_CODE_INVALID_ARGUMENT,
              "kernel \"shifted_write\" expects 1 buffers (out: float), got 2");
  a.buffer_count = 0;
  ASSERT_CODE(cubert_client_launch(cts_client, &shifted_write, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(2, 1, 1), &a),
              CUBERT_CODE_INVALID_ARGUMENT, "got 0");
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(language, wrong_element_size_is_invalid_argument) {
  cubert_handle *b = cts_buffer("abcdef", 6);
  const uint64_t info[2] = {1, 0};
  cubert_kernel_args a = args_of(&b, 1, info, 2);
  ASSERT_CODE(cubert_client_launch(cts_client, &shifted_write, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(1, 1, 1), &a),
              CUBERT_CODE_INVALID_ARGUMENT,
              "buffer 0 (out: float) expects whole 4-byte elements, got a buffer of 6 bytes");
  cubert_handle_release(b);
}

/* ---- atomics ------------------------------------------------------------------------------- */

Test(language, atomics_on_buffers) {
  const uint32_t n = 1000;
  int32_t counters[6] = {0, -1, 1, 5000, 0, 0};
  float sum = 0.0f;
  cubert_handle *b[2] = {cts_buffer(counters, sizeof counters), cts_buffer(&sum, sizeof sum)};
  const uint64_t info[1] = {n};
  cubert_status s = run_mode(&atomics, cts_cubes(n, 64), cubert_cube_dim_new_3d(64, 1, 1), b, 2,
                             info, 1, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b[0], counters, sizeof counters);
  cts_read(b[1], &sum, sizeof sum);
  cr_assert_eq(counters[0], (int32_t)n);
  cr_assert_eq(counters[1], (int32_t)n - 1);
  cr_assert_eq(counters[2], -(int32_t)(n - 1));
  cr_assert_eq(counters[3], 5000 - 2 * (int32_t)n);
  cr_assert_eq(counters[4], 7);
  cr_assert(counters[5] >= 1 && counters[5] <= (int32_t)n, "one unit's id + 1: %d", counters[5]);
  cr_assert_eq(sum, (float)n, "float add by compare-exchange: %g", (double)sum);
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(language, shared_memory_atomics) {
  const uint32_t cubes = 5, dim = 30;
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, cubes * 4 * 4, &out));
  cubert_status s =
      run_mode(&shared_histogram, cubert_cube_count_new_3d(cubes, 1, 1),
               cubert_cube_dim_new_3d(dim, 1, 1), &out, 1, NULL, 0, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  uint32_t got[20];
  cts_read(out, got, sizeof got);
  for (uint32_t c = 0; c < cubes; ++c)
    for (uint32_t b = 0; b < 4; ++b)
      cr_assert_eq(got[c * 4 + b], (dim - b + 3) / 4, "cube %u bin %u", c, b);
  cubert_handle_release(out);
}

/* STORE_SAME and SHARED_STORE_SAME store like STORE; in validate mode (the CPU server's kernel
   sanitizer) several units storing one value through them is no finding. */
Test(language, same_value_stores_set_found_flags) {
  enum { CUBES = 4, DIM = 16 };
  int32_t keys[CUBES * DIM];
  for (int i = 0; i < CUBES * DIM; ++i) keys[i] = (i / DIM == 1 || i / DIM == 3) ? 5 : i % 3;
  const uint64_t info[1] = {2}; /* key 2: units 2, 5, 8, ... of cubes 0 and 2 */
  const cubert_execution_mode modes[2] = {CUBERT_EXECUTION_CHECKED, CUBERT_EXECUTION_VALIDATE};
  for (int m = 0; m < 2; ++m) {
    int32_t found[1 + CUBES] = {0, 7, 7, 7, 7};
    cubert_handle *b[2] = {cts_buffer(keys, sizeof keys), cts_buffer(found, sizeof found)};
    cubert_status s = run_mode(&found_flags, cubert_cube_count_new_3d(CUBES, 1, 1),
                               cubert_cube_dim_new_3d(DIM, 1, 1), b, 2, info, 1, modes[m]);
    cr_assert_null(s, "mode %d: %s", m, cubert_status_message(s));
    cts_read(b[1], found, sizeof found);
    const int32_t want[1 + CUBES] = {1, 1, 0, 1, 0};
    for (int i = 0; i < 1 + CUBES; ++i)
      cr_assert_eq(found[i], want[i], "mode %d: found[%d] = %d, expected %d", m, i, found[i],
                   want[i]);
    cubert_handle_release(b[0]);
    cubert_handle_release(b[1]);
  }
}

/* ---- integer division faults ---------------------------------------------------------------- */

/* One launch of `k` over 4 cubes of 16 units: q = a / b, where unit `bad` (unit 5 of cube 1)
   divides a[bad] by b[bad]; the other units divide i * 7 by i % 5 + 1. Returns the launch's
   status; `q` gets what the launch left. */
static cubert_status divide(const cubert_kernel_def *k, cubert_execution_mode mode, int32_t a_bad,
                            int32_t b_bad, int32_t q[64]) {
  enum { bad = 21 };
  int32_t a[64], b[64];
  for (int i = 0; i < 64; ++i) {
    a[i] = i == bad ? a_bad : i * 7;
    b[i] = i == bad ? b_bad : i % 5 + 1;
    q[i] = -1;
  }
  cubert_handle *h[3] = {cts_buffer(a, sizeof a), cts_buffer(b, sizeof b), cts_buffer(q, 256)};
  cubert_status s = run_mode(k, cubert_cube_count_new_3d(4, 1, 1), cubert_cube_dim_new_3d(16, 1, 1),
                             h, 3, NULL, 0, mode);
  cts_read(h[2], q, 256);
  for (int i = 0; i < 3; ++i) cubert_handle_release(h[i]);
  return s;
}

/* A kernel that divides an integer by zero, or INT32_MIN by -1, never ends the process. On the
   CPU server (x86-64, where idiv faults) the launch fails naming the kernel, the fault and, for
   a CUBE_KERNEL, the unit, in every mode; on OpenCL (PoCL, a GPU) the quotient is unspecified
   and the launch succeeds. Either way the client runs the next launch right. Not in the ASan
   build: it carries UBSan, which halts at the kernel's division first (UBSAN_OPTIONS in the
   Makefile). */
Test(language, integer_division_faults_fail_the_launch_only) {
  const cubert_kernel_def *const kernels[3] = {&divide_unit, &divide_fiber, &divide_phased};
  const cubert_execution_mode modes[3] = {CUBERT_EXECUTION_UNCHECKED, CUBERT_EXECUTION_CHECKED,
                                          CUBERT_EXECUTION_VALIDATE};
  const int32_t bad[2][2] = {{9, 0}, {INT32_MIN, -1}};
#if defined(__SANITIZE_ADDRESS__)
  if (cts_is_cpu())
    cr_skip_test(
        "the ASan build's UBSan halts at the kernel's division before the CPU server's "
        "fault handler runs");
#endif
#if defined(__x86_64__) && defined(__linux__)
  const int faults = cts_is_cpu();
#else
  const int faults = 0;
#endif
  for (int k = 0; k < 3; ++k)
    for (int m = 0; m < 3; ++m)
      for (int v = 0; v < 2; ++v) {
        const char *name = kernels[k]->name;
        int32_t q[64];
        cubert_status s = divide(kernels[k], modes[m], bad[v][0], bad[v][1], q);
        if (faults) {
          cr_assert_not_null(s, "%s, mode %d, case %d: no error", name, m, v);
          const char *msg = cubert_status_message(s);
          cr_assert(strstr(msg, name) && strstr(msg, "integer division by zero"),
                    "%s, mode %d, case %d: %s", name, m, v, msg);
          if (k == 1 || (m == 2 && v == 0 && strstr(msg, "sanitizer")))
            cr_assert(strstr(msg, "unit (5, 0, 0) of cube (1, 0, 0)"), "%s, mode %d: %s", name, m,
                      msg);
          else if (k == 2)
            cr_assert(strstr(msg, "cube (1, 0, 0)"), "%s, mode %d: %s", name, m, msg);
        } else {
          cr_assert_null(s, "%s, mode %d, case %d: %s", name, m, v, cubert_status_message(s));
        }
        cubert_status_free(s);
        s = divide(kernels[k], modes[m], 8, 2, q);
        cr_assert_null(s, "%s, mode %d: the next launch: %s", name, m, cubert_status_message(s));
        for (int i = 0; i < 64; ++i) {
          const int32_t want = i == 21 ? 4 : i * 7 / (i % 5 + 1);
          cr_assert_eq(q[i], want, "%s, mode %d: q[%d] = %d, expected %d", name, m, i, q[i], want);
        }
      }
}

/* ---- math ---------------------------------------------------------------------------------- */

/* Distance in units in the last place between two finite floats of the same sign. */
static uint32_t ulps(float a, float b) {
  if (a == b) return 0;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return UINT32_MAX;
  return (uint32_t)(ia > ib ? ia - ib : ib - ia);
}

Test(language, math_set_matches_the_host) {
  enum { n = 77 };
  float x[n], got[n * 10];
  int32_t igot[n * 3];
  for (int i = 0; i < n; ++i) x[i] = (float)(i - 38) * 0.173f;
  cubert_handle *b[3] = {cts_buffer(x, sizeof x), NULL, NULL};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof got, &b[1]));
  ASSERT_OK(cubert_client_empty(cts_client, sizeof igot, &b[2]));
  const uint64_t info[1] = {n};
  cubert_status s = run_mode(&math, cts_cubes(n, 32), cubert_cube_dim_new_3d(32, 1, 1), b, 3, info,
                             1, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cts_read(b[1], got, sizeof got);
  cts_read(b[2], igot, sizeof igot);
  /* Bounds: OpenCL 1.2's single-precision limits (sqrt 3 ulp, exp/log 3 ulp, tanh 5 ulp); fma,
     min, max, clamp, floor, ceil and a separate multiply and add are exact. */
  static const uint32_t bound[10] = {3, 3, 3, 0, 0, 0, 0, 0, 0, 5};
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    volatile float prod = v * 3.0f; /* rounded on its own, as the kernel must */
    const float want[10] = {sqrtf(fabsf(v)),
                            expf(v * 0.25f),
                            logf(fabsf(v) + 1.0f),
                            fmaf(v, 3.0f, 0.5f),
                            v < 1.0f ? v : 1.0f,
                            v > -1.0f ? v : -1.0f,
                            v < -2.0f ? -2.0f : (v > 2.0f ? 2.0f : v),
                            floorf(v) + ceilf(v),
                            prod + 0.5f,
                            tanhf(v)};
    for (int r = 0; r < 10; ++r)
      cr_assert_leq(ulps(got[i * 10 + r], want[r]), bound[r], "x=%g result %d: %.9g, host %.9g",
                    (double)v, r, (double)got[i * 10 + r], (double)want[r]);
    const int32_t iv = (int32_t)(v * 4.0f);
    cr_assert_eq(igot[i * 3 + 0], iv < 0 ? -iv : iv, "abs(%d)", iv);
    cr_assert_eq(igot[i * 3 + 1], iv < 3 ? iv : 3, "min(%d, 3)", iv);
    cr_assert_eq(igot[i * 3 + 2], iv > -3 ? iv : -3, "max(%d, -3)", iv);
  }
  for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
}

/* ---- cube forms and barriers ------------------------------------------------------------------
 */

Test(language, fiber_and_phased_forms_agree) {
  enum { cubes = 9, dim = 128 };
  float in[cubes * dim], fiber[cubes], phased[cubes];
  for (int i = 0; i < cubes * dim; ++i) in[i] = (float)((i * 37) % 101) - 50.0f;
  cubert_handle *b[2] = {cts_buffer(in, sizeof in), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof fiber, &b[1]));
  const cubert_kernel_def *forms[2] = {&cube_sum_fiber, &cube_sum_phased};
  float *outs[2] = {fiber, phased};
  for (int f = 0; f < 2; ++f) {
    cubert_status s =
        run_mode(forms[f], cubert_cube_count_new_3d(cubes, 1, 1), cubert_cube_dim_new_3d(dim, 1, 1),
                 b, 2, NULL, 0, CUBERT_EXECUTION_CHECKED);
    cr_assert_null(s, "%s: %s", forms[f]->name, cubert_status_message(s));
    cts_read(b[1], outs[f], sizeof fiber);
  }
  for (int c = 0; c < cubes; ++c) {
    float want = 0.0f;
    for (int u = 0; u < dim; ++u) want += in[c * dim + u]; /* integers: exact in any order */
    cr_assert_eq(fiber[c], want, "fiber form, cube %d", c);
    cr_assert_eq(phased[c], want, "phased form, cube %d", c);
  }
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(language, exclusive_values_live_across_barriers) {
  enum { cubes = 3, dim = 100 };
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, cubes * dim * 4, &out));
  cubert_status s =
      run_mode(&exclusive_carry, cubert_cube_count_new_3d(cubes, 1, 1),
               cubert_cube_dim_new_3d(dim, 1, 1), &out, 1, NULL, 0, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  uint32_t got[cubes * dim];
  cts_read(out, got, sizeof got);
  for (uint32_t i = 0; i < cubes * dim; ++i) cr_assert_eq(got[i], i * 4 + 1, "unit %u", i);
  cubert_handle_release(out);
}

/* Divergent barriers are undefined on OpenCL (PoCL does not survive some), so they are checked
   where cubert can see them: the CPU server in validate mode. */
Test(language, validate_reports_a_skipped_barrier_on_the_cpu) {
  if (!cts_is_cpu()) cr_skip_test("divergent barriers are undefined on OpenCL devices");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 2 * 8 * 4, &out));
  cubert_status s =
      run_mode(&skips_barrier, cubert_cube_count_new_3d(2, 1, 1), cubert_cube_dim_new_3d(8, 1, 1),
               &out, 1, NULL, 0, CUBERT_EXECUTION_VALIDATE);
  cr_assert_not_null(s);
  const char *m = cubert_status_message(s);
  cr_assert(strstr(m, "kernel \"skips_barrier\"") != NULL, "%s", m);
  cr_assert(strstr(m, "unit (0, 0, 0) of cube (") != NULL, "%s", m);
  /* The kernel sanitizer (a GCC build) reports the return at the barrier, naming the unit and
     the barrier's file:line; without it the fiber runner names both units at the cube's end
     (tests/kernels/language.cube.c). */
  if (strstr(m, "(validate mode, sanitizer)"))
    cr_assert(strstr(m,
                     "barrier divergence: 1 unit of the cube (unit (0, 0, 0)) returned before "
                     "the barrier at language.cube.c:") != NULL,
              "%s", m);
  else
    cr_assert(strstr(m,
                     "passed 0 cube barriers where unit (1, 0, 0) of its cube passed 1, the last "
                     "of them (at language.cube.c:") != NULL,
              "%s", m);
  cubert_status_free(s);
  /* Checked mode runs it as before (the skipping unit leaves the ring). */
  s = run_mode(&skips_barrier, cubert_cube_count_new_3d(2, 1, 1), cubert_cube_dim_new_3d(8, 1, 1),
               &out, 1, NULL, 0, CUBERT_EXECUTION_CHECKED);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cubert_handle_release(out);
}

Test(language, validate_reports_different_barriers_on_the_cpu) {
  if (!cts_is_cpu()) cr_skip_test("divergent barriers are undefined on OpenCL devices");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4 * 4, &out));
  cubert_status s =
      run_mode(&different_barriers, cubert_cube_count_new_3d(1, 1, 1),
               cubert_cube_dim_new_3d(4, 1, 1), &out, 1, NULL, 0, CUBERT_EXECUTION_VALIDATE);
  cr_assert_not_null(s);
  /* Unit 1 reaches the barrier of odd units while unit 0 waits at the other: both named, each
     with its file:line. */
  const char *m = cubert_status_message(s);
  cr_assert(strstr(m,
                   "unit (1, 0, 0) of cube (0, 0, 0): reached a different barrier than unit "
                   "(0, 0, 0) of its cube, which waits at the one at language.cube.c:") != NULL,
            "%s", m);
  cr_assert(strstr(m, "; this unit's barrier is (at language.cube.c:") != NULL, "%s", m);
  cubert_status_free(s);
  cubert_handle_release(out);
}

/* ---- compile errors name the kernel file and line ----------------------------------------------
 */

Test(language, opencl_compile_error_names_file_and_line) {
  if (cts_is_cpu()) cr_skip_test("the C side of the file compiled with the test itself");
  cubert_handle *out = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 16, &out));
  const uint64_t info[1] = {4};
  cubert_kernel_args a = args_of(&out, 1, info, 1);
  cubert_status s =
      cubert_client_launch(cts_client, &uses_function_pointer, cubert_cube_count_new_3d(1, 1, 1),
                           cubert_cube_dim_new_3d(4, 1, 1), &a);
  cr_assert_not_null(s, "function pointers are not OpenCL C");
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION, "%s", cubert_status_message(s));
  const char *log = cubert_status_build_log(s);
  cr_assert_not_null(log);
  cr_assert(strstr(log, "bad_opencl.cube.c:11:") != NULL, "the log names file and line: %s", log);
  cubert_status_free(s);
  cubert_handle_release(out);
}

/* ---- the CPU override of copy_strided against its portable body ---------------------------------
 */

Test(language, copy_strided_override_matches_portable_body) {
  uint64_t seed = 12345;
  static const uint64_t elems[] = {1, 2, 3, 4, 8, 12};
  for (int round = 0; round < 24; ++round) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t elem = elems[(seed >> 33) % 6];
    const uint32_t rank = 1 + (uint32_t)((seed >> 40) % 4);
    uint64_t info[3 + 8] = {rank, elem, 1};
    uint64_t span = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t dim = 1 + (seed >> 35) % 7, stride = 1 + (seed >> 45) % 5;
      info[3 + d] = dim;
      info[3 + rank + d] = stride;
      info[2] *= dim;
      span += (dim - 1) * stride;
    }
    const size_t src_bytes = (size_t)(span * elem), dst_bytes = (size_t)(info[2] * elem);
    uint8_t *src = malloc(src_bytes), *a = malloc(dst_bytes), *b = malloc(dst_bytes);
    for (size_t i = 0; i < src_bytes; ++i) src[i] = (uint8_t)(i * 131 + round);
    cubert_handle *h[2] = {cts_buffer(src, src_bytes), NULL};
    ASSERT_OK(cubert_client_empty(cts_client, dst_bytes, &h[1]));
    const cubert_kernel_def *defs[2] = {&cubert_kernel_copy_strided,
                                        &cubert_kernel_copy_strided_portable};
    uint8_t *outs[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
      cubert_status s = run_mode(defs[k], cts_cubes(info[2], 32), cubert_cube_dim_new_3d(32, 1, 1),
                                 h, 2, info, 3 + 2 * rank, CUBERT_EXECUTION_CHECKED);
      cr_assert_null(s, "%s", cubert_status_message(s));
      cts_read(h[1], outs[k], dst_bytes);
    }
    cr_assert_eq(memcmp(a, b, dst_bytes), 0, "round %d: rank %u, elem %llu", round, rank,
                 (unsigned long long)elem);
    free(src);
    free(a);
    free(b);
    cubert_handle_release(h[0]);
    cubert_handle_release(h[1]);
  }
}

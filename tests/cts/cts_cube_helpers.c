/* Conformance of the cube-level helpers of cubert/cube.h on every server, against host
   references: CUBE_REDUCE_SUM/MIN/MAX and CUBE_SCAN_INCLUSIVE_SUM/EXCLUSIVE_SUM in both cube
   forms, for f32, i32 and u32, on random data and odd cube dims; shared-memory atomics (the
   old values of the integer ones, float add/min/max) contended by every unit of a cube. The
   kernels are in tests/kernels/cube_helpers.cube.c. */
#include <math.h>
#include <stdint.h>

#include "cts.h"

TestSuite(cube_helpers, .init = cts_setup, .fini = cts_teardown);

extern const cubert_kernel_def helpers_fiber_f32, helpers_phased_f32, helpers_fiber_i32,
    helpers_phased_i32, helpers_fiber_u32, helpers_phased_u32, shared_atomics_fiber,
    shared_atomics_phased;

/* The cube dims the helper tests run: 1, odd, a power of two, not one, the scratch's size. */
static const uint32_t helper_dims[] = {1, 7, 64, 100, 256};

/* Whether a test runs dim helper_dims[d] of those in `dims` (a bit per entry of helper_dims).
   An OpenCL CPU device (PoCL, Oclgrind) compiles a kernel for each local size, and these
   barrier-heavy kernels take 5-20 s each there: most of the conformance suite's time on PoCL.
   The OpenCL side of the helpers is one text for every type and both forms (cube_opencl.h), so
   there each test runs the dims its `dims` names and the six tests together run every dim at
   least twice; every other device (the CPU server, whose forms differ, and OpenCL GPUs) runs
   all five dims in every test. */
static int runs_dim(unsigned dims, size_t d) {
  if (cubert_client_properties(cts_client)->type != CUBERT_DEVICE_TYPE_OPENCL_CPU) return 1;
  return dims >> d & 1u;
}
enum { helper_cubes = 5, results = 5 };

typedef enum dtype { F32, I32, U32 } dtype;

/* Tiny deterministic generator (xorshift32), so a failure reproduces. */
static uint32_t rng_next(uint32_t *state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* Element i of `data` as a double (exact for every i32 and u32). */
static double value_at(const void *data, dtype t, size_t i) {
  switch (t) {
    case F32:
      return ((const float *)data)[i];
    case I32:
      return ((const int32_t *)data)[i];
    default:
      return ((const uint32_t *)data)[i];
  }
}

/* Checks unit u's five results of a cube whose values are vals[0 .. dim). Float sums pass
   within 4 * dim * FLT_EPSILON of the sum of magnitudes (any order of additions); integer sums
   and every min and max are exact (u32 sums wrap modulo 2^32 on both sides). */
static void check_unit(const char *name, dtype t, uint32_t dim, uint32_t cube, uint32_t u,
                       const void *vals, const void *got) {
  double sum = 0, mag = 0, mn = INFINITY, mx = -INFINITY, incl = 0, excl = 0;
  uint32_t usum = 0, uincl = 0, uexcl = 0;
  for (uint32_t k = 0; k < dim; ++k) {
    const double v = value_at(vals, t, k);
    sum += v;
    mag += fabs(v);
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    if (t == U32) usum += ((const uint32_t *)vals)[k];
    if (k <= u) {
      incl += v;
      if (t == U32) uincl += ((const uint32_t *)vals)[k];
    }
    if (k < u) {
      excl += v;
      if (t == U32) uexcl += ((const uint32_t *)vals)[k];
    }
  }
  const double want[results] = {t == U32 ? usum : sum, mn, mx, t == U32 ? uincl : incl,
                                t == U32 ? uexcl : excl};
  static const char *const what[results] = {"reduce sum", "reduce min", "reduce max",
                                            "inclusive scan", "exclusive scan"};
  for (int r = 0; r < results; ++r) {
    const double g = value_at(got, t, (size_t)u * results + r);
    const double tol = (t == F32 && (r == 0 || r == 3 || r == 4)) ? 4.0 * dim * 1.2e-7 * mag : 0;
    cr_assert(fabs(g - want[r]) <= tol, "%s, dim %u, cube %u, unit %u: %s = %.9g, host %.9g", name,
              dim, cube, u, what[r], g, want[r]);
  }
}

static void check_helpers(const cubert_kernel_def *k, dtype t, unsigned opencl_cpu_dims) {
  uint32_t seed = 0x9e3779b9u ^ (uint32_t)t;
  for (size_t d = 0; d < sizeof helper_dims / sizeof helper_dims[0]; ++d) {
    if (!runs_dim(opencl_cpu_dims, d)) continue;
    const uint32_t dim = helper_dims[d], n = dim * helper_cubes;
    uint32_t *in = malloc((size_t)n * 4), *out = malloc((size_t)n * results * 4);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = rng_next(&seed);
      if (t == F32) {
        const float f = (float)((double)r / 4294967296.0 * 200.0 - 100.0);
        memcpy(&in[i], &f, 4);
      } else if (t == I32) {
        const int32_t v = (int32_t)(r % 2000001u) - 1000000;
        memcpy(&in[i], &v, 4);
      } else {
        in[i] = r; /* sums wrap */
      }
    }
    cubert_handle *b[2] = {cts_buffer(in, (size_t)n * 4), NULL};
    ASSERT_OK(cubert_client_empty(cts_client, (size_t)n * results * 4, &b[1]));
    const cubert_kernel_args a = {b, 2, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, k, cubert_cube_count_new_3d(helper_cubes, 1, 1),
                                   cubert_cube_dim_new_3d(dim, 1, 1), &a));
    cts_read(b[1], out, (size_t)n * results * 4);
    for (uint32_t c = 0; c < helper_cubes; ++c)
      for (uint32_t u = 0; u < dim; ++u)
        check_unit(k->name, t, dim, c, u, in + (size_t)c * dim, out + ((size_t)c * dim) * results);
    cubert_handle_release(b[0]);
    cubert_handle_release(b[1]);
    free(in);
    free(out);
  }
}

Test(cube_helpers, reduce_and_scan_f32_fiber_form) {
  check_helpers(&helpers_fiber_f32, F32, 0x09); /* on an OpenCL CPU device: dims 1, 100 */
}
Test(cube_helpers, reduce_and_scan_f32_phased_form) {
  check_helpers(&helpers_phased_f32, F32, 0x12); /* 7, 256 */
}
Test(cube_helpers, reduce_and_scan_i32_fiber_form) {
  check_helpers(&helpers_fiber_i32, I32, 0x14); /* 64, 256 */
}
Test(cube_helpers, reduce_and_scan_i32_phased_form) {
  check_helpers(&helpers_phased_i32, I32, 0x09); /* 1, 100 */
}
Test(cube_helpers, reduce_and_scan_u32_fiber_form) {
  check_helpers(&helpers_fiber_u32, U32, 0x0a); /* 7, 100 */
}
Test(cube_helpers, reduce_and_scan_u32_phased_form) {
  check_helpers(&helpers_phased_u32, U32, 0x14); /* 64, 256 */
}

/* A 3-D cube (dim 10 x 3 x 2 = 60 units): the helpers see the units in UNIT_POS order. On an
   OpenCL CPU device only the phased form runs (runs_dim says why: the helpers are one text for
   both forms there, and this local size compiles for a minute on PoCL). */
Test(cube_helpers, scan_follows_unit_pos_in_a_3d_cube) {
  enum { n = 60 };
  int32_t in[n], out[n * results];
  for (int i = 0; i < n; ++i) in[i] = i * 3 - 70;
  cubert_handle *b[2] = {cts_buffer(in, sizeof in), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof out, &b[1]));
  const cubert_kernel_def *forms[2] = {&helpers_fiber_i32, &helpers_phased_i32};
  for (int f = runs_dim(0, 0) ? 0 : 1; f < 2; ++f) {
    const cubert_kernel_args a = {b, 2, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, forms[f], cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(10, 3, 2), &a));
    cts_read(b[1], out, sizeof out);
    for (uint32_t u = 0; u < n; ++u) check_unit(forms[f]->name, I32, n, 0, u, in, out);
  }
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

/* More units than the scratch holds: the CPU server fails the launch with the reason (on
   OpenCL the results are unspecified, so only the CPU server is checked). */
Test(cube_helpers, cube_larger_than_the_scratch_fails_on_the_cpu) {
  if (!cts_is_cpu()) cr_skip_test("the capacity is reported by the CPU server only");
  enum { dim = 300 };
  float in[dim] = {0};
  cubert_handle *b[2] = {cts_buffer(in, sizeof in), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof in * results, &b[1]));
  const cubert_kernel_def *forms[2] = {&helpers_fiber_f32, &helpers_phased_f32};
  for (int f = 0; f < 2; ++f) {
    const cubert_kernel_args a = {b, 2, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, forms[f], cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(dim, 1, 1), &a));
    cubert_status s = cubert_client_sync(cts_client);
    cr_assert_not_null(s, "%s: a cube of %d units with a scratch of 256 succeeded", forms[f]->name,
                       dim);
    cr_assert(cts_contains(cubert_status_message(s), "more units than the scratch"), "%s: %s",
              forms[f]->name, cubert_status_message(s));
    cubert_status_free(s);
  }
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

/* ---- shared-memory atomics contended by a whole cube ---------------------------------------- */

static void check_shared_atomics(const cubert_kernel_def *k) {
  uint32_t seed = 12345;
  for (size_t d = 0; d < sizeof helper_dims / sizeof helper_dims[0]; ++d) {
    const uint32_t dim = helper_dims[d], n = dim * helper_cubes;
    /* Integer-valued floats: every order of additions gives the exact sum. */
    float *in = malloc((size_t)n * 4), sums[helper_cubes * 3];
    const size_t old_words = (size_t)n * 4 + helper_cubes;
    uint32_t *olds = malloc(old_words * 4);
    for (uint32_t i = 0; i < n; ++i) in[i] = (float)((int32_t)(rng_next(&seed) % 2001u) - 1000);
    cubert_handle *b[3] = {cts_buffer(in, (size_t)n * 4), NULL, NULL};
    ASSERT_OK(cubert_client_empty(cts_client, sizeof sums, &b[1]));
    ASSERT_OK(cubert_client_empty(cts_client, old_words * 4, &b[2]));
    const cubert_kernel_args a = {b, 3, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, k, cubert_cube_count_new_3d(helper_cubes, 1, 1),
                                   cubert_cube_dim_new_3d(dim, 1, 1), &a));
    cts_read(b[1], sums, sizeof sums);
    cts_read(b[2], olds, old_words * 4);
    uint8_t *seen = malloc(dim + 1);
    for (uint32_t c = 0; c < helper_cubes; ++c) {
      const float *v = in + (size_t)c * dim;
      const uint32_t *o = olds + (size_t)c * dim * 4;
      float sum = 0, lo = INFINITY, hi = -INFINITY;
      for (uint32_t u = 0; u < dim; ++u) {
        sum += v[u];
        lo = fminf(lo, v[u]);
        hi = fmaxf(hi, v[u]);
      }
      cr_assert_eq(sums[c * 3 + 0], sum, "%s dim %u cube %u: float add %g, host %g", k->name, dim,
                   c, (double)sums[c * 3], (double)sum);
      cr_assert_eq(sums[c * 3 + 1], lo, "%s dim %u cube %u: float min", k->name, dim, c);
      cr_assert_eq(sums[c * 3 + 2], hi, "%s dim %u cube %u: float max", k->name, dim, c);
      /* ADD's old values: a permutation of 0 .. dim-1. */
      memset(seen, 0, dim + 1);
      for (uint32_t u = 0; u < dim; ++u) {
        cr_assert_lt(o[u * 4], dim, "%s dim %u cube %u unit %u: ADD old %u", k->name, dim, c, u,
                     o[u * 4]);
        cr_assert(!seen[o[u * 4]]++, "%s dim %u cube %u: ADD old %u twice", k->name, dim, c,
                  o[u * 4]);
      }
      /* XCHG's old values and the final value: a permutation of 0 .. dim. */
      memset(seen, 0, dim + 1);
      seen[olds[(size_t)n * 4 + c]] = 1;
      for (uint32_t u = 0; u < dim; ++u) {
        cr_assert_leq(o[u * 4 + 1], dim, "%s: XCHG old", k->name);
        cr_assert(!seen[o[u * 4 + 1]]++, "%s dim %u cube %u: XCHG old %u twice", k->name, dim, c,
                  o[u * 4 + 1]);
      }
      /* CAS: one winner saw 0, every other unit the winner's value. */
      uint32_t winners = 0, winner = 0;
      for (uint32_t u = 0; u < dim; ++u)
        if (o[u * 4 + 2] == 0) {
          ++winners;
          winner = u + 1;
        }
      cr_assert_eq(winners, 1, "%s dim %u cube %u: %u CAS winners", k->name, dim, c, winners);
      for (uint32_t u = 0; u < dim; ++u)
        if (o[u * 4 + 2] != 0)
          cr_assert_eq(o[u * 4 + 2], winner, "%s dim %u cube %u unit %u: CAS old", k->name, dim, c,
                       u);
      /* MAX from -1: exactly one unit saw -1, the others a unit position. */
      uint32_t firsts = 0;
      for (uint32_t u = 0; u < dim; ++u) {
        const int32_t m = (int32_t)o[u * 4 + 3];
        firsts += m == -1;
        cr_assert(m >= -1 && m < (int32_t)dim, "%s: MAX old %d", k->name, m);
      }
      cr_assert_eq(firsts, 1, "%s dim %u cube %u: %u units saw MAX's initial -1", k->name, dim, c,
                   firsts);
    }
    free(seen);
    free(in);
    free(olds);
    for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
  }
}

Test(cube_helpers, shared_atomics_fiber_form) {
  check_shared_atomics(&shared_atomics_fiber);
}
Test(cube_helpers, shared_atomics_phased_form) {
  check_shared_atomics(&shared_atomics_phased);
}

/* NaNs lose to numbers in the float min and max, as in fmin/fmax: every cube has NaNs at units 0
   and 3 (of 7 or 64), and the reduce's min and max and the shared atomics' min and max are
   those of the other units (the sums are NaN and not checked). */
Test(cube_helpers, float_min_and_max_ignore_nans) {
  static const uint32_t dims[] = {7, 64};
  for (size_t d = 0; d < 2; ++d) {
    const uint32_t dim = dims[d], n = dim * helper_cubes;
    float *in = malloc((size_t)n * 4), *out = malloc((size_t)n * results * 4);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t u = i % dim;
      in[i] = (u == 0 || u == 3) ? NAN : (float)((int32_t)((i * 7919u) % 201u) - 100);
    }
    const cubert_kernel_def *forms[2] = {&helpers_fiber_f32, &helpers_phased_f32};
    const cubert_kernel_def *atomic_forms[2] = {&shared_atomics_fiber, &shared_atomics_phased};
    for (int f = 0; f < 2; ++f) {
      float sums[helper_cubes * 3];
      cubert_handle *b[3] = {cts_buffer(in, (size_t)n * 4), NULL, NULL};
      ASSERT_OK(cubert_client_empty(cts_client, (size_t)n * results * 4, &b[1]));
      cubert_kernel_args a = {b, 2, NULL, 0};
      ASSERT_OK(cubert_client_launch(cts_client, forms[f],
                                     cubert_cube_count_new_3d(helper_cubes, 1, 1),
                                     cubert_cube_dim_new_3d(dim, 1, 1), &a));
      cts_read(b[1], out, (size_t)n * results * 4);
      cubert_handle_release(b[1]);
      ASSERT_OK(cubert_client_empty(cts_client, sizeof sums, &b[1]));
      ASSERT_OK(cubert_client_empty(cts_client, ((size_t)n * 4 + helper_cubes) * 4, &b[2]));
      a.buffer_count = 3;
      ASSERT_OK(cubert_client_launch(cts_client, atomic_forms[f],
                                     cubert_cube_count_new_3d(helper_cubes, 1, 1),
                                     cubert_cube_dim_new_3d(dim, 1, 1), &a));
      cts_read(b[1], sums, sizeof sums);
      for (uint32_t c = 0; c < helper_cubes; ++c) {
        float lo = INFINITY, hi = -INFINITY;
        for (uint32_t u = 0; u < dim; ++u) {
          lo = fminf(lo, in[c * dim + u]);
          hi = fmaxf(hi, in[c * dim + u]);
        }
        for (uint32_t u = 0; u < dim; ++u) {
          const float *r = out + ((size_t)c * dim + u) * results;
          cr_assert_eq(r[1], lo, "%s dim %u cube %u unit %u: reduce min %g, host %g",
                       forms[f]->name, dim, c, u, (double)r[1], (double)lo);
          cr_assert_eq(r[2], hi, "%s dim %u cube %u unit %u: reduce max %g, host %g",
                       forms[f]->name, dim, c, u, (double)r[2], (double)hi);
        }
        cr_assert_eq(sums[c * 3 + 1], lo, "%s dim %u cube %u: SHARED_ATOMIC_MIN_F32 %g, host %g",
                     atomic_forms[f]->name, dim, c, (double)sums[c * 3 + 1], (double)lo);
        cr_assert_eq(sums[c * 3 + 2], hi, "%s dim %u cube %u: SHARED_ATOMIC_MAX_F32 %g, host %g",
                     atomic_forms[f]->name, dim, c, (double)sums[c * 3 + 2], (double)hi);
      }
      for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
    }
    free(in);
    free(out);
  }
}

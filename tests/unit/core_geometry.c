/* Unit tests of lib/geometry.c: the reference cube_count_spread cases, its error cases (z limit,
   u32 overflow, zero limits), Exact/Approx selection, and the CubeDim heuristic on CPU and GPU
   properties. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cubert/client.h"
#include "cubert/geometry.h"
#include "cubert/server.h"
#include "geometry.h"

static void assert_spread(uint32_t mx, uint32_t my, uint32_t mz, uint32_t n, uint32_t ex,
                          uint32_t ey, uint32_t ez) {
  const uint32_t max[3] = {mx, my, mz};
  uint32_t out[3] = {0, 0, 0};
  cubert_status s = cubert_cube_count_spread(max, n, out);
  cr_assert_null(s, "spread(%u) failed: %s", n, cubert_status_message(s));
  cr_assert(out[0] == ex && out[1] == ey && out[2] == ez,
            "spread((%u,%u,%u), %u) = (%u,%u,%u), expected (%u,%u,%u)", mx, my, mz, n, out[0],
            out[1], out[2], ex, ey, ez);
}

static void assert_contains(const char *text, const char *needle) {
  cr_assert(strstr(text, needle), "expected \"%s\" in:\n%s", needle, text);
}

Test(core_geometry, spread_reference_even) {
  assert_spread(32, 32, 32, 2048, 32, 32, 2);
}

Test(core_geometry, spread_reference_odd) {
  assert_spread(48, 32, 16, 3177, 25, 32, 4);
}

Test(core_geometry, spread_fits_first_axis) {
  assert_spread(65535, 65535, 65535, 1000, 1000, 1, 1);
  assert_spread(8, 8, 8, 8, 8, 1, 1);
  assert_spread(8, 8, 8, 1, 1, 1, 1);
}

Test(core_geometry, spread_zero_cubes_is_empty_dispatch) {
  assert_spread(4, 4, 4, 0, 0, 1, 1);
}

Test(core_geometry, spread_stops_at_second_axis_when_it_fits) {
  /* 9 -> 5 (y 2) -> 3 (y 4): y fits, z stays 1. */
  assert_spread(3, 8, 1, 9, 3, 4, 1);
  assert_spread(UINT32_MAX, 1, 1, UINT32_MAX, UINT32_MAX, 1, 1);
}

Test(core_geometry, spread_z_limit_is_too_many_resources) {
  const uint32_t max[3] = {2, 2, 2};
  uint32_t out[3] = {7, 7, 7};
  cubert_status s = cubert_cube_count_spread(max, 100, out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES);
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_RESOURCE_LIMIT);
  cr_assert_eq(cubert_status_requested(s), 100);
  cr_assert_eq(cubert_status_max(s), 8);
  const char *m = cubert_status_message(s);
  assert_contains(m, "num_cubes 100");
  assert_contains(m, "(2, 2, 2)");
  assert_contains(m, "z would need 32 cubes, more than max_cube_count[2] = 2");
  assert_contains(m, "Requested 100, max is 8.");
  cr_assert(out[0] == 7 && out[1] == 7 && out[2] == 7, "out must be untouched on error");
  cubert_status_free(s);
}

Test(core_geometry, spread_where_reference_exceeds_z_even_though_product_fits) {
  /* 3x3x1 holds 9 cubes, but halving gives (3, 2, 2): the reference would return z = 2. */
  const uint32_t max[3] = {3, 3, 1};
  uint32_t out[3];
  cubert_status s = cubert_cube_count_spread(max, 9, out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES);
  cr_assert_eq(cubert_status_requested(s), 9);
  cr_assert_eq(cubert_status_max(s), 9);
  cubert_status_free(s);
}

Test(core_geometry, spread_u32_overflow_is_too_many_resources) {
  const uint32_t max[3] = {1, 1, UINT32_MAX};
  uint32_t out[3];
  cubert_status s = cubert_cube_count_spread(max, UINT32_MAX, out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES);
  cr_assert_eq(cubert_status_requested(s), UINT32_MAX);
  cr_assert_eq(cubert_status_max(s), UINT32_MAX);
  assert_contains(cubert_status_message(s), "overflow 32 bits");
  assert_contains(cubert_status_message(s), "4294967295");
  cubert_status_free(s);
}

Test(core_geometry, spread_zero_limit_is_invalid_argument) {
  const uint32_t max[3] = {16, 0, 16};
  uint32_t out[3];
  cubert_status s = cubert_cube_count_spread(max, 4, out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "max_cube_count[1] is 0");
  cubert_status_free(s);
}

Test(core_geometry, spread_null_arguments) {
  const uint32_t max[3] = {1, 1, 1};
  uint32_t out[3];
  cubert_status s = cubert_cube_count_spread(NULL, 1, out);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "max");
  cubert_status_free(s);
  s = cubert_cube_count_spread(max, 1, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "out");
  cubert_status_free(s);
}

Test(core_geometry, selection_exact) {
  const uint32_t max[3] = {32, 32, 32};
  cubert_cube_count_selection sel;
  cr_assert_null(cubert_cube_count_selection_from(max, 2048, &sel));
  cr_assert_eq(sel.kind, CUBERT_CUBE_COUNT_EXACT);
  cr_assert_eq(sel.num_cubes, 2048);
  cr_assert_eq(sel.cube_count.x, 32);
  cr_assert_eq(sel.cube_count.y, 32);
  cr_assert_eq(sel.cube_count.z, 2);
  cr_assert_null(sel.cube_count.dynamic);
}

Test(core_geometry, selection_approx) {
  const uint32_t max[3] = {48, 32, 16};
  cubert_cube_count_selection sel;
  cr_assert_null(cubert_cube_count_selection_from(max, 3177, &sel));
  cr_assert_eq(sel.kind, CUBERT_CUBE_COUNT_APPROX);
  cr_assert_eq(sel.num_cubes, 3200);
  cr_assert_eq(sel.cube_count.x, 25);
  cr_assert_eq(sel.cube_count.y, 32);
  cr_assert_eq(sel.cube_count.z, 4);
}

Test(core_geometry, selection_product_overflow) {
  /* UINT32_MAX -> 2^31 (y 2) -> 2^30 (y 4): 2^32 cubes cannot be counted in 32 bits. */
  const uint32_t max[3] = {(1u << 31) - 1, 1024, 1024};
  cubert_cube_count_selection sel;
  cubert_status s = cubert_cube_count_selection_from(max, UINT32_MAX, &sel);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES);
  assert_contains(cubert_status_message(s), "4294967296");
  cubert_status_free(s);
  s = cubert_cube_count_selection_from(max, 1, NULL);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
}

Test(core_geometry, selection_propagates_spread_errors) {
  const uint32_t max[3] = {2, 2, 2};
  cubert_cube_count_selection sel;
  cubert_status s = cubert_cube_count_selection_from(max, 100, &sel);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES);
  cubert_status_free(s);
}

Test(core_geometry, cube_dim_cpu_heuristic) {
  cubert_cube_dim d = cubert_cube_dim_for_units(1000, 1, 1024, 2);
  cr_assert(d.x == 1 && d.y == 2 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(1, 1, 1024, 2);
  cr_assert(d.x == 1 && d.y == 1 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(0, 1, 1024, 16);
  cr_assert(d.x == 1 && d.y == 1 && d.z == 1, "zero units still give a valid dim");
  d = cubert_cube_dim_for_units(100000, 1, 8, 64); /* capped by max units per cube */
  cr_assert(d.x == 1 && d.y == 8 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
}

Test(core_geometry, cube_dim_gpu_heuristic) {
  cubert_cube_dim d = cubert_cube_dim_for_units(1000000, 32, 1024, 0);
  cr_assert(d.x == 32 && d.y == 8 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(64, 32, 1024, 0);
  cr_assert(d.x == 32 && d.y == 2 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(10, 32, 1024, 0);
  cr_assert(d.x == 32 && d.y == 1 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(32 * 7, 32, 1024, 0); /* 7 planes -> power of two 4 */
  cr_assert(d.x == 32 && d.y == 4 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(1000000, 64, 256, 0); /* limit 256/64 = 4 planes */
  cr_assert(d.x == 64 && d.y == 4 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
}

Test(core_geometry, cube_dim_degenerate_properties_are_guarded) {
  cubert_cube_dim d = cubert_cube_dim_for_units(1000, 0, 1024, 0); /* plane size 0 -> 1 */
  cr_assert(d.x == 1 && d.y == 8 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(1000, 32, 16, 0); /* plane wider than the cube limit */
  cr_assert(d.x == 16 && d.y == 1 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
  d = cubert_cube_dim_for_units(1000000, 32, 0, 0); /* no reported limit */
  cr_assert(d.x == 32 && d.y == 8 && d.z == 1, "(%u,%u,%u)", d.x, d.y, d.z);
}

Test(core_geometry, constructors) {
  cubert_cube_count c = cubert_cube_count_new_3d(2, 3, 4);
  cr_assert(c.x == 2 && c.y == 3 && c.z == 4 && c.dynamic == NULL);
  c = cubert_cube_count_new_1d(9);
  cr_assert(c.x == 9 && c.y == 1 && c.z == 1 && c.dynamic == NULL);
  c = cubert_cube_count_new_2d(9, 4);
  cr_assert(c.x == 9 && c.y == 4 && c.z == 1 && c.dynamic == NULL);
  cubert_handle *fake = (cubert_handle *)&c;
  c = cubert_cube_count_dynamic(fake);
  cr_assert_eq(c.dynamic, fake);
  /* is_empty (seed-server-base CubeCount::is_empty): a static count with a zero axis; never a
     dynamic one, whose buffer is read only at launch. */
  cr_assert_eq(cubert_cube_count_is_empty(c), 0, "dynamic");
  cr_assert_eq(cubert_cube_count_is_empty(cubert_cube_count_new_3d(2, 3, 4)), 0);
  cr_assert_eq(cubert_cube_count_is_empty(cubert_cube_count_new_3d(0, 3, 4)), 1);
  cr_assert_eq(cubert_cube_count_is_empty(cubert_cube_count_new_3d(2, 0, 4)), 1);
  cr_assert_eq(cubert_cube_count_is_empty(cubert_cube_count_new_3d(2, 3, 0)), 1);
  cr_assert_eq(cubert_cube_count_is_empty(cubert_cube_count_new_1d(0)), 1);
  cubert_cube_dim d = cubert_cube_dim_new_3d(5, 6, 7);
  cr_assert(d.x == 5 && d.y == 6 && d.z == 7);
  cr_assert_eq(cubert_cube_dim_num_elems(d), 210);
  cr_assert_eq(cubert_cube_dim_num_elems(cubert_cube_dim_new_3d(UINT32_MAX, UINT32_MAX, 1)),
               (uint64_t)UINT32_MAX * UINT32_MAX);
  cr_assert_eq(
      cubert_cube_dim_num_elems(cubert_cube_dim_new_3d(UINT32_MAX, UINT32_MAX, UINT32_MAX)),
      UINT64_MAX);
}

Test(core_geometry, select_without_client_is_invalid_argument) {
  cubert_cube_count_selection sel;
  cubert_status s = cubert_cube_count_select(NULL, 10, &sel);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_INVALID_ARGUMENT);
  assert_contains(cubert_status_message(s), "client");
  cubert_status_free(s);
  cubert_cube_dim d = cubert_cube_dim_new(NULL, 1000);
  cr_assert(d.x == 1 && d.y == 1 && d.z == 1);
}

Test(core_geometry, select_uses_the_client_properties) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create("cpu", &client);
  if (s) {
    char reason[512];
    snprintf(reason, sizeof(reason), "no cpu client: %s", cubert_status_message(s));
    cubert_status_free(s);
    cr_skip_test("%s", reason);
  }
  const cubert_device_properties *p = cubert_client_properties(client);
  cr_assert_not_null(p);
  const uint32_t n = 123457;
  cubert_cube_count_selection via_client, pure;
  cr_assert_null(cubert_cube_count_select(client, n, &via_client));
  cr_assert_null(cubert_cube_count_selection_from(p->hardware.max_cube_count, n, &pure));
  cr_assert_eq(via_client.kind, pure.kind);
  cr_assert_eq(via_client.num_cubes, pure.num_cubes);
  cr_assert_geq(via_client.num_cubes, n);
  cubert_cube_dim d = cubert_cube_dim_new(client, 1 << 20);
  cubert_cube_dim e =
      cubert_cube_dim_for_units(1 << 20, p->hardware.plane_size_max, p->hardware.max_units_per_cube,
                                p->hardware.num_cpu_cores);
  cr_assert(d.x == e.x && d.y == e.y && d.z == e.z);
  cr_assert_leq(cubert_cube_dim_num_elems(d), p->hardware.max_units_per_cube);
  cubert_client_release(client);
}

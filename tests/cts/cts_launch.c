/* Launch validation, cube geometry with a client, dynamic cube counts, execution modes. */
#include "cts.h"

TestSuite(launch, .init = cts_setup, .fini = cts_teardown);

static cubert_handle *filled(uint32_t n) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, (size_t)n * 4, &h));
  return h;
}

static cubert_status fill(cubert_handle *h, uint64_t n, uint32_t value, cubert_cube_count count,
                          cubert_cube_dim dim) {
  uint64_t info[2] = {n, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(cts_client, &cubert_kernel_fill_u32, count, dim, &args);
}

Test(launch, zero_cube_dim_is_rejected_and_client_stays_usable) {
  cubert_handle *h = filled(16);
  ASSERT_CODE(fill(h, 16, 1, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(0, 1, 1)),
              CUBERT_CODE_INVALID_ARGUMENT, "zero axis");
  ASSERT_CODE(fill(h, 16, 1, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(4, 1, 0)),
              CUBERT_CODE_INVALID_ARGUMENT, "(4, 1, 0)");
  ASSERT_OK(fill(h, 16, 42, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(16, 1, 1)));
  uint32_t v[16];
  cts_read(h, v, sizeof v);
  for (int i = 0; i < 16; ++i) cr_assert_eq(v[i], 42);
  cubert_handle_release(h);
}

Test(launch, oversized_cube_dim_names_the_limit) {
  const cubert_hardware_properties *hw = &cubert_client_properties(cts_client)->hardware;
  cubert_handle *h = filled(16);
  char limit[32];
  snprintf(limit, sizeof limit, "%u", hw->max_cube_dim[0]);
  cubert_status s = fill(h, 16, 1, cubert_cube_count_new_3d(1, 1, 1),
                         cubert_cube_dim_new_3d(hw->max_cube_dim[0] + 1, 1, 1));
  cr_assert_not_null(s);
  cr_assert(cubert_status_code(s) == CUBERT_CODE_CUBE_DIM, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_RESOURCE_LIMIT);
  cr_assert(strstr(cubert_status_message(s), limit), "%s", cubert_status_message(s));
  uint32_t req[3], max[3];
  cr_assert(cubert_status_dims(s, req, max));
  cr_assert_eq(req[0], hw->max_cube_dim[0] + 1);
  cr_assert_eq(max[0], hw->max_cube_dim[0]);
  cubert_status_free(s);
  cubert_handle_release(h);
}

Test(launch, too_many_units_per_cube_names_the_limit) {
  const cubert_hardware_properties *hw = &cubert_client_properties(cts_client)->hardware;
  /* within every axis limit, over the unit limit */
  uint32_t x = hw->max_cube_dim[0], y = hw->max_units_per_cube / x + 1;
  if (y > hw->max_cube_dim[1]) cr_skip_test("no cube dim exceeds only the unit limit here");
  cubert_handle *h = filled(16);
  cubert_status s =
      fill(h, 16, 1, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(x, y, 1));
  cr_assert_not_null(s);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_UNITS, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_requested(s), (uint64_t)x * y);
  cr_assert_eq(cubert_status_max(s), hw->max_units_per_cube);
  char limit[32];
  snprintf(limit, sizeof limit, "%u", hw->max_units_per_cube);
  cr_assert(strstr(cubert_status_message(s), limit), "%s", cubert_status_message(s));
  cubert_status_free(s);
  cubert_handle_release(h);
}

/* 64 MiB of shared memory per cube: tests/kernels/launch_limits.cube.c, and
   tests/kernels/bad_opencl.cube.c, whose OpenCL program no compiler builds. */
extern const cubert_kernel_def too_much_shared_memory, shared_over_a_failing_build;
enum { DECLARED_SHARED_MIB = 64 };

/* Launches `kernel` (64 units, one cube) in every mode and in dry run, and asserts each is
   refused with SHARED_MEMORY naming the kernel, the declared bytes and the device's limit;
   then that the output is untouched and the client usable. */
static void expect_shared_memory_refused(const cubert_kernel_def *kernel) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  const uint64_t declared = (uint64_t)DECLARED_SHARED_MIB << 20;
  cr_assert_lt(p->hardware.max_shared_memory_size, declared, "%s must ask for more than %llu",
               kernel->name, (unsigned long long)p->hardware.max_shared_memory_size);
  cubert_client *dry = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, cubert_client_stream(cts_client), &dry));
  ASSERT_OK(cubert_client_set_dry_run(dry, 1));
  uint32_t sentinel[64];
  for (int i = 0; i < 64; ++i) sentinel[i] = 7u + (uint32_t)i;
  cubert_handle *out = cts_buffer(sentinel, sizeof sentinel);
  cubert_kernel_args args = {&out, 1, NULL, 0};
  char asked[160];
  snprintf(asked, sizeof asked,
           "kernel \"%s\" requests %llu bytes of shared memory, maximum %llu bytes", kernel->name,
           (unsigned long long)declared, (unsigned long long)p->hardware.max_shared_memory_size);
  const cubert_execution_mode modes[3] = {CUBERT_EXECUTION_CHECKED, CUBERT_EXECUTION_UNCHECKED,
                                          CUBERT_EXECUTION_VALIDATE};
  for (int i = 0; i < 4; ++i) {
    cubert_status s = cubert_client_launch_mode(
        i < 3 ? cts_client : dry, kernel, cubert_cube_count_new_3d(1, 1, 1),
        cubert_cube_dim_new_3d(64, 1, 1), &args, modes[i % 3]);
    const char *m = cubert_status_message(s);
    cr_assert_not_null(s, "%s: launch %d was accepted", kernel->name, i);
    cr_assert_eq(cubert_status_code(s), CUBERT_CODE_SHARED_MEMORY, "launch %d: %s", i, m);
    cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_RESOURCE_LIMIT);
    cr_assert_eq(cubert_status_requested(s), declared, "launch %d: %s", i, m);
    cr_assert_eq(cubert_status_max(s), p->hardware.max_shared_memory_size, "launch %d: %s", i, m);
    cr_assert(strstr(m, asked), "\"%s\" in: %s", asked, m);
    cr_assert(strstr(m, p->name), "the device's name in: %s", m);
    cubert_status_free(s);
  }
  cubert_client_release(dry);
  uint32_t back[64];
  cts_read(out, back, sizeof back);
  cr_assert_arr_eq(back, sentinel, sizeof back, "a refused launch wrote its output");
  ASSERT_OK(fill(out, 64, 5, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(64, 1, 1)));
  cts_read(out, back, sizeof back);
  for (int i = 0; i < 64; ++i) cr_assert_eq(back[i], 5u, "element %d after the refusals", i);
  cubert_handle_release(out);
}

/* A kernel that declares more shared memory than the device has per cube is refused with
   SHARED_MEMORY before anything is queued, in every mode and in dry run. */
Test(launch, too_much_shared_memory_names_the_limit) {
  expect_shared_memory_refused(&too_much_shared_memory);
}

/* The same before the program is built: a driver may refuse to build a kernel with more shared
   memory than it has (NVIDIA's ptxas: "uses too much shared data", a COMPILATION error before
   the core checked the shared type on OpenCL); the size the kernel declares is known up front. */
Test(launch, too_much_shared_memory_is_refused_before_the_program_is_built) {
  expect_shared_memory_refused(&shared_over_a_failing_build);
}

/* Issue 10 #3: a launch of more cubes in total than the device runs (PoCL: 2^32 - 1) is
   refused before anything is queued, naming the numbers; the client stays usable. */
Test(launch, more_cubes_than_the_device_runs_are_refused) {
  const cubert_hardware_properties *hw = &cubert_client_properties(cts_client)->hardware;
  if (!hw->max_total_cubes) cr_skip_test("the device has no limit on the cubes of a launch");
  uint32_t x = hw->max_cube_count[0] < 65536 ? hw->max_cube_count[0] : 65536;
  uint64_t y64 = hw->max_total_cubes / x + 1;
  if (y64 > hw->max_cube_count[1]) cr_skip_test("no count exceeds only the total limit here");
  uint32_t y = (uint32_t)y64;
  cubert_handle *h = filled(16);
  cubert_status s =
      fill(h, 16, 1, cubert_cube_count_new_3d(x, y, 1), cubert_cube_dim_new_3d(1, 1, 1));
  cr_assert_not_null(s, "(%u, %u, 1) cubes were accepted", x, y);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_TOO_MANY_RESOURCES, "%s",
               cubert_status_message(s));
  cr_assert_eq(cubert_status_requested(s), (uint64_t)x * y);
  cr_assert_eq(cubert_status_max(s), hw->max_total_cubes);
  cubert_status_free(s);
  ASSERT_OK(fill(h, 16, 42, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(16, 1, 1)));
  uint32_t v[16];
  cts_read(h, v, sizeof v);
  for (int i = 0; i < 16; ++i) cr_assert_eq(v[i], 42);
  cubert_handle_release(h);
}

Test(launch, zero_cube_count_is_a_no_op) {
  cubert_handle *h = NULL;
  uint32_t v[4] = {1, 2, 3, 4}, back[4];
  h = cts_buffer(v, sizeof v);
  ASSERT_OK(fill(h, 4, 9, cubert_cube_count_new_3d(0, 1, 1), cubert_cube_dim_new_3d(4, 1, 1)));
  cts_read(h, back, sizeof back);
  cr_assert_arr_eq(back, v, sizeof v);
  cubert_handle_release(h);
}

Test(launch, kernel_without_implementation_names_kernel_and_backend) {
  cubert_kernel_def k = {.name = "nothing_here"};
  cubert_handle *h = filled(4);
  cubert_kernel_args args = {&h, 1, NULL, 0};
  cubert_status s = cubert_client_launch(cts_client, &k, cubert_cube_count_new_3d(1, 1, 1),
                                         cubert_cube_dim_new_3d(1, 1, 1), &args);
  cr_assert_not_null(s);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_COMPILATION);
  cr_assert(strstr(cubert_status_message(s), "nothing_here"), "%s", cubert_status_message(s));
  cr_assert(strstr(cubert_status_message(s), cubert_client_properties(cts_client)->backend), "%s",
            cubert_status_message(s));
  cubert_status_free(s);
  cubert_handle_release(h);
}

Test(launch, dynamic_cube_count_reads_the_buffer) {
  const uint32_t n = 4096, dim = 64;
  uint32_t xyz[3] = {n / dim / 2, 2, 1};
  cubert_handle *count = cts_buffer(xyz, sizeof xyz);
  cubert_handle *h = filled(n + 64);
  uint32_t zero[64] = {0};
  ASSERT_OK(cubert_client_write(cts_client, h, (uint64_t)n * 4, zero, sizeof zero));
  ASSERT_OK(
      fill(h, n + 64, 77, cubert_cube_count_dynamic(count), cubert_cube_dim_new_3d(dim, 1, 1)));
  uint32_t *v = malloc((n + 64) * 4);
  cts_read(h, v, (n + 64) * 4);
  for (uint32_t i = 0; i < n; ++i) cr_assert_eq(v[i], 77, "element %u", i);
  for (uint32_t i = n; i < n + 64; ++i) cr_assert_eq(v[i], 0, "element %u past the dispatch", i);
  free(v);
  /* a count buffer that is too small */
  cubert_handle *small = cts_buffer(xyz, 8);
  ASSERT_CODE(fill(h, n, 1, cubert_cube_count_dynamic(small), cubert_cube_dim_new_3d(dim, 1, 1)),
              CUBERT_CODE_INVALID_ARGUMENT, "12 bytes");
  cubert_handle_release(small);
  cubert_handle_release(count);
  cubert_handle_release(h);
}

Test(launch, unchecked_mode_runs) {
  cubert_handle *h = filled(256);
  uint64_t info[2] = {256, 5};
  cubert_kernel_args args = {&h, 1, info, 2};
  ASSERT_OK(cubert_client_launch_unchecked(cts_client, &cubert_kernel_fill_u32,
                                           cubert_cube_count_new_3d(4, 1, 1),
                                           cubert_cube_dim_new_3d(64, 1, 1), &args));
  uint32_t v[256];
  cts_read(h, v, sizeof v);
  for (int i = 0; i < 256; ++i) cr_assert_eq(v[i], 5);
  cubert_handle_release(h);
}

Test(launch, spread_2d_and_3d_counts_cover_every_element) {
  const uint32_t n = 3 * 5 * 7 * 32;
  cubert_handle *h = filled(n);
  ASSERT_OK(fill(h, n, 3, cubert_cube_count_new_3d(3, 5, 7), cubert_cube_dim_new_3d(8, 4, 1)));
  uint32_t *v = malloc(n * 4);
  cts_read(h, v, n * 4);
  for (uint32_t i = 0; i < n; ++i) cr_assert_eq(v[i], 3, "element %u", i);
  free(v);
  cubert_handle_release(h);
}

Test(launch, cube_geometry_with_the_client) {
  const cubert_hardware_properties *hw = &cubert_client_properties(cts_client)->hardware;
  cubert_cube_count_selection sel;
  ASSERT_OK(cubert_cube_count_select(cts_client, 1000, &sel));
  cr_assert_eq(sel.kind, CUBERT_CUBE_COUNT_EXACT);
  cr_assert_eq((uint64_t)sel.cube_count.x * sel.cube_count.y * sel.cube_count.z, 1000);
  cubert_cube_dim d = cubert_cube_dim_new(cts_client, 1u << 20);
  cr_assert_leq(cubert_cube_dim_num_elems(d), hw->max_units_per_cube);
  cr_assert_geq(cubert_cube_dim_num_elems(d), 1);
  if (hw->num_cpu_cores) {
    cr_assert_eq(d.x, 1);
    cr_assert_eq(d.y, hw->num_cpu_cores < hw->max_units_per_cube ? hw->num_cpu_cores
                                                                 : hw->max_units_per_cube);
  } else {
    cr_assert_eq(d.x, hw->plane_size_max);
  }
}

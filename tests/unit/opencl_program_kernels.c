/* Program kernels (cubert/program.h) and the OpenCL server's caches and profiles, through
   clients: a second client (a device instance of its own) finds the program in the disk cache
   and still checks the arguments by name, and CUBERT_PROFILE lists a launch under the name its
   definition gives. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/program.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "opencl_test.h"
#include "unit/core_capture.h"
#include "unit/core_env.h"

static const char *kSource =
    "__kernel void scaled(__global int *out, __global const int *in, int n, int k) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  if (i < n) out[i] = in[i] * k + OFFSET;\n"
    "}\n";

/* Opens a private instance of the OpenCL device under test, or skips without one. */
static cubert_client *open_private(void) {
  char selector[96];
  snprintf(selector, sizeof selector, "%s!private", ocl_test_selector(NULL));
  cubert_client *c = NULL;
  cubert_status s = cubert_client_create(selector, &c);
  if (s && cubert_status_code(s) == CUBERT_CODE_NOT_FOUND) {
    cubert_status_free(s);
    cr_skip_test("no OpenCL device");
  }
  cr_assert_null(s, "%s", cubert_status_message(s));
  return c;
}

/* Runs `def` on a new private instance: 64 units of out = in * 2 + OFFSET (7). Returns what
   the library logged meanwhile (in `cap`). */
static const char *run_once(const cubert_kernel_def *def, core_capture *cap) {
  cubert_client *c = open_private();
  enum { N = 64 };
  int32_t in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = i;
  cubert_handle *hin = NULL, *hout = NULL;
  cr_assert_null(cubert_client_create_buffer(c, in, sizeof in, &hin));
  cr_assert_null(cubert_client_empty(c, sizeof out, &hout));
  int32_t n = N, k = 2;
  cubert_arg args[4] = {cubert_arg_buffer(hout), cubert_arg_buffer(hin), CUBERT_ARG_VALUE(n),
                        CUBERT_ARG_VALUE(k)};
  cr_assert(core_capture_begin(cap));
  cubert_status s = cubert_client_launch_args(c, def, cubert_cube_count_new_3d(4, 1, 1),
                                              cubert_cube_dim_new_3d(16, 1, 1), args, 4);
  if (!s) s = cubert_client_sync(c);
  /* The arguments are still checked by name when the program came from a binary. */
  cubert_arg wrong[4] = {cubert_arg_buffer(hout), CUBERT_ARG_VALUE(n), CUBERT_ARG_VALUE(n),
                         CUBERT_ARG_VALUE(k)};
  cubert_status w = cubert_client_launch_args(c, def, cubert_cube_count_new_3d(4, 1, 1),
                                              cubert_cube_dim_new_3d(16, 1, 1), wrong, 4);
  const char *text = core_capture_end(cap);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cr_assert(w && strstr(cubert_status_message(w), "argument 1 ('in'"), "%s",
            cubert_status_message(w));
  cubert_status_free(w);
  cr_assert_null(cubert_client_read(c, hout, out, sizeof out));
  for (int i = 0; i < N; ++i) cr_assert_eq(out[i], 2 * i + 7, "out[%d]", i);
  cubert_handle_release(hin);
  cubert_handle_release(hout);
  cubert_client_release(c);
  return text;
}

Test(opencl_program_kernels, a_second_client_finds_the_program_in_the_disk_cache) {
  ocl_test_env();
  char dir[2300];
  ocl_test_temp_dir(dir, sizeof dir);
  setenv("CUBERT_CACHE_DIR", dir, 1);
  setenv("CUBERT_OPENCL_BINARY_CACHE", "on", 1);
  core_env_set("CUBERT_LOG", "info,compile");
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  cr_assert_null(cubert_program_create(kSource, "-DOFFSET=7", &p));
  cr_assert_null(cubert_program_kernel(p, "scaled", NULL, &def));
  core_capture first, second;
  const char *a = run_once(def, &first);
  cr_assert(strstr(a, "kernel \"scaled\"") && strstr(a, "program cache miss, built from source"),
            "%s", a);
  const char *b = run_once(def, &second);
  cr_assert(strstr(b, "kernel \"scaled\"") && strstr(b, "program cache hit (disk)"), "%s", b);
  cubert_program_release(p);
  unsetenv("CUBERT_OPENCL_BINARY_CACHE");
  unsetenv("CUBERT_CACHE_DIR");
  core_env_set("CUBERT_LOG", NULL);
}

/* cubert's mode macros stay out of a program's build: one build serves every mode. */
Test(opencl_program_kernels, the_kernel_languages_mode_macros_do_not_reach_a_program) {
  ocl_test_env();
  static const char *source =
      "#if defined(CUBERT_MODE) || defined(CUBERT_CHECKED)\n"
      "#error cubert's mode macros reached a foreign program\n"
      "#endif\n"
      "__kernel void scaled(__global int *out, __global const int *in,\n"
      "                     int n, int k) {\n"
      "  int i = (int)get_global_id(0);\n"
      "  if (i < n) out[i] = in[i] * k + OFFSET;\n"
      "}\n";
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  cr_assert_null(cubert_program_create(source, "-DOFFSET=7", &p));
  cr_assert_null(cubert_program_kernel(p, "scaled", NULL, &def));
  core_capture cap;
  run_once(def, &cap); /* asserts out[i] == 2 * i + 7 */
  cubert_program_release(p);
}

Test(opencl_program_kernels, a_profile_lists_the_launch_under_the_definitions_name) {
  ocl_test_env();
  core_env_set("CUBERT_PROFILE", "basic");
  cubert_program *p = NULL;
  const cubert_kernel_def *def = NULL;
  cr_assert_null(cubert_program_create(kSource, "-DOFFSET=7", &p));
  cubert_program_kernel_options o = {.name = "rodinia_scaled"};
  cr_assert_null(cubert_program_kernel(p, "scaled", &o, &def));
  core_capture cap;
  const char *text = run_once(def, &cap);
  core_env_set("CUBERT_PROFILE", NULL);
  cr_assert(strstr(text, "| rodinia_scaled\n"), "%s", text);
  cubert_program_release(p);
}

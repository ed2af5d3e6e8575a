/* CUBERT_PROFILE's levels on the CPU server (reference ProfileLevel, seed-client launch_inner:
   profiled launches are registered with more detail as the level rises): basic names the
   kernel, medium adds the launch's cube count, full adds its cube dim and execution mode. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "unit/core_capture.h"
#include "unit/core_env.h"

/* The launch lines one fill_u32 launch of 3 cubes x 64 units prints at `level`. */
static const char *lines_at(const char *level, core_capture *cap) {
  core_env_set("CUBERT_PROFILE", level);
  cubert_client *c = NULL;
  cr_assert_null(cubert_client_create("cpu!private", &c));
  cubert_handle *h = NULL;
  cr_assert_null(cubert_client_empty(c, 192 * 4, &h));
  uint64_t info[2] = {192, 7};
  cubert_kernel_args args = {&h, 1, info, 2};
  cr_assert(core_capture_begin(cap));
  cubert_status s =
      cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(3, 1, 1),
                           cubert_cube_dim_new_3d(64, 1, 1), &args);
  const char *text = core_capture_end(cap);
  cr_assert_null(s, "%s", cubert_status_message(s));
  uint32_t back[192];
  cr_assert_null(cubert_client_read(c, h, back, sizeof back));
  cr_assert_eq(back[191], 7);
  cubert_handle_release(h);
  cubert_client_release(c);
  core_env_set("CUBERT_PROFILE", NULL);
  return text;
}

Test(profile_levels, basic_names_the_kernel_only) {
  core_capture cap;
  const char *text = lines_at("basic", &cap);
  cr_assert(strstr(text, "| fill_u32\n"), "%s", text);
  cr_assert_null(strstr(text, "CubeCount"), "%s", text);
}

Test(profile_levels, medium_adds_the_cube_count) {
  core_capture cap;
  const char *text = lines_at("medium", &cap);
  cr_assert(strstr(text, "| fill_u32: CubeCount (3, 1, 1)\n"), "%s", text);
  cr_assert_null(strstr(text, "CubeDim"), "%s", text);
}

Test(profile_levels, full_adds_the_cube_dim_and_the_mode) {
  core_capture cap;
  const char *text = lines_at("full", &cap);
  cr_assert(strstr(text, "| fill_u32: CubeCount (3, 1, 1) CubeDim (64, 1, 1) checked\n"), "%s",
            text);
}

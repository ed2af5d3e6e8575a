/* Profile durations carry their start and end ticks (the reference's ProfileDuration with
   ProfileTicks, seed-client profile / seed-server-base end_profile): on one device instance,
   regions measured one after another lie one after another on the same clock. */
#include "cts.h"

static cubert_status fill(cubert_client *c, void *user) {
  uint64_t info[2] = {256 * 256, 5};
  cubert_handle *h = user;
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(256, 1, 1),
                              cubert_cube_dim_new_3d(256, 1, 1), &args);
}

TestSuite(profile, .init = cts_setup, .fini = cts_teardown);

Test(profile, durations_carry_their_start_and_end_ticks) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4u << 16, &h));
  ASSERT_OK(fill(cts_client, h)); /* builds the kernel outside the regions */
  ASSERT_OK(cubert_client_sync(cts_client));
  cubert_profile_duration first = {0}, second = {0};
  ASSERT_OK(cubert_client_profile(cts_client, fill, h, &first));
  ASSERT_OK(cubert_client_profile(cts_client, fill, h, &second));
  const cubert_profile_duration *d[2] = {&first, &second};
  for (int i = 0; i < 2; ++i) {
    cr_assert_gt(d[i]->duration_ns, 0);
    cr_assert_gt(d[i]->start_ticks, 0, "region %d has no start tick", i);
    cr_assert_eq(d[i]->end_ticks - d[i]->start_ticks, d[i]->duration_ns,
                 "region %d: end %llu - start %llu != duration %llu", i,
                 (unsigned long long)d[i]->end_ticks, (unsigned long long)d[i]->start_ticks,
                 (unsigned long long)d[i]->duration_ns);
  }
  cr_assert_eq(first.method, second.method);
  cr_assert_geq(second.start_ticks, first.end_ticks,
                "the second region (from %llu) starts before the first ended (%llu)",
                (unsigned long long)second.start_ticks, (unsigned long long)first.end_ticks);
  uint32_t back[4];
  cts_read(h, back, sizeof back);
  cr_assert_eq(back[3], 5);
  cubert_handle_release(h);
}

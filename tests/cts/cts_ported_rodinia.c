/* Kernel-language ports of five Rodinia shapes (tests/kernels/rodinia.cube.c: nw, backprop,
   srad, kmeans, bfs) on every server, against the host references their unchanged OpenCL C programs
   match in cts_program_rodinia.c (rodinia_shapes.h) with the same tolerances: the issue's
   "port one kernel at a time with the same results on both servers". The suite also runs in
   validate mode on the CPU (sanitizer_clean_cts), where the ports must be free of data races:
   bfs's port writes with atomics what several of the original's units write alike. */
#include <stdint.h>

#include "cts.h"
#include "rodinia_shapes.h"

TestSuite(ported_rodinia, .init = cts_setup, .fini = cts_teardown);

extern const cubert_kernel_def ported_nw, ported_backprop_forward, ported_srad_coefficients,
    ported_srad_update, ported_kmeans_assign, ported_bfs_expand, ported_bfs_update;

static void launch(const cubert_kernel_def *k, cubert_cube_count count, cubert_cube_dim dim,
                   cubert_handle **buffers, uint32_t buffer_count, const uint64_t *info,
                   uint32_t info_count) {
  const cubert_kernel_args a = {buffers, buffer_count, info, info_count};
  ASSERT_OK(cubert_client_launch(cts_client, k, count, dim, &a));
}

Test(ported_rodinia, nw_anti_diagonal_tiles_as_a_cube_kernel) {
  enum { B = RODINIA_NW_BLOCK, BLOCKS = 3, N = BLOCKS * B, COLS = N + 1 };
  const int32_t penalty = 2;
  static int32_t score[COLS * COLS], ref[COLS * COLS], want[COLS * COLS], got[COLS * COLS];
  rodinia_nw_inputs(score, ref, N, penalty);
  memcpy(want, score, sizeof want);
  rodinia_nw_ref(want, ref, N, penalty);
  cubert_handle *b[2] = {cts_buffer(score, sizeof score), cts_buffer(ref, sizeof ref)};
  uint64_t info[4];
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_nw, info, 4, 0, COLS));
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_nw, info, 4, 1, penalty));
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_nw, info, 4, 3, BLOCKS));
  for (int32_t diag = 0; diag < 2 * BLOCKS - 1; ++diag) {
    const uint32_t tiles = (uint32_t)(diag < BLOCKS ? diag + 1 : 2 * BLOCKS - 1 - diag);
    ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_nw, info, 4, 2, diag));
    launch(&ported_nw, cubert_cube_count_new_3d(tiles, 1, 1), cubert_cube_dim_new_3d(B, 1, 1), b, 2,
           info, 4);
  }
  cts_read(b[0], got, sizeof got);
  for (int i = 0; i < COLS * COLS; ++i)
    cr_assert_eq(got[i], want[i], "score (%d, %d): %d, expected %d", i / COLS, i % COLS, got[i],
                 want[i]);
  cubert_handle_release(b[0]);
  cubert_handle_release(b[1]);
}

Test(ported_rodinia, backprop_layer_forward_as_a_cube_kernel) {
  enum { N_IN = 48, HID = 20 };
  float input[N_IN], weights[N_IN * HID], partial[3 * HID], want[3 * HID], hidden[HID],
      want_hidden[HID];
  rodinia_backprop_inputs(input, weights, N_IN, HID);
  rodinia_backprop_ref(input, weights, N_IN, HID, want, want_hidden);
  cubert_handle *b[3] = {cts_buffer(input, sizeof input), cts_buffer(weights, sizeof weights)};
  ASSERT_OK(cubert_client_empty(cts_client, sizeof partial, &b[2]));
  uint64_t info[1];
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_backprop_forward, info, 1, 0, HID));
  launch(&ported_backprop_forward, cubert_cube_count_new_3d(2, N_IN / 16, 1),
         cubert_cube_dim_new_3d(16, 16, 1), b, 3, info, 1);
  cts_read(b[2], partial, sizeof partial);
  rodinia_backprop_finish(partial, N_IN, HID, hidden);
  for (int i = 0; i < 3 * HID; ++i)
    cr_assert_float_eq(partial[i], want[i], 1e-5, "partial %d: %g, expected %g", i,
                       (double)partial[i], (double)want[i]);
  for (int h = 0; h < HID; ++h) cr_assert_float_eq(hidden[h], want_hidden[h], 1e-6, "hidden %d", h);
  for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
}

Test(ported_rodinia, srad_two_unit_kernels_with_named_scalars) {
  enum { ROWS = 12, COLS = 10, PIXELS = ROWS * COLS, STEPS = 2 };
  const float lambda = 0.5f;
  float image[PIXELS], want[PIXELS], scratch[5 * PIXELS];
  rodinia_srad_inputs(image, ROWS, COLS);
  memcpy(want, image, sizeof want);
  cubert_handle *b[6] = {cts_buffer(image, sizeof image)};
  for (int i = 1; i < 6; ++i) ASSERT_OK(cubert_client_empty(cts_client, PIXELS * 4, &b[i]));
  uint64_t info[3];
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_srad_coefficients, info, 3, 0, ROWS));
  ASSERT_OK(cubert_kernel_scalar_set_i32(&ported_srad_coefficients, info, 3, 1, COLS));
  for (int step = 0; step < STEPS; ++step) {
    float now[PIXELS];
    cts_read(b[0], now, sizeof now);
    ASSERT_OK(cubert_kernel_scalar_set_f32(&ported_srad_coefficients, info, 3, 2,
                                           rodinia_srad_q0sqr(now, PIXELS)));
    launch(&ported_srad_coefficients, cts_cubes(PIXELS, 32), cubert_cube_dim_new_3d(32, 1, 1), b, 6,
           info, 3);
    ASSERT_OK(cubert_kernel_scalar_set_f32(&ported_srad_update, info, 3, 2, lambda));
    launch(&ported_srad_update, cts_cubes(PIXELS, 32), cubert_cube_dim_new_3d(32, 1, 1), b, 6, info,
           3);
    rodinia_srad_ref_step(want, scratch, ROWS, COLS, lambda);
  }
  cts_read(b[0], image, sizeof image);
  for (int i = 0; i < PIXELS; ++i)
    cr_assert_float_eq(image[i], want[i], 1e-4, "pixel %d: %g, expected %g", i, (double)image[i],
                       (double)want[i]);
  for (int i = 0; i < 6; ++i) cubert_handle_release(b[i]);
}

/* A round on the device: the features and the round's centres uploaded, the port. */
static void kmeans_port_round(void *context, const float *features, const float *clusters,
                              int32_t *membership) {
  (void)context;
  enum {
    POINTS = RODINIA_KMEANS_POINTS,
    CLUSTERS = RODINIA_KMEANS_CLUSTERS,
    FEATURES = RODINIA_KMEANS_FEATURES
  };
  cubert_handle *b[3] = {cts_buffer(features, FEATURES * POINTS * 4),
                         cts_buffer(clusters, CLUSTERS * FEATURES * 4), NULL};
  ASSERT_OK(cubert_client_empty(cts_client, POINTS * 4, &b[2]));
  uint64_t info[3];
  ASSERT_OK(cubert_kernel_scalar_set_u32(&ported_kmeans_assign, info, 3, 0, POINTS));
  ASSERT_OK(cubert_kernel_scalar_set_u32(&ported_kmeans_assign, info, 3, 1, CLUSTERS));
  ASSERT_OK(cubert_kernel_scalar_set_u32(&ported_kmeans_assign, info, 3, 2, FEATURES));
  launch(&ported_kmeans_assign, cts_cubes(POINTS, 64), cubert_cube_dim_new_3d(64, 1, 1), b, 3, info,
         3);
  cts_read(b[2], membership, POINTS * 4);
  for (int i = 0; i < 3; ++i) cubert_handle_release(b[i]);
}

Test(ported_rodinia, kmeans_nearest_centre_as_a_unit_kernel) {
  rodinia_kmeans_check(kmeans_port_round, NULL);
}

Test(ported_rodinia, bfs_frontier_as_two_unit_kernels) {
  enum { N = 64 };
  int32_t starts[N], counts[N], edges[3 * N], cost[N], want[N];
  const int edge_count = rodinia_bfs_graph(starts, counts, edges, N);
  rodinia_bfs_ref(starts, counts, edges, N, want);
  uint8_t mask[N] = {1}, visited[N] = {1};
  uint32_t zero[N] = {0};
  for (int i = 0; i < N; ++i) cost[i] = i ? -1 : 0;
  cubert_handle *h[8] = {cts_buffer(starts, sizeof starts),
                         cts_buffer(counts, sizeof counts),
                         cts_buffer(edges, (size_t)edge_count * 4),
                         cts_buffer(mask, sizeof mask),
                         cts_buffer(zero, sizeof zero),
                         cts_buffer(visited, sizeof visited),
                         cts_buffer(cost, sizeof cost),
                         cts_buffer(zero, 4)};
  cubert_handle *update[4] = {h[3], h[4], h[5], h[7]};
  uint64_t info[1];
  ASSERT_OK(cubert_kernel_scalar_set_u32(&ported_bfs_expand, info, 1, 0, N));
  uint32_t over = 1, rounds = 0;
  for (; over; ++rounds) {
    cr_assert_lt(rounds, N, "the search did not end after %d rounds", N);
    ASSERT_OK(cubert_client_write(cts_client, h[7], 0, zero, 4));
    launch(&ported_bfs_expand, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), h, 7, info, 1);
    launch(&ported_bfs_update, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), update, 4, info,
           1);
    cts_read(h[7], &over, 4);
  }
  cts_read(h[6], cost, sizeof cost);
  int32_t depth = 0;
  for (int i = 0; i < N; ++i) {
    cr_assert_eq(cost[i], want[i], "node %d: cost %d, expected %d", i, cost[i], want[i]);
    depth = want[i] > depth ? want[i] : depth;
  }
  cr_assert_eq(rounds, (uint32_t)depth + 1, "one round per level and one that finds nothing");
  for (int i = 0; i < 8; ++i) cubert_handle_release(h[i]);
}

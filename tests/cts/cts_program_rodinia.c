/* The remaining Rodinia shapes of issue 38 (nw, backprop, lud, srad, kmeans, bfs; hotspot and
   pathfinder are in cts_program_shapes.c) as OpenCL C programs launched unchanged through
   cubert/program.h, compared with plain-C host references (rodinia_shapes.h). nw, kmeans and bfs
   bring CPU functions, so both servers compute them; backprop, lud and srad run on OpenCL only
   (the kernel-language ports of backprop and srad run on both: cts_ported_rodinia.c). */
#include <cubert/program.h>
#include <math.h>
#include <stdint.h>

#include "cts.h"
#include "rodinia_shapes.h"

TestSuite(program_rodinia, .init = cts_setup, .fini = cts_teardown);

static const cubert_kernel_def *kernel_of(cubert_program *p, const char *entry,
                                          const cubert_program_kernel_options *o) {
  const cubert_kernel_def *def = NULL;
  ASSERT_OK(cubert_program_kernel(p, entry, o, &def));
  return def;
}

static void launch(const cubert_kernel_def *def, cubert_cube_count count, cubert_cube_dim dim,
                   const cubert_arg *args, uint32_t arg_count) {
  ASSERT_OK(cubert_client_launch_args(cts_client, def, count, dim, args, arg_count));
}

static void skip_without_cpu_function(void) {
  if (!cts_is_opencl()) cr_skip_test("OpenCL only (no CPU function)");
}

/* ---- nw ---------------------------------------------------------------------------------- */

enum { NW_B = RODINIA_NW_BLOCK };

/* Reads nw's scalar arguments: cols, penalty, diag, blocks. */
static void nw_scalars(const cubert_cpu_ctx *ctx, int32_t *v) {
  for (uint32_t i = 0; i < 4; ++i) cubert_cpu_arg_get(ctx, 4 + i, &v[i], 4);
}

/* nw for the CPU server: one call per unit, cube barriers where the kernel has barrier(). */
static void nw_cpu(const cubert_cpu_ctx *ctx) {
  int32_t *score = cubert_cpu_arg_buffer(ctx, 0), *tile = cubert_cpu_arg_local(ctx, 2);
  const int32_t *ref = cubert_cpu_arg_buffer(ctx, 1);
  int32_t *sim = cubert_cpu_arg_local(ctx, 3), v[4] = {0};
  nw_scalars(ctx, v);
  const int cols = v[0], penalty = v[1], diag = v[2], blocks = v[3];
  const int t = (int)cubert_cpu_unit_linear(ctx, ctx->unit_begin);
  const int by =
      (diag < blocks ? 0 : diag - blocks + 1) + (int)cubert_cpu_cube_linear(ctx, ctx->unit_begin);
  const int base = by * NW_B * cols + (diag - by) * NW_B;
  for (int i = 0; i < NW_B; ++i) sim[i * NW_B + t] = ref[base + (i + 1) * cols + t + 1];
  if (t == 0) tile[0] = score[base];
  tile[t + 1] = score[base + t + 1];
  tile[(t + 1) * (NW_B + 1)] = score[base + (t + 1) * cols];
  cubert_cpu_sync_cube(ctx);
  for (int k = 0; k < 2 * NW_B - 1; ++k) {
    const int i = k - t, at = (i + 1) * (NW_B + 1) + t + 1;
    if (i >= 0 && i < NW_B) {
      const int32_t up = tile[at - NW_B - 1], left = tile[at - 1];
      const int32_t diagonal = tile[at - NW_B - 2] + sim[i * NW_B + t];
      const int32_t gap = (up > left ? up : left) - penalty;
      tile[at] = diagonal > gap ? diagonal : gap;
    }
    cubert_cpu_sync_cube(ctx);
  }
  for (int i = 0; i < NW_B; ++i)
    score[base + (i + 1) * cols + t + 1] = tile[(i + 1) * (NW_B + 1) + t + 1];
}

Test(program_rodinia, nw_anti_diagonal_blocks_with_local_tiles) {
  enum { BLOCKS = 3, N = BLOCKS * NW_B, COLS = N + 1 };
  const int32_t penalty = 2;
  static int32_t score[COLS * COLS], ref[COLS * COLS], want[COLS * COLS], got[COLS * COLS];
  rodinia_nw_inputs(score, ref, N, penalty);
  memcpy(want, score, sizeof want);
  rodinia_nw_ref(want, ref, N, penalty);
  const uint64_t tile_bytes = (NW_B + 1) * (NW_B + 1) * 4, sim_bytes = NW_B * NW_B * 4;
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_nw_source, NULL, &p));
  const cubert_program_kernel_options o = {
      .cpu = nw_cpu,
      .flags = CUBERT_KERNEL_SYNC_CUBE,
      .cpu_local_bytes = ((tile_bytes + 15) & ~(uint64_t)15) + sim_bytes}; /* each rounded to 16 */
  const cubert_kernel_def *nw = kernel_of(p, "nw", &o);
  cubert_handle *hs = cts_buffer(score, sizeof score), *hr = cts_buffer(ref, sizeof ref);
  int32_t cols = COLS, blocks = BLOCKS;
  for (int32_t diag = 0; diag < 2 * BLOCKS - 1; ++diag) {
    const uint32_t tiles = (uint32_t)(diag < BLOCKS ? diag + 1 : 2 * BLOCKS - 1 - diag);
    const cubert_arg args[8] = {cubert_arg_buffer(hs),        cubert_arg_buffer(hr),
                                cubert_arg_local(tile_bytes), cubert_arg_local(sim_bytes),
                                CUBERT_ARG_VALUE(cols),       CUBERT_ARG_VALUE(penalty),
                                CUBERT_ARG_VALUE(diag),       CUBERT_ARG_VALUE(blocks)};
    launch(nw, cubert_cube_count_new_3d(tiles, 1, 1), cubert_cube_dim_new_3d(NW_B, 1, 1), args, 8);
  }
  cts_read(hs, got, sizeof got);
  for (int i = 0; i < COLS * COLS; ++i)
    cr_assert_eq(got[i], want[i], "score (%d, %d): %d, expected %d", i / COLS, i % COLS, got[i],
                 want[i]);
  cubert_handle_release(hs);
  cubert_handle_release(hr);
  cubert_program_release(p);
}

/* ---- backprop ------------------------------------------------------------------------------ */

Test(program_rodinia, backprop_layer_forward_with_a_local_reduction) {
  skip_without_cpu_function();
  enum { N_IN = 48, HID = 20 };
  float input[N_IN], weights[N_IN * HID], partial[3 * HID], want[3 * HID], hidden[HID],
      want_hidden[HID];
  rodinia_backprop_inputs(input, weights, N_IN, HID);
  rodinia_backprop_ref(input, weights, N_IN, HID, want, want_hidden);
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_backprop_source, NULL, &p));
  cubert_handle *hi = cts_buffer(input, sizeof input), *hw = cts_buffer(weights, sizeof weights);
  cubert_handle *hp = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, sizeof partial, &hp));
  int32_t hid = HID;
  const cubert_arg args[6] = {cubert_arg_buffer(hi),     cubert_arg_buffer(hw),
                              cubert_arg_buffer(hp),     cubert_arg_local(16 * 4),
                              cubert_arg_local(256 * 4), CUBERT_ARG_VALUE(hid)};
  launch(kernel_of(p, "layer_forward", NULL), cubert_cube_count_new_3d(2, N_IN / 16, 1),
         cubert_cube_dim_new_3d(16, 16, 1), args, 6);
  cts_read(hp, partial, sizeof partial);
  rodinia_backprop_finish(partial, N_IN, HID, hidden);
  for (int i = 0; i < 3 * HID; ++i)
    cr_assert_float_eq(partial[i], want[i], 1e-5, "partial %d: %g, expected %g", i,
                       (double)partial[i], (double)want[i]);
  for (int h = 0; h < HID; ++h) cr_assert_float_eq(hidden[h], want_hidden[h], 1e-6, "hidden %d", h);
  cubert_handle_release(hi);
  cubert_handle_release(hw);
  cubert_handle_release(hp);
  cubert_program_release(p);
}

/* ---- lud ------------------------------------------------------------------------------------ */

Test(program_rodinia, lud_diagonal_perimeter_and_internal_kernels) {
  skip_without_cpu_function();
  enum { B = RODINIA_LUD_BLOCK, N = 3 * B };
  float m[N * N], want[N * N];
  rodinia_lud_inputs(m, N);
  memcpy(want, m, sizeof want);
  rodinia_lud_ref(want, N);
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_lud_source, NULL, &p));
  const cubert_kernel_def *diagonal = kernel_of(p, "lud_diagonal", NULL),
                          *perimeter = kernel_of(p, "lud_perimeter", NULL),
                          *internal = kernel_of(p, "lud_internal", NULL);
  cubert_handle *hm = cts_buffer(m, sizeof m);
  int32_t n = N;
  for (int32_t offset = 0; offset < N; offset += B) {
    const uint32_t rest = (uint32_t)(N - offset) / B - 1;
    const cubert_arg with_local[4] = {cubert_arg_buffer(hm), cubert_arg_local(B * B * 4),
                                      CUBERT_ARG_VALUE(n), CUBERT_ARG_VALUE(offset)};
    launch(diagonal, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(B, 1, 1), with_local,
           4);
    if (!rest) break;
    launch(perimeter, cubert_cube_count_new_3d(rest, 1, 1), cubert_cube_dim_new_3d(2 * B, 1, 1),
           with_local, 4);
    const cubert_arg args[3] = {cubert_arg_buffer(hm), CUBERT_ARG_VALUE(n),
                                CUBERT_ARG_VALUE(offset)};
    launch(internal, cubert_cube_count_new_3d(rest, rest, 1), cubert_cube_dim_new_3d(B, B, 1), args,
           3);
  }
  cts_read(hm, m, sizeof m);
  for (int i = 0; i < N * N; ++i)
    cr_assert_float_eq(m[i], want[i], 1e-4 * (1.0 + fabs(want[i])), "(%d, %d): %g, expected %g",
                       i / N, i % N, (double)m[i], (double)want[i]);
  cubert_handle_release(hm);
  cubert_program_release(p);
}

/* ---- srad ----------------------------------------------------------------------------------- */

Test(program_rodinia, srad_two_kernels_with_float_scalars) {
  skip_without_cpu_function();
  enum { ROWS = 12, COLS = 10, PIXELS = ROWS * COLS, STEPS = 2 };
  const float lambda = 0.5f;
  float image[PIXELS], want[PIXELS], scratch[5 * PIXELS];
  rodinia_srad_inputs(image, ROWS, COLS);
  memcpy(want, image, sizeof want);
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_srad_source, NULL, &p));
  const cubert_kernel_def *coefficients = kernel_of(p, "srad_coefficients", NULL),
                          *update = kernel_of(p, "srad_update", NULL);
  cubert_handle *hj = cts_buffer(image, sizeof image), *hd[5] = {NULL};
  for (int i = 0; i < 5; ++i) ASSERT_OK(cubert_client_empty(cts_client, PIXELS * 4, &hd[i]));
  int32_t rows = ROWS, cols = COLS;
  for (int step = 0; step < STEPS; ++step) {
    /* The host's reduction of each step, as the original computes q0sqr. */
    float now[PIXELS];
    cts_read(hj, now, sizeof now);
    const float q0sqr = rodinia_srad_q0sqr(now, PIXELS);
    cubert_arg args[9] = {
        cubert_arg_buffer(hj),    cubert_arg_buffer(hd[0]), cubert_arg_buffer(hd[1]),
        cubert_arg_buffer(hd[2]), cubert_arg_buffer(hd[3]), cubert_arg_buffer(hd[4]),
        CUBERT_ARG_VALUE(rows),   CUBERT_ARG_VALUE(cols),   CUBERT_ARG_VALUE(q0sqr)};
    launch(coefficients, cts_cubes(PIXELS, 32), cubert_cube_dim_new_3d(32, 1, 1), args, 9);
    args[8] = CUBERT_ARG_VALUE(lambda);
    launch(update, cts_cubes(PIXELS, 32), cubert_cube_dim_new_3d(32, 1, 1), args, 9);
    rodinia_srad_ref_step(want, scratch, ROWS, COLS, lambda);
  }
  cts_read(hj, image, sizeof image);
  for (int i = 0; i < PIXELS; ++i)
    cr_assert_float_eq(image[i], want[i], 1e-4, "pixel %d: %g, expected %g", i, (double)image[i],
                       (double)want[i]);
  cubert_handle_release(hj);
  for (int i = 0; i < 5; ++i) cubert_handle_release(hd[i]);
  cubert_program_release(p);
}

/* ---- kmeans --------------------------------------------------------------------------------- */

CUBERT_CPU_KERNEL(kmeans_assign_cpu, ctx, id) {
  const float *features = cubert_cpu_arg_buffer(ctx, 0), *clusters = cubert_cpu_arg_buffer(ctx, 1);
  int32_t *membership = cubert_cpu_arg_buffer(ctx, 2), npoints = 0, nclusters = 0, nfeatures = 0;
  cubert_cpu_arg_get(ctx, 3, &npoints, 4);
  cubert_cpu_arg_get(ctx, 4, &nclusters, 4);
  cubert_cpu_arg_get(ctx, 5, &nfeatures, 4);
  if (id >= (uint64_t)npoints) return;
  /* One point of the host reference: the same arithmetic in the same order. */
  float point[16];
  for (int f = 0; f < nfeatures && f < 16; ++f) point[f] = features[f * npoints + (int)id];
  rodinia_kmeans_assign_ref(point, clusters, 1, nclusters, nfeatures, &membership[id]);
}

/* A round on the device: the features and the round's centres uploaded, the program's kernel. */
static void kmeans_program_round(void *context, const float *features, const float *clusters,
                                 int32_t *membership) {
  enum {
    POINTS = RODINIA_KMEANS_POINTS,
    CLUSTERS = RODINIA_KMEANS_CLUSTERS,
    FEATURES = RODINIA_KMEANS_FEATURES
  };
  cubert_handle *hf = cts_buffer(features, FEATURES * POINTS * 4),
                *hc = cts_buffer(clusters, CLUSTERS * FEATURES * 4), *hm = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, POINTS * 4, &hm));
  int32_t npoints = POINTS, nclusters = CLUSTERS, nfeatures = FEATURES;
  const cubert_arg args[6] = {cubert_arg_buffer(hf),       cubert_arg_buffer(hc),
                              cubert_arg_buffer(hm),       CUBERT_ARG_VALUE(npoints),
                              CUBERT_ARG_VALUE(nclusters), CUBERT_ARG_VALUE(nfeatures)};
  launch(context, cts_cubes(POINTS, 64), cubert_cube_dim_new_3d(64, 1, 1), args, 6);
  cts_read(hm, membership, POINTS * 4);
  cubert_handle_release(hf);
  cubert_handle_release(hc);
  cubert_handle_release(hm);
}

Test(program_rodinia, kmeans_nearest_centre_then_a_host_reduction) {
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_kmeans_source, NULL, &p));
  const cubert_program_kernel_options o = {.cpu = kmeans_assign_cpu};
  rodinia_kmeans_check(kmeans_program_round, (void *)kernel_of(p, "kmeans_assign", &o));
  cubert_program_release(p);
}

/* ---- bfs ------------------------------------------------------------------------------------ */

CUBERT_CPU_KERNEL(bfs_expand_cpu, ctx, id) {
  const int32_t *starts = cubert_cpu_arg_buffer(ctx, 0), *counts = cubert_cpu_arg_buffer(ctx, 1),
                *edges = cubert_cpu_arg_buffer(ctx, 2);
  char *mask = cubert_cpu_arg_buffer(ctx, 3), *updating = cubert_cpu_arg_buffer(ctx, 4);
  const char *visited = cubert_cpu_arg_buffer(ctx, 5);
  int32_t *cost = cubert_cpu_arg_buffer(ctx, 6), n = 0;
  cubert_cpu_arg_get(ctx, 7, &n, 4);
  if (id >= (uint64_t)n || !mask[id]) return;
  mask[id] = 0;
  /* Units of other calls, on other threads, may write the same node alike: atomic stores, as a
     GPU's plain ones are. */
  for (int32_t e = starts[id]; e < starts[id] + counts[id]; ++e)
    if (!visited[edges[e]]) {
      __atomic_store_n(&cost[edges[e]], cost[id] + 1, __ATOMIC_RELAXED);
      __atomic_store_n(&updating[edges[e]], 1, __ATOMIC_RELAXED);
    }
}

CUBERT_CPU_KERNEL(bfs_update_cpu, ctx, id) {
  char *mask = cubert_cpu_arg_buffer(ctx, 0), *updating = cubert_cpu_arg_buffer(ctx, 1),
       *visited = cubert_cpu_arg_buffer(ctx, 2), *over = cubert_cpu_arg_buffer(ctx, 3);
  int32_t n = 0;
  cubert_cpu_arg_get(ctx, 4, &n, 4);
  if (id >= (uint64_t)n || !updating[id]) return;
  mask[id] = visited[id] = 1;
  updating[id] = 0;
  /* Several units write the same byte, as above. */
  __atomic_store_n(over, 1, __ATOMIC_RELAXED);
}

Test(program_rodinia, bfs_frontier_masks_and_a_flag_written_by_many_units) {
  enum { N = 64 };
  int32_t starts[N], counts[N], edges[3 * N], cost[N], want[N];
  rodinia_bfs_graph(starts, counts, edges, N);
  rodinia_bfs_ref(starts, counts, edges, N, want);
  char mask[N] = {1}, zero[N] = {0}, visited[N] = {1};
  for (int i = 0; i < N; ++i) cost[i] = i ? -1 : 0;
  cubert_program *p = NULL;
  ASSERT_OK(cubert_program_create(rodinia_bfs_source, NULL, &p));
  const cubert_program_kernel_options oe = {.cpu = bfs_expand_cpu}, ou = {.cpu = bfs_update_cpu};
  const cubert_kernel_def *expand = kernel_of(p, "bfs_expand", &oe),
                          *update = kernel_of(p, "bfs_update", &ou);
  cubert_handle *h[8] = {cts_buffer(starts, sizeof starts), cts_buffer(counts, sizeof counts),
                         cts_buffer(edges, sizeof edges),   cts_buffer(mask, sizeof mask),
                         cts_buffer(zero, sizeof zero),     cts_buffer(visited, sizeof visited),
                         cts_buffer(cost, sizeof cost),     cts_buffer(zero, 1)};
  int32_t n = N, rounds = 0;
  for (char over = 1; over; ++rounds) {
    cr_assert_lt(rounds, N, "the search did not end after %d rounds", N);
    ASSERT_OK(cubert_client_write(cts_client, h[7], 0, zero, 1));
    const cubert_arg e[8] = {cubert_arg_buffer(h[0]), cubert_arg_buffer(h[1]),
                             cubert_arg_buffer(h[2]), cubert_arg_buffer(h[3]),
                             cubert_arg_buffer(h[4]), cubert_arg_buffer(h[5]),
                             cubert_arg_buffer(h[6]), CUBERT_ARG_VALUE(n)};
    launch(expand, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), e, 8);
    const cubert_arg u[5] = {cubert_arg_buffer(h[3]), cubert_arg_buffer(h[4]),
                             cubert_arg_buffer(h[5]), cubert_arg_buffer(h[7]), CUBERT_ARG_VALUE(n)};
    launch(update, cts_cubes(N, 32), cubert_cube_dim_new_3d(32, 1, 1), u, 5);
    cts_read(h[7], &over, 1);
  }
  cts_read(h[6], cost, sizeof cost);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(cost[i], want[i], "node %d: cost %d, expected %d", i, cost[i], want[i]);
  int32_t depth = 0;
  for (int i = 0; i < N; ++i) depth = want[i] > depth ? want[i] : depth;
  cr_assert_eq(rounds, depth + 1, "one round per level and one that finds nothing");
  for (int i = 0; i < 8; ++i) cubert_handle_release(h[i]);
  cubert_program_release(p);
}

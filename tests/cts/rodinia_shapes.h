/* Workloads of the shapes of six Rodinia benchmarks (issue 38: nw, backprop, lud, srad, kmeans,
   bfs), written for the suite: each shape's OpenCL C program as an existing OpenCL program
   brings it (cts_program_rodinia.c launches it unchanged through cubert/program.h), the plain-C
   host computation that its results must match, the inputs, and for kmeans the round loop both
   tests share. cts_ported_rodinia.c runs the kernel-language ports
   (tests/kernels/rodinia.cube.c) against the same references. */
#ifndef CUBERT_TESTS_RODINIA_SHAPES_H
#define CUBERT_TESTS_RODINIA_SHAPES_H

#include <stdint.h>

/* ---- nw: Needleman-Wunsch over anti-diagonals of RODINIA_NW_BLOCK x RODINIA_NW_BLOCK tiles ----
   Kernel nw(score, ref, __local tile, __local sim, cols, penalty, diag, blocks): one cube of
   RODINIA_NW_BLOCK units per tile of block anti-diagonal `diag`, the score tile and its edges in
   `tile` ((B + 1)^2 ints), the tile's similarities in `sim` (B^2 ints). */
#define RODINIA_NW_BLOCK 8
extern const char rodinia_nw_source[];
/* score and ref are (n + 1) x (n + 1); row 0 and column 0 of score hold the gap penalties. */
void rodinia_nw_inputs(int32_t *score, int32_t *ref, int n, int32_t penalty);
/* Fills score's cells (i, j), i, j >= 1, by the recurrence the kernel computes. */
void rodinia_nw_ref(int32_t *score, const int32_t *ref, int n, int32_t penalty);

/* ---- backprop: a layer's forward pass, a __local reduction over 16 x 16 cubes ----
   Kernel layer_forward(input, weights, partial, __local in (16 floats), __local w (256 floats),
   hid): cube (x, y) multiplies inputs 16y .. 16y + 15 by their weights to hidden units
   16x .. 16x + 15 (weights[input * hid + hidden]) and sums each column into
   partial[y * hid + hidden]. */
extern const char rodinia_backprop_source[];
void rodinia_backprop_inputs(float *input, float *weights, int n_in, int hid);
/* partial as the kernel writes it, and the hidden layer's outputs: the sigmoid of the sums. */
void rodinia_backprop_ref(const float *input, const float *weights, int n_in, int hid,
                          float *partial, float *hidden);
/* The sigmoid of partial's column sums (the host's half of the layer). */
void rodinia_backprop_finish(const float *partial, int n_in, int hid, float *hidden);

/* ---- lud: blocked LU decomposition in place, without pivoting ----
   Kernels lud_diagonal(m, __local d, n, offset) (one cube of B units), lud_perimeter(m,
   __local d, n, offset) (a cube of 2B units per block right of and below the diagonal block)
   and lud_internal(m, n, offset) (B x B units per trailing block), B = RODINIA_LUD_BLOCK. */
#define RODINIA_LUD_BLOCK 8
extern const char rodinia_lud_source[];
/* A diagonally dominant n x n matrix (no pivot needed). */
void rodinia_lud_inputs(float *m, int n);
/* Doolittle's LU in place: L below the diagonal (unit diagonal not stored), U on and above. */
void rodinia_lud_ref(float *m, int n);

/* ---- srad: speckle-reducing diffusion, two kernels per step ----
   srad_coefficients(j, dn, ds, dw, de, c, rows, cols, q0sqr) and
   srad_update(j, dn, ds, dw, de, c, rows, cols, lambda), one unit per pixel (row-major), the
   borders clamped. */
extern const char rodinia_srad_source[];
void rodinia_srad_inputs(float *image, int rows, int cols);
/* The step's q0sqr: the variance over the squared mean of the whole image. */
float rodinia_srad_q0sqr(const float *image, int pixels);
/* One step of both kernels on image, with dn/ds/dw/de/c as scratch of `pixels` floats each. */
void rodinia_srad_ref_step(float *image, float *scratch, int rows, int cols, float lambda);

/* ---- kmeans: each point's nearest centre, then the host's new centres ----
   kmeans_assign(features, clusters, membership, npoints, nclusters, nfeatures): features are
   feature-major (features[f * npoints + p]), clusters centre-major (clusters[c * nfeatures + f]),
   the first of equally near centres wins. */
extern const char rodinia_kmeans_source[];
/* Points in well-separated groups around nclusters centres (no point is near a tie); the
   first centres are the first nclusters points. */
void rodinia_kmeans_inputs(float *features, float *clusters, int npoints, int nclusters,
                           int nfeatures);
void rodinia_kmeans_assign_ref(const float *features, const float *clusters, int npoints,
                               int nclusters, int nfeatures, int32_t *membership);
/* The mean of each centre's members (a centre without members stays). */
void rodinia_kmeans_centres(const float *features, const int32_t *membership, int npoints,
                            int nclusters, int nfeatures, float *clusters);
/* The suite's kmeans: RODINIA_KMEANS_POINTS points of RODINIA_KMEANS_FEATURES features around
   RODINIA_KMEANS_CLUSTERS centres, RODINIA_KMEANS_ROUNDS rounds. */
enum {
  RODINIA_KMEANS_POINTS = 96,
  RODINIA_KMEANS_CLUSTERS = 4,
  RODINIA_KMEANS_FEATURES = 3,
  RODINIA_KMEANS_ROUNDS = 3
};
/* One round's assignment on the device under test: membership of each point for `clusters`. */
typedef void (*rodinia_kmeans_assign_fn)(void *context, const float *features,
                                         const float *clusters, int32_t *membership);
/* Runs the rounds, each `assign` then the host's new centres, and asserts (Criterion) that every
   round's membership and the last centres are the host reference's. */
void rodinia_kmeans_check(rodinia_kmeans_assign_fn assign, void *context);

/* ---- bfs: breadth-first search by frontier masks ----
   bfs_expand(starts, counts, edges, mask, updating, visited, cost, n) and
   bfs_update(mask, updating, visited, over, n), masks of chars; every unit that finds new
   work writes 1 into over[0]. The host relaunches both until a round leaves over[0] at 0. */
extern const char rodinia_bfs_source[];
/* A connected graph of n nodes in CSR form (starts, counts, edges: at most 3 n edges). */
int rodinia_bfs_graph(int32_t *starts, int32_t *counts, int32_t *edges, int n);
/* The cost (edges from node 0) of every node; -1 where unreached. */
void rodinia_bfs_ref(const int32_t *starts, const int32_t *counts, const int32_t *edges, int n,
                     int32_t *cost);

#endif /* CUBERT_TESTS_RODINIA_SHAPES_H */

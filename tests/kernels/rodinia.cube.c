/* Kernel-language ports of five of the Rodinia-shaped OpenCL C programs of the suite
   (tests/cts/rodinia_shapes.c): the same computation, ported one kernel at a time as
   docs/porting.md describes; tests/cts/cts_ported_rodinia.c checks each against the host
   reference on both servers and against the unchanged program on OpenCL. */
#include "cubert/cube.h"

/* ---- backprop: layer_forward as a CUBE_KERNEL: the __local arrays become the shared struct,
   barrier() SYNC_CUBE(). Cubes of 16 x 16 units. ---- */

typedef struct backprop_shared {
  float input[16];
  float w[16][16];
} backprop_shared;

CUBE_KERNEL(ported_backprop_forward, (backprop_shared, sh), (const float, input),
            (const float, weights), (float, partial), (scalar, int32_t, hid)) {
  const uint32_t tx = UNIT_POS_X, ty = UNIT_POS_Y;
  const uint32_t row = CUBE_POS_Y * 16 + ty, col = ABSOLUTE_POS_X;
  if (tx == 0) sh->input[ty] = LOAD(input, row);
  SYNC_CUBE();
  sh->w[ty][tx] =
      col < (uint32_t)hid ? LOAD(weights, row * (uint32_t)hid + col) * sh->input[ty] : 0.0f;
  SYNC_CUBE();
  for (uint32_t s = 8; s > 0; s /= 2) {
    if (ty < s) sh->w[ty][tx] += sh->w[ty + s][tx];
    SYNC_CUBE();
  }
  if (ty == 0 && col < (uint32_t)hid)
    STORE(partial, CUBE_POS_Y * (uint32_t)hid + col, sh->w[0][tx]);
}

/* ---- nw: the anti-diagonal tile kernel as a CUBE_KERNEL of 8 units: its two __local
   arguments become the shared struct (their sizes were fixed by the host anyway), its int
   arguments named scalars. ---- */

typedef struct nw_shared {
  int32_t tile[9][9]; /* the tile's scores, row and column 0 from the tiles above and left */
  int32_t sim[8][8];
} nw_shared;

CUBE_KERNEL(ported_nw, (nw_shared, sh), (int32_t, score), (const int32_t, ref),
            (scalar, int32_t, cols), (scalar, int32_t, penalty), (scalar, int32_t, diag),
            (scalar, int32_t, blocks)) {
  const int32_t t = (int32_t)UNIT_POS_X;
  const int32_t by = (diag < blocks ? 0 : diag - blocks + 1) + (int32_t)CUBE_POS_X;
  const int32_t base = by * 8 * cols + (diag - by) * 8;
  for (int32_t i = 0; i < 8; ++i) sh->sim[i][t] = LOAD(ref, base + (i + 1) * cols + t + 1);
  if (t == 0) sh->tile[0][0] = LOAD(score, base);
  sh->tile[0][t + 1] = LOAD(score, base + t + 1);
  sh->tile[t + 1][0] = LOAD(score, base + (t + 1) * cols);
  SYNC_CUBE();
  for (int32_t k = 0; k < 15; ++k) { /* the tile's anti-diagonals; unit t: column t */
    const int32_t i = k - t;
    if (i >= 0 && i < 8)
      sh->tile[i + 1][t + 1] = max(sh->tile[i][t] + sh->sim[i][t],
                                   max(sh->tile[i][t + 1], sh->tile[i + 1][t]) - penalty);
    SYNC_CUBE();
  }
  for (int32_t i = 0; i < 8; ++i)
    STORE(score, base + (i + 1) * cols + t + 1, sh->tile[i + 1][t + 1]);
}

/* ---- srad: the two kernels as UNIT_KERNELs, one unit per pixel; the int and float arguments
   become named scalars. ---- */

UNIT_KERNEL(ported_srad_coefficients, LEN(j), (const float, j), (float, dn), (float, ds),
            (float, dw), (float, de), (float, c), (scalar, int32_t, rows), (scalar, int32_t, cols),
            (scalar, float, q0sqr)) {
  const int32_t i = (int32_t)UNIT_ID, r = i / cols, x = i % cols;
  const float jc = LOAD(j, i);
  const float n = LOAD(j, max(r - 1, 0) * cols + x) - jc;
  const float s = LOAD(j, min(r + 1, rows - 1) * cols + x) - jc;
  const float w = LOAD(j, r * cols + max(x - 1, 0)) - jc;
  const float e = LOAD(j, r * cols + min(x + 1, cols - 1)) - jc;
  const float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
  const float l = (n + s + w + e) / jc;
  const float num = 0.5f * g2 - 0.0625f * l * l;
  const float den = 1.0f + 0.25f * l;
  const float qsqr = num / (den * den);
  const float q = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  STORE(dn, i, n);
  STORE(ds, i, s);
  STORE(dw, i, w);
  STORE(de, i, e);
  STORE(c, i, clamp(1.0f / (1.0f + q), 0.0f, 1.0f));
}

UNIT_KERNEL(ported_srad_update, LEN(j), (float, j), (const float, dn), (const float, ds),
            (const float, dw), (const float, de), (const float, c), (scalar, int32_t, rows),
            (scalar, int32_t, cols), (scalar, float, lambda)) {
  const int32_t i = (int32_t)UNIT_ID, r = i / cols, x = i % cols;
  const float ci = LOAD(c, i);
  const float cs = LOAD(c, min(r + 1, rows - 1) * cols + x);
  const float ce = LOAD(c, r * cols + min(x + 1, cols - 1));
  const float d = ci * LOAD(dn, i) + cs * LOAD(ds, i) + ci * LOAD(dw, i) + ce * LOAD(de, i);
  STORE(j, i, LOAD(j, i) + 0.25f * lambda * d);
}

/* ---- kmeans: the nearest centre of each point, a UNIT_KERNEL over the points ---- */

UNIT_KERNEL(ported_kmeans_assign, npoints, (const float, features), (const float, clusters),
            (int32_t, membership), (scalar, uint32_t, npoints), (scalar, uint32_t, nclusters),
            (scalar, uint32_t, nfeatures)) {
  const uint32_t p = (uint32_t)UNIT_ID;
  int32_t best = 0;
  float best_d = 0.0f;
  for (uint32_t k = 0; k < nclusters; ++k) {
    float d = 0.0f;
    for (uint32_t f = 0; f < nfeatures; ++f) {
      const float x = LOAD(features, f * npoints + p) - LOAD(clusters, k * nfeatures + f);
      d += x * x;
    }
    if (k == 0 || d < best_d) {
      best_d = d;
      best = (int32_t)k;
    }
  }
  STORE(membership, p, best);
}

/* ---- bfs: the two kernels as UNIT_KERNELs over the nodes. The original's writes that several
   units make with the same value (a node's cost and its `updating` flag when it has several
   parents in the frontier, the `over` flag) are data races to validate mode's sanitizer: the
   port makes them atomics (ATOMIC_MAX), and so keeps `updating` and `over` in uint32_t elements,
   as the language has no byte atomics; the masks that only their own unit writes stay bytes. ----
 */

UNIT_KERNEL(ported_bfs_expand, n, (const int32_t, starts), (const int32_t, counts),
            (const int32_t, edges), (uint8_t, mask), (uint32_t, updating), (const uint8_t, visited),
            (int32_t, cost), (scalar, uint32_t, n)) {
  const uint32_t id = (uint32_t)UNIT_ID;
  if (LOAD(mask, id)) {
    STORE(mask, id, (uint8_t)0);
    const int32_t first = LOAD(starts, id), end = first + LOAD(counts, id);
    for (int32_t e = first; e < end; ++e) {
      const int32_t to = LOAD(edges, e);
      if (!LOAD(visited, to)) {
        ATOMIC_MAX(cost, to, LOAD(cost, id) + 1);
        ATOMIC_MAX(updating, to, 1u);
      }
    }
  }
}

UNIT_KERNEL(ported_bfs_update, n, (uint8_t, mask), (uint32_t, updating), (uint8_t, visited),
            (uint32_t, over), (scalar, uint32_t, n)) {
  const uint32_t id = (uint32_t)UNIT_ID;
  if (LOAD(updating, id)) {
    STORE(mask, id, (uint8_t)1);
    STORE(visited, id, (uint8_t)1);
    STORE(updating, id, 0u);
    ATOMIC_MAX(over, 0, 1u);
  }
}

/* The six Rodinia-shaped workloads of the suite (rodinia_shapes.h): OpenCL C programs written
   for these tests in the style of the originals (a third party's code is not copied), their
   inputs and their host references. */
#include "rodinia_shapes.h"

#include <math.h>
#include <string.h>

#include "cts.h"

/* ---- nw ---- */

const char rodinia_nw_source[] =
    "#define B 8\n"
    "__kernel void nw(__global int *score, __global const int *ref, __local int *tile,\n"
    "                 __local int *sim, int cols, int penalty, int diag, int blocks) {\n"
    "  int t = get_local_id(0);\n"
    "  int by = (diag < blocks ? 0 : diag - blocks + 1) + get_group_id(0), bx = diag - by;\n"
    "  int base = by * B * cols + bx * B; /* the tile's corner, row 0 / column 0 of it */\n"
    "  for (int i = 0; i < B; ++i) sim[i * B + t] = ref[base + (i + 1) * cols + t + 1];\n"
    "  if (t == 0) tile[0] = score[base];\n"
    "  tile[t + 1] = score[base + t + 1];\n"
    "  tile[(t + 1) * (B + 1)] = score[base + (t + 1) * cols];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int k = 0; k < 2 * B - 1; ++k) { /* the tile's anti-diagonals; unit t: column t */\n"
    "    int i = k - t;\n"
    "    if (i >= 0 && i < B) {\n"
    "      int at = (i + 1) * (B + 1) + t + 1;\n"
    "      tile[at] = max(tile[at - B - 2] + sim[i * B + t],\n"
    "                     max(tile[at - B - 1], tile[at - 1]) - penalty);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  for (int i = 0; i < B; ++i)\n"
    "    score[base + (i + 1) * cols + t + 1] = tile[(i + 1) * (B + 1) + t + 1];\n"
    "}\n";

void rodinia_nw_inputs(int32_t *score, int32_t *ref, int n, int32_t penalty) {
  const int cols = n + 1;
  memset(score, 0, sizeof(*score) * (size_t)cols * (size_t)cols);
  memset(ref, 0, sizeof(*ref) * (size_t)cols * (size_t)cols);
  for (int i = 0; i < cols; ++i) {
    score[i] = -penalty * i;
    score[i * cols] = -penalty * i;
  }
  for (int i = 1; i < cols; ++i)
    for (int j = 1; j < cols; ++j)
      ref[i * cols + j] = (i * 7) % 4 == (j * 5 + 1) % 4 ? 3 : -1 - (i + j) % 3;
}

static int32_t max_i32(int32_t a, int32_t b) {
  return a > b ? a : b;
}

void rodinia_nw_ref(int32_t *score, const int32_t *ref, int n, int32_t penalty) {
  const int cols = n + 1;
  for (int i = 1; i < cols; ++i)
    for (int j = 1; j < cols; ++j) {
      const int at = i * cols + j;
      score[at] = max_i32(score[at - cols - 1] + ref[at],
                          max_i32(score[at - cols], score[at - 1]) - penalty);
    }
}

/* ---- backprop ---- */

const char rodinia_backprop_source[] =
    "#define H 16\n"
    "__kernel void layer_forward(__global const float *input, __global const float *weights,\n"
    "                            __global float *partial, __local float *in,\n"
    "                            __local float *w, int hid) {\n"
    "  int tx = get_local_id(0), ty = get_local_id(1), by = get_group_id(1);\n"
    "  int row = by * H + ty, col = get_global_id(0);\n"
    "  if (tx == 0) in[ty] = input[row];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  w[ty * H + tx] = col < hid ? weights[row * hid + col] * in[ty] : 0.0f;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int s = H / 2; s > 0; s /= 2) {\n"
    "    if (ty < s) w[ty * H + tx] += w[(ty + s) * H + tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (ty == 0 && col < hid) partial[by * hid + col] = w[tx];\n"
    "}\n";

void rodinia_backprop_inputs(float *input, float *weights, int n_in, int hid) {
  for (int i = 0; i < n_in; ++i) input[i] = (float)(i % 5) * 0.25f - 0.5f;
  for (int k = 0; k < n_in * hid; ++k) weights[k] = (float)((k * 7) % 9) * 0.125f - 0.5f;
}

void rodinia_backprop_finish(const float *partial, int n_in, int hid, float *hidden) {
  for (int h = 0; h < hid; ++h) {
    float sum = 0.0f;
    for (int y = 0; y < n_in / 16; ++y) sum += partial[y * hid + h];
    hidden[h] = 1.0f / (1.0f + expf(-sum));
  }
}

void rodinia_backprop_ref(const float *input, const float *weights, int n_in, int hid,
                          float *partial, float *hidden) {
  for (int y = 0; y < n_in / 16; ++y)
    for (int h = 0; h < hid; ++h) {
      float sum = 0.0f;
      for (int i = y * 16; i < y * 16 + 16; ++i) sum += weights[i * hid + h] * input[i];
      partial[y * hid + h] = sum;
    }
  rodinia_backprop_finish(partial, n_in, hid, hidden);
}

/* ---- lud ---- */

const char rodinia_lud_source[] =
    "#define B 8\n"
    "__kernel void lud_diagonal(__global float *m, __local float *d, int n, int offset) {\n"
    "  int t = get_local_id(0); /* row t of the diagonal block */\n"
    "  for (int i = 0; i < B; ++i) d[i * B + t] = m[(offset + i) * n + offset + t];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int i = 0; i < B - 1; ++i) {\n"
    "    if (t > i) {\n"
    "      float l = d[t * B + i] / d[i * B + i];\n"
    "      d[t * B + i] = l;\n"
    "      for (int j = i + 1; j < B; ++j) d[t * B + j] -= l * d[i * B + j];\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  for (int i = 0; i < B; ++i) m[(offset + i) * n + offset + t] = d[i * B + t];\n"
    "}\n"
    "__kernel void lud_perimeter(__global float *m, __local float *d, int n, int offset) {\n"
    "  __local float row[B * B], col[B * B];\n"
    "  int t = get_local_id(0), u = t % B;\n"
    "  int other = offset + (get_group_id(0) + 1) * B;\n"
    "  for (int i = 0; i < B; ++i) {\n"
    "    if (t < B) {\n"
    "      d[i * B + t] = m[(offset + i) * n + offset + t];\n"
    "      row[i * B + t] = m[(offset + i) * n + other + t];\n"
    "    } else {\n"
    "      col[i * B + u] = m[(other + i) * n + offset + u];\n"
    "    }\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (t < B) { /* column t of the block right of the diagonal: solve with L */\n"
    "    for (int i = 1; i < B; ++i)\n"
    "      for (int k = 0; k < i; ++k) row[i * B + t] -= d[i * B + k] * row[k * B + t];\n"
    "  } else { /* row u of the block below the diagonal: solve with U */\n"
    "    for (int i = 0; i < B; ++i) {\n"
    "      for (int k = 0; k < i; ++k) col[u * B + i] -= col[u * B + k] * d[k * B + i];\n"
    "      col[u * B + i] /= d[i * B + i];\n"
    "    }\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int i = 0; i < B; ++i) {\n"
    "    if (t < B) m[(offset + i) * n + other + t] = row[i * B + t];\n"
    "    else m[(other + i) * n + offset + u] = col[i * B + u];\n"
    "  }\n"
    "}\n"
    "__kernel void lud_internal(__global float *m, int n, int offset) {\n"
    "  __local float l[B][B], u[B][B];\n"
    "  int tx = get_local_id(0), ty = get_local_id(1);\n"
    "  int r = offset + (get_group_id(1) + 1) * B, c = offset + (get_group_id(0) + 1) * B;\n"
    "  l[ty][tx] = m[(r + ty) * n + offset + tx];\n"
    "  u[ty][tx] = m[(offset + ty) * n + c + tx];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float sum = 0.0f;\n"
    "  for (int k = 0; k < B; ++k) sum += l[ty][k] * u[k][tx];\n"
    "  m[(r + ty) * n + c + tx] -= sum;\n"
    "}\n";

void rodinia_lud_inputs(float *m, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      m[i * n + j] = i == j ? (float)(2 * n) : (float)((i * 7 + j * 3) % 11) / 11.0f - 0.5f;
}

void rodinia_lud_ref(float *m, int n) {
  for (int k = 0; k < n; ++k)
    for (int i = k + 1; i < n; ++i) {
      const float l = m[i * n + k] / m[k * n + k];
      m[i * n + k] = l;
      for (int j = k + 1; j < n; ++j) m[i * n + j] -= l * m[k * n + j];
    }
}

/* ---- srad ---- */

const char rodinia_srad_source[] =
    "__kernel void srad_coefficients(__global const float *j, __global float *dn,\n"
    "                                __global float *ds, __global float *dw,\n"
    "                                __global float *de, __global float *c, int rows,\n"
    "                                int cols, float q0sqr) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= rows * cols) return;\n"
    "  int r = i / cols, x = i % cols;\n"
    "  float jc = j[i];\n"
    "  float n = j[max(r - 1, 0) * cols + x] - jc, s = j[min(r + 1, rows - 1) * cols + x] - jc;\n"
    "  float w = j[r * cols + max(x - 1, 0)] - jc, e = j[r * cols + min(x + 1, cols - 1)] - jc;\n"
    "  float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);\n"
    "  float l = (n + s + w + e) / jc;\n"
    "  float num = 0.5f * g2 - 0.0625f * l * l;\n"
    "  float den = 1.0f + 0.25f * l;\n"
    "  float qsqr = num / (den * den);\n"
    "  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));\n"
    "  dn[i] = n;\n"
    "  ds[i] = s;\n"
    "  dw[i] = w;\n"
    "  de[i] = e;\n"
    "  c[i] = clamp(1.0f / (1.0f + den), 0.0f, 1.0f);\n"
    "}\n"
    "__kernel void srad_update(__global float *j, __global const float *dn,\n"
    "                          __global const float *ds, __global const float *dw,\n"
    "                          __global const float *de, __global const float *c, int rows,\n"
    "                          int cols, float lambda) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= rows * cols) return;\n"
    "  int r = i / cols, x = i % cols;\n"
    "  float cs = c[min(r + 1, rows - 1) * cols + x], ce = c[r * cols + min(x + 1, cols - 1)];\n"
    "  j[i] += 0.25f * lambda * (c[i] * dn[i] + cs * ds[i] + c[i] * dw[i] + ce * de[i]);\n"
    "}\n";

void rodinia_srad_inputs(float *image, int rows, int cols) {
  for (int i = 0; i < rows * cols; ++i)
    image[i] = 1.0f + (float)((i * 37) % 17) / 17.0f + (float)(i / cols % 3) * 0.25f;
}

float rodinia_srad_q0sqr(const float *image, int pixels) {
  float sum = 0.0f, sum2 = 0.0f;
  for (int i = 0; i < pixels; ++i) {
    sum += image[i];
    sum2 += image[i] * image[i];
  }
  const float mean = sum / (float)pixels, var = sum2 / (float)pixels - mean * mean;
  return var / (mean * mean);
}

static int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* The first kernel's values at pixel i: the four differences and the coefficient. */
static void srad_coefficient(const float *j, int rows, int cols, float q0sqr, int i, float *d,
                             float *c) {
  const int r = i / cols, x = i % cols;
  const float jc = j[i];
  d[0] = j[clamp_int(r - 1, 0, rows - 1) * cols + x] - jc;
  d[1] = j[clamp_int(r + 1, 0, rows - 1) * cols + x] - jc;
  d[2] = j[r * cols + clamp_int(x - 1, 0, cols - 1)] - jc;
  d[3] = j[r * cols + clamp_int(x + 1, 0, cols - 1)] - jc;
  const float g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
  const float l = (d[0] + d[1] + d[2] + d[3]) / jc;
  const float num = 0.5f * g2 - 0.0625f * l * l;
  float den = 1.0f + 0.25f * l;
  const float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  const float cc = 1.0f / (1.0f + den);
  *c = cc < 0.0f ? 0.0f : cc > 1.0f ? 1.0f : cc;
}

void rodinia_srad_ref_step(float *image, float *scratch, int rows, int cols, float lambda) {
  const int pixels = rows * cols;
  const float q0sqr = rodinia_srad_q0sqr(image, pixels);
  float *d = scratch, *c = scratch + 4 * pixels;
  for (int i = 0; i < pixels; ++i) srad_coefficient(image, rows, cols, q0sqr, i, d + 4 * i, c + i);
  for (int i = 0; i < pixels; ++i) {
    const int r = i / cols, x = i % cols;
    const float cs = c[clamp_int(r + 1, 0, rows - 1) * cols + x];
    const float ce = c[r * cols + clamp_int(x + 1, 0, cols - 1)];
    const float *di = d + 4 * i;
    image[i] += 0.25f * lambda * (c[i] * di[0] + cs * di[1] + c[i] * di[2] + ce * di[3]);
  }
}

/* ---- kmeans ---- */

const char rodinia_kmeans_source[] =
    "__kernel void kmeans_assign(__global const float *features, __global const float *clusters,\n"
    "                            __global int *membership, int npoints, int nclusters,\n"
    "                            int nfeatures) {\n"
    "  int p = get_global_id(0);\n"
    "  if (p >= npoints) return;\n"
    "  int best = 0;\n"
    "  float best_d = 0.0f;\n"
    "  for (int c = 0; c < nclusters; ++c) {\n"
    "    float d = 0.0f;\n"
    "    for (int f = 0; f < nfeatures; ++f) {\n"
    "      float x = features[f * npoints + p] - clusters[c * nfeatures + f];\n"
    "      d += x * x;\n"
    "    }\n"
    "    if (c == 0 || d < best_d) {\n"
    "      best_d = d;\n"
    "      best = c;\n"
    "    }\n"
    "  }\n"
    "  membership[p] = best;\n"
    "}\n";

void rodinia_kmeans_inputs(float *features, float *clusters, int npoints, int nclusters,
                           int nfeatures) {
  for (int p = 0; p < npoints; ++p)
    for (int f = 0; f < nfeatures; ++f)
      features[f * npoints + p] =
          (float)((p % nclusters) * 10 * (f + 1) % 37) + (float)((p * 37 + f) % 7) * 0.25f;
  for (int c = 0; c < nclusters; ++c)
    for (int f = 0; f < nfeatures; ++f) clusters[c * nfeatures + f] = features[f * npoints + c];
}

void rodinia_kmeans_assign_ref(const float *features, const float *clusters, int npoints,
                               int nclusters, int nfeatures, int32_t *membership) {
  for (int p = 0; p < npoints; ++p) {
    int32_t best = 0;
    float best_d = 0.0f;
    for (int c = 0; c < nclusters; ++c) {
      float d = 0.0f;
      for (int f = 0; f < nfeatures; ++f) {
        const float x = features[f * npoints + p] - clusters[c * nfeatures + f];
        d += x * x;
      }
      if (c == 0 || d < best_d) best_d = d, best = c;
    }
    membership[p] = best;
  }
}

void rodinia_kmeans_centres(const float *features, const int32_t *membership, int npoints,
                            int nclusters, int nfeatures, float *clusters) {
  for (int c = 0; c < nclusters; ++c) {
    int members = 0;
    for (int p = 0; p < npoints; ++p) members += membership[p] == c;
    if (!members) continue;
    for (int f = 0; f < nfeatures; ++f) {
      float sum = 0.0f;
      for (int p = 0; p < npoints; ++p)
        if (membership[p] == c) sum += features[f * npoints + p];
      clusters[c * nfeatures + f] = sum / (float)members;
    }
  }
}

void rodinia_kmeans_check(rodinia_kmeans_assign_fn assign, void *context) {
  enum {
    POINTS = RODINIA_KMEANS_POINTS,
    CLUSTERS = RODINIA_KMEANS_CLUSTERS,
    FEATURES = RODINIA_KMEANS_FEATURES
  };
  float features[FEATURES * POINTS], clusters[CLUSTERS * FEATURES], want_c[CLUSTERS * FEATURES];
  int32_t membership[POINTS], want[POINTS];
  rodinia_kmeans_inputs(features, clusters, POINTS, CLUSTERS, FEATURES);
  memcpy(want_c, clusters, sizeof want_c);
  for (int round = 0; round < RODINIA_KMEANS_ROUNDS; ++round) {
    assign(context, features, clusters, membership);
    rodinia_kmeans_assign_ref(features, want_c, POINTS, CLUSTERS, FEATURES, want);
    for (int i = 0; i < POINTS; ++i)
      cr_assert_eq(membership[i], want[i], "round %d point %d: centre %d, expected %d", round, i,
                   membership[i], want[i]);
    rodinia_kmeans_centres(features, membership, POINTS, CLUSTERS, FEATURES, clusters);
    rodinia_kmeans_centres(features, want, POINTS, CLUSTERS, FEATURES, want_c);
  }
  for (int i = 0; i < CLUSTERS * FEATURES; ++i)
    cr_assert_float_eq(clusters[i], want_c[i], 1e-5, "centre value %d", i);
}

/* ---- bfs ---- */

const char rodinia_bfs_source[] =
    "__kernel void bfs_expand(__global const int *starts, __global const int *counts,\n"
    "                         __global const int *edges, __global char *mask,\n"
    "                         __global char *updating, __global const char *visited,\n"
    "                         __global int *cost, int n) {\n"
    "  int id = get_global_id(0);\n"
    "  if (id >= n || !mask[id]) return;\n"
    "  mask[id] = 0;\n"
    "  for (int e = starts[id]; e < starts[id] + counts[id]; ++e) {\n"
    "    int to = edges[e];\n"
    "    if (!visited[to]) {\n"
    "      cost[to] = cost[id] + 1;\n"
    "      updating[to] = 1;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "__kernel void bfs_update(__global char *mask, __global char *updating,\n"
    "                         __global char *visited, __global char *over, int n) {\n"
    "  int id = get_global_id(0);\n"
    "  if (id >= n || !updating[id]) return;\n"
    "  mask[id] = 1;\n"
    "  visited[id] = 1;\n"
    "  *over = 1; /* by every unit that found new work */\n"
    "  updating[id] = 0;\n"
    "}\n";

int rodinia_bfs_graph(int32_t *starts, int32_t *counts, int32_t *edges, int n) {
  int e = 0;
  for (int i = 0; i < n; ++i) {
    starts[i] = e;
    edges[e++] = (i + 1) % n; /* a ring: every node is reached */
    edges[e++] = (i * 7 + 3) % n;
    if (i % 3 == 0) edges[e++] = (i * i + 11) % n;
    counts[i] = e - starts[i];
  }
  return e;
}

void rodinia_bfs_ref(const int32_t *starts, const int32_t *counts, const int32_t *edges, int n,
                     int32_t *cost) {
  for (int i = 0; i < n; ++i) cost[i] = -1;
  cost[0] = 0;
  for (int level = 0, changed = 1; changed; ++level) {
    changed = 0;
    for (int i = 0; i < n; ++i) {
      if (cost[i] != level) continue;
      for (int e = starts[i]; e < starts[i] + counts[i]; ++e)
        if (cost[edges[e]] < 0) cost[edges[e]] = level + 1, changed = 1;
    }
  }
}

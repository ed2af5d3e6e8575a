/* natural_kernels.h — the shared-memory types and constants of bench/natural_kernels.cube.c (the
   natural CUBE_KERNELs) and bench/natural_kernels_phased.cube.c (their hand-phased twins), and
   of the host reference in bench/natural_kernels.c: one definition for the three. It includes
   nothing (the kernel files include cubert/cube.h first; the host must not): constants and
   plain structs of floats only. */
#ifndef CUBERT_BENCH_NATURAL_KERNELS_H
#define CUBERT_BENCH_NATURAL_KERNELS_H

/* Cube tree reduction: at most this many units per cube. */
#define REDUCE_TREE_MAX 1024
typedef struct reduce_tree_shared {
  float partial[REDUCE_TREE_MAX];
} reduce_tree_shared;
/* The phased twin's ping-pong arrays, the slots past the units holding 0. */
typedef struct reduce_tree_slots {
  float slot[2][2 * REDUCE_TREE_MAX];
} reduce_tree_slots;

/* Hotspot-like stencil: a 16 x 16 tile and its one-cell halo; the update of one cell is
   t + STEP * (power + (N + S - 2t) * RY + (E + W - 2t) * RX + (AMBIENT - t) * RZ). */
#define HOTSPOT_TILE 16
#define HOTSPOT_STEP 0.5f
#define HOTSPOT_RX 0.1f
#define HOTSPOT_RY 0.1f
#define HOTSPOT_RZ 0.0125f
#define HOTSPOT_AMBIENT 80.0f
typedef struct hotspot_tile {
  float t[HOTSPOT_TILE + 2][HOTSPOT_TILE + 2];
} hotspot_tile;

/* Cube scan (Hillis-Steele): at most this many units per cube. */
#define SCAN_MAX 1024
typedef struct scan_shared {
  float v[2][SCAN_MAX];
} scan_shared;
/* The phased twin's arrays: the values at [units, 2 units), zeros below, so that a unit's
   left neighbour at any offset is a plain load (0 before the first unit). */
typedef struct scan_slots {
  float v[2][2 * SCAN_MAX];
} scan_slots;

/* Transpose: a 32 x 32 tile padded to 33 columns, moved by 32 x 8 units. */
#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8
typedef struct transpose_shared {
  float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
} transpose_shared;

#endif /* CUBERT_BENCH_NATURAL_KERNELS_H */

/* cubert — 1-D launches: one unit per element in 1-D cubes, the cube count spread over x, y, z
   within the device's limits; the cube dim fixed (256, or the device's largest below it), given,
   or chosen by autotune. The kernel library's operations and the core's strided copies
   (strided_copy.c) launch through these. */
#include "launch_1d.h"

#include <stdlib.h>
#include <string.h>

#include "cubert/geometry.h"
#include "cubert/tune.h"
#include "tune/tuner.h"

cubert_status cubert_launch_1d_dim(cubert_client *client, const cubert_kernel_def *kernel,
                                   uint64_t n, uint32_t dim, const cubert_kernel_args *args) {
  if (n == 0) return NULL;
  const uint64_t cubes = n / dim + (n % dim != 0);
  if (cubes > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              "kernel \"%s\" over %llu elements needs %llu cubes, more than 2^32-1",
                              kernel->name, (unsigned long long)n, (unsigned long long)cubes);
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)cubes, &sel));
  return cubert_client_launch(client, kernel, sel.cube_count, cubert_cube_dim_new_3d(dim, 1, 1),
                              args);
}

cubert_status cubert_launch_1d(cubert_client *client, const cubert_kernel_def *kernel, uint64_t n,
                               const cubert_kernel_args *args) {
  if (n == 0) return NULL;
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "the client is released");
  /* 256 units per cube: a multiple of every GPU's warp or wavefront, and on the CPU server
     long enough SIMD loops that the per-cube overhead vanishes. */
  uint32_t dim = p->hardware.max_units_per_cube < 256 ? p->hardware.max_units_per_cube : 256;
  if (dim > p->hardware.max_cube_dim[0]) dim = p->hardware.max_cube_dim[0];
  if (dim == 0) dim = 1;
  return cubert_launch_1d_dim(client, kernel, n, dim, args);
}

typedef struct tuned_args {
  const cubert_kernel_def *kernel;
  uint64_t n;
  const cubert_kernel_args *args;
} tuned_args;

uint32_t cubert_launch_max_dim(const cubert_client *client) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p) return 0;
  uint32_t m = p->hardware.max_units_per_cube;
  return m < p->hardware.max_cube_dim[0] ? m : p->hardware.max_cube_dim[0];
}

static cubert_status launch_dim(cubert_client *client, const tuned_args *a, uint32_t dim) {
  return cubert_launch_1d_dim(client, a->kernel, a->n, dim, a->args);
}

#define DIM_CANDIDATE_(d)                                                       \
  static cubert_status launch_##d(cubert_client *client, const void *args) {    \
    return launch_dim(client, args, d);                                         \
  }                                                                             \
  static int valid_##d(const cubert_client *client, const cubert_tune_key *key, \
                       const void *args) {                                      \
    (void)key;                                                                  \
    (void)args;                                                                 \
    return cubert_launch_max_dim(client) >= d;                                  \
  }
DIM_CANDIDATE_(64)
DIM_CANDIDATE_(128)
DIM_CANDIDATE_(256)
DIM_CANDIDATE_(512)
DIM_CANDIDATE_(1024)
#undef DIM_CANDIDATE_
/* For devices whose cubes hold fewer than 64 units: their largest dim. */
static cubert_status launch_max(cubert_client *client, const void *args) {
  const uint32_t dim = cubert_launch_max_dim(client);
  return launch_dim(client, args, dim ? dim : 1);
}

/* 256 first: the default without tuning (CUBERT_AUTOTUNE=off) and the hand-picked dim before
   autotune; the minimal set adds the two ends. */
static const cubert_tune_candidate dim_candidates[] = {
    {"dim256", launch_256, valid_256, 0},    {"dim64", launch_64, valid_64, 0},
    {"dim1024", launch_1024, valid_1024, 0}, {"dim128", launch_128, valid_128, 1},
    {"dim512", launch_512, valid_512, 1},    {"dim_max", launch_max, NULL, 1},
};
static const cubert_tune_set dim_set = {
    .name = "ops.copy_cube_dim",
    .candidates = dim_candidates,
    .candidate_count = sizeof dim_candidates / sizeof dim_candidates[0],
    .source_checksum = 1, /* bump when the copy kernels change in ways that move the winner */
};

/* A deep copy of `args` in one block (background tuning keeps it beyond the call, tuner.h):
   the caller's cubert_kernel_args and its buffer and info arrays are borrowed for the call
   only. */
static void *tuned_args_clone(const void *args) {
  const tuned_args *a = args;
  const cubert_kernel_args *k = a->args;
  const size_t buffers = k->buffer_count * sizeof(cubert_handle *);
  const size_t info = k->info_count * sizeof(uint64_t);
  _Static_assert(sizeof(tuned_args) % sizeof(uint64_t) == 0 &&
                     sizeof(cubert_kernel_args) % sizeof(uint64_t) == 0,
                 "the arrays after the structs stay aligned");
  char *block = malloc(sizeof(tuned_args) + sizeof(cubert_kernel_args) + info + buffers);
  if (!block) return NULL;
  tuned_args *copy = (tuned_args *)block;
  cubert_kernel_args *kcopy = (cubert_kernel_args *)(block + sizeof(tuned_args));
  uint64_t *info_copy = (uint64_t *)(kcopy + 1);
  cubert_handle **buffers_copy = (cubert_handle **)((char *)info_copy + info);
  if (info) memcpy(info_copy, k->info, info);
  if (buffers) memcpy(buffers_copy, k->buffers, buffers);
  *kcopy = *k;
  kcopy->info = info ? info_copy : NULL;
  kcopy->buffers = buffers ? buffers_copy : NULL;
  *copy = *a;
  copy->args = kcopy;
  return block;
}

/* FNV-1a of the kernel's name: a key field that is the same in every process. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; s && *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

cubert_status cubert_launch_1d_tuned(cubert_client *client, const cubert_kernel_def *kernel,
                                     uint64_t n, const cubert_kernel_args *args, uint32_t rank,
                                     uint64_t elem_size) {
  if (n == 0) return NULL;
  cubert_tune_key key = {0};
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, name_hash(kernel->name)));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add_anchored(&key, n));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, rank));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, elem_size));
  const tuned_args a = {kernel, n, args};
  const cubert_tune_call call = {.args_clone = tuned_args_clone};
  return cubert_tune_execute_call(client, &dim_set, &key, &a, &call);
}

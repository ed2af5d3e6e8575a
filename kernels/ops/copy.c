/* cubert_op_copy and cubert_op_permute, and the tuned 1-D launch the copy kernels share with
   cubert_client_read_tensor (ops_internal.h).

   Any element size moves as machine words: the largest of 8, 4, 2 and 1 bytes that divides the
   element size and both handles' sizes (a launch binds whole words), with an element wider
   than its word split along an extra innermost axis. After collapsing (ops_internal.h) the
   copy is one of:
   - dense on both sides: copy_<w>_c, a plain loop;
   - a 2-D transpose (out contiguous along its inner axis, in along the outer one): the tiled
     transpose_<w>, so that both sides are read and written along rows;
   - at most two axes with rows of 64 elements or more (pitched, sliced, broadcast rows):
     copy_<w>_r, a cube per chunk of a row (elementwise.c's rows launch);
   - anything else: copy_<w>_nd, one unit per element with both sides' strides.
   The cube dims of the 1-D kernels are chosen by autotune (cubert/tune.h): the best dim
   depends on the device and on how scattered the accesses are. */
#include <stdio.h>
#include <string.h>

#include "cubert/geometry.h"
#include "cubert/tune.h"
#include "ops/ops_kernels.h"

/* ---- the tuned 1-D launch ----------------------------------------------------------------------
 */

typedef struct tuned_args {
  const cubert_kernel_def *kernel;
  uint64_t n;
  const cubert_kernel_args *args;
} tuned_args;

static uint32_t device_max_dim(const cubert_client *client) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p) return 0;
  uint32_t m = p->hardware.max_units_per_cube;
  return m < p->hardware.max_cube_dim[0] ? m : p->hardware.max_cube_dim[0];
}

static cubert_status launch_dim(cubert_client *client, const tuned_args *a, uint32_t dim) {
  return cubert_ops_launch_1d_dim(client, a->kernel, a->n, dim, a->args);
}

#define DIM_CANDIDATE_(d)                                                       \
  static cubert_status launch_##d(cubert_client *client, const void *args) {    \
    return launch_dim(client, args, d);                                         \
  }                                                                             \
  static int valid_##d(const cubert_client *client, const cubert_tune_key *key, \
                       const void *args) {                                      \
    (void)key;                                                                  \
    (void)args;                                                                 \
    return device_max_dim(client) >= d;                                         \
  }
DIM_CANDIDATE_(64)
DIM_CANDIDATE_(128)
DIM_CANDIDATE_(256)
DIM_CANDIDATE_(512)
DIM_CANDIDATE_(1024)
#undef DIM_CANDIDATE_
/* For devices whose cubes hold fewer than 64 units: their largest dim. */
static cubert_status launch_max(cubert_client *client, const void *args) {
  const uint32_t dim = device_max_dim(client);
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

/* FNV-1a of the kernel's name: a key field that is the same in every process. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; s && *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

cubert_status cubert_ops_launch_1d_tuned(cubert_client *client, const cubert_kernel_def *kernel,
                                         uint64_t n, const cubert_kernel_args *args, uint32_t rank,
                                         uint64_t elem_size) {
  if (n == 0) return NULL;
  cubert_tune_key key = {0};
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, name_hash(kernel->name)));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add_anchored(&key, n));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, rank));
  CUBERT_RETURN_IF_ERROR(cubert_tune_key_add(&key, elem_size));
  const tuned_args a = {kernel, n, args};
  return cubert_tune_execute(client, &dim_set, &key, &a);
}

/* ---- copy ---------------------------------------------------------------------------------- */

#define W_(w)                                                                                \
  {                                                                                          \
    &cubert_kernel_copy_##w##_c, &cubert_kernel_copy_##w##_nd, &cubert_kernel_transpose_##w, \
        &cubert_kernel_copy_##w##_r                                                          \
  }
static const cubert_kernel_def *const copy_kernels[4][4] = {W_(u8), W_(u16), W_(u32), W_(u64)};
#undef W_

/* Launches transpose_<w> over the plan's R x C output (see copy_nd.cube.c). */
static cubert_status launch_transpose(cubert_client *client, const cubert_ops_plan *plan,
                                      const cubert_kernel_def *kernel,
                                      cubert_handle *const *handles) {
  const uint64_t rows = plan->shape[0], cols = plan->shape[1];
  const uint64_t tiles_c = cols / 32 + (cols % 32 != 0), tiles_r = rows / 32 + (rows % 32 != 0);
  const uint64_t tiles = tiles_r * tiles_c;
  if (tiles > UINT32_MAX)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              "copy: a %llu x %llu transpose needs %llu tiles, more than 2^32-1",
                              (unsigned long long)rows, (unsigned long long)cols,
                              (unsigned long long)tiles);
  uint64_t info[8] = {
      rows,    cols, plan->offsets[0], plan->strides[0][0], plan->offsets[1], plan->strides[1][1],
      tiles_c, tiles};
  cubert_kernel_args args = {(cubert_handle **)handles, 2, info, 8};
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)tiles, &sel));
  return cubert_client_launch(client, kernel, sel.cube_count, cubert_cube_dim_new_3d(32, 8, 1),
                              &args);
}

/* cubert_op_copy under the name `op` (for messages). */
static cubert_status copy_as(cubert_client *client, const char *op, const cubert_tensor *in,
                             const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, op));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "in", in, 0, false, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor(op, "out", out, 0, true, NULL));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_shape(op, "in", in, "out", out));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_same_dtype(op, "in", in, "out", out));
  if (in->elem_size != out->elem_size)
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT, "%s: in.elem_size is %llu but out.elem_size is %llu", op,
        (unsigned long long)in->elem_size, (unsigned long long)out->elem_size);
  if (!cubert_client_properties(client))
    return cubert_status_make(CUBERT_CODE_NOT_FOUND, "%s: the client is released", op);
  const cubert_tensor *ins[1] = {in};
  const char *names[1] = {"in"};
  cubert_ops_plan plan;
  CUBERT_RETURN_IF_ERROR(cubert_ops_plan_make(op, out, ins, names, 1, &plan));
  if (plan.n == 0) return NULL;

  /* The word: the widest that divides the element and both handles. */
  const uint64_t sizes[2] = {cubert_handle_size(in->handle), cubert_handle_size(out->handle)};
  int wi = 3;
  for (; wi > 0; --wi) {
    const uint64_t w = 1ull << wi;
    if (in->elem_size % w == 0 && sizes[0] % w == 0 && sizes[1] % w == 0) break;
  }
  const uint64_t words = in->elem_size >> wi;
  if (words > 1) {
    if (plan.rank == CUBERT_MAX_RANK)
      return cubert_status_make(CUBERT_CODE_UNSUPPORTED_STRIDES,
                                "%s: %d axes that do not merge, of %llu-byte elements that move "
                                "as %llu words: one axis more than the copy kernels take",
                                op, CUBERT_MAX_RANK, (unsigned long long)in->elem_size,
                                (unsigned long long)words);
    for (uint32_t k = 0; k < 2; ++k) {
      plan.offsets[k] *= words;
      for (uint32_t d = 0; d < plan.rank; ++d) plan.strides[k][d] *= words;
      plan.strides[k][plan.rank] = 1;
    }
    plan.shape[plan.rank++] = words;
    plan.n *= words;
    cubert_ops_collapse_axes(&plan.rank, plan.shape, plan.strides, 2);
  }
  cubert_handle *handles[2] = {out->handle, in->handle};
  const cubert_kernel_def *const *k = copy_kernels[wi];
  if (plan.rank == 2 && plan.strides[0][1] == 1 && plan.strides[1][0] == 1 &&
      device_max_dim(client) >= 256) {
    const cubert_device_properties *p = cubert_client_properties(client);
    if (p->hardware.max_cube_dim[1] >= 8) return launch_transpose(client, &plan, k[2], handles);
  }
  const bool dense = cubert_ops_plan_contiguous(&plan);
  if (!dense && plan.rank <= 2 && plan.rank >= 1 && plan.shape[plan.rank - 1] >= 64) {
    const cubert_ops_kernels rows = {k[0], k[3], k[1]};
    return cubert_ops_plan_launch(client, &plan, &rows, 0, handles);
  }
  uint64_t info[CUBERT_OPS_ND_WORDS] = {0};
  uint32_t nwords = 3;
  info[0] = plan.n;
  if (dense) {
    nwords = 1;
  } else {
    info[1] = plan.rank;
    info[3] = plan.offsets[0];
    info[4] = plan.offsets[1];
    for (uint32_t d = 0; d < plan.rank; ++d) {
      info[6 + d] = plan.shape[d];
      info[14 + d] = plan.strides[0][d];
      info[22 + d] = plan.strides[1][d];
    }
    nwords = CUBERT_OPS_ND_WORDS;
  }
  cubert_kernel_args args = {handles, 2, info, nwords};
  return cubert_ops_launch_1d_tuned(client, dense ? k[0] : k[1], plan.n, &args, plan.rank,
                                    1ull << wi);
}

cubert_status(cubert_op_copy)(cubert_client *client, const cubert_tensor *in,
                              const cubert_tensor *out) {
  return copy_as(client, "copy", in, out);
}

cubert_status(cubert_op_permute)(cubert_client *client, const cubert_tensor *in,
                                 const uint32_t *axes, const cubert_tensor *out) {
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_client(client, "permute"));
  CUBERT_RETURN_IF_ERROR(cubert_ops_check_tensor("permute", "in", in, 0, false, NULL));
  cubert_tensor view;
  CUBERT_RETURN_IF_ERROR(cubert_tensor_permute(in, axes, &view));
  return copy_as(client, "permute", &view, out);
}

/* cubert — the strided copy under cubert_client_read_tensor / write_tensor with offsets and
   strides, cubert_client_to_client without a server copy, and cubert_op_copy (whose operand
   checks are the kernel library's): it launches the copy kernels of kernels/copy_nd.cube.c,
   kernel files being data the core may launch, so the core needs nothing from kernels/ops.

   Any element size moves as machine words: the largest of 8, 4, 2 and 1 bytes that divides the
   element size and both handles' sizes (a launch binds whole words), with an element wider
   than its word split along an extra innermost axis. After collapsing (strided.h) the copy is
   one of:
   - dense on both sides: copy_<w>_c, a plain loop;
   - a 2-D transpose (out contiguous along its inner axis, in along the outer one): the tiled
     transpose_<w>, so that both sides are read and written along rows;
   - at most two axes with rows of 64 elements or more (pitched, sliced, broadcast rows):
     copy_<w>_r, a cube per chunk of a row (strided.c's rows launch);
   - anything else: copy_<w>_nd, one unit per element with both sides' strides.
   The cube dims of the 1-D kernels are chosen by autotune (launch_1d.h). */
#include "strided_copy.h"

#include <string.h>

#include "cubert/geometry.h"
#include "launch_1d.h"
#include "strided.h"

#define COPY_K_(w)                                                                       \
  extern const cubert_kernel_def cubert_kernel_copy_##w##_c, cubert_kernel_copy_##w##_r, \
      cubert_kernel_copy_##w##_nd, cubert_kernel_transpose_##w;
COPY_K_(u8)
COPY_K_(u16)
COPY_K_(u32)
COPY_K_(u64)
#undef COPY_K_

#define W_(w)                                                                                \
  {                                                                                          \
    &cubert_kernel_copy_##w##_c, &cubert_kernel_copy_##w##_nd, &cubert_kernel_transpose_##w, \
        &cubert_kernel_copy_##w##_r                                                          \
  }
static const cubert_kernel_def *const copy_kernels[4][4] = {W_(u8), W_(u16), W_(u32), W_(u64)};
#undef W_

/* Launches transpose_<w> over the plan's R x C output (see copy_nd.cube.c). */
static cubert_status launch_transpose(cubert_client *client, const cubert_strided_plan *plan,
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

/* The plan of copying `in` to `out` (same shape), collapsed, in elements. */
static void copy_plan(const cubert_tensor *in, const cubert_tensor *out,
                      cubert_strided_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->count = 2;
  plan->rank = out->rank;
  plan->n = 1;
  const cubert_tensor *const sides[2] = {out, in};
  for (uint32_t d = 0; d < out->rank; ++d) {
    plan->shape[d] = out->shape[d];
    plan->n *= out->shape[d];
    for (uint32_t k = 0; k < 2; ++k) plan->strides[k][d] = sides[k]->strides[d];
  }
  for (uint32_t k = 0; k < 2; ++k) plan->offsets[k] = sides[k]->offset;
  if (plan->n) cubert_strided_collapse_axes(&plan->rank, plan->shape, plan->strides, 2);
}

cubert_status cubert_strided_copy(cubert_client *client, const char *op, const cubert_tensor *in,
                                  const cubert_tensor *out) {
  cubert_strided_plan plan;
  copy_plan(in, out, &plan);
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
    cubert_strided_collapse_axes(&plan.rank, plan.shape, plan.strides, 2);
  }
  cubert_handle *handles[2] = {out->handle, in->handle};
  const cubert_kernel_def *const *k = copy_kernels[wi];
  if (plan.rank == 2 && plan.strides[0][1] == 1 && plan.strides[1][0] == 1 &&
      cubert_launch_max_dim(client) >= 256) {
    const cubert_device_properties *p = cubert_client_properties(client);
    if (p->hardware.max_cube_dim[1] >= 8) return launch_transpose(client, &plan, k[2], handles);
  }
  const bool dense = cubert_strided_plan_contiguous(&plan);
  if (!dense && plan.rank <= 2 && plan.rank >= 1 && plan.shape[plan.rank - 1] >= 64) {
    const cubert_strided_kernels rows = {k[0], k[3], k[1]};
    return cubert_strided_plan_launch(client, &plan, &rows, 0, handles);
  }
  uint64_t info[CUBERT_STRIDED_ND_WORDS] = {0};
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
    nwords = CUBERT_STRIDED_ND_WORDS;
  }
  cubert_kernel_args args = {handles, 2, info, nwords};
  return cubert_launch_1d_tuned(client, dense ? k[0] : k[1], plan.n, &args, plan.rank, 1ull << wi);
}

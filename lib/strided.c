/* cubert — strided launches over the elementwise kernel layouts (kernels/elementwise_ops.h):
   collapsing axes that are contiguous in every operand, and the choice between a dense ("_c"),
   a rows ("_r") and an N-D ("_nd") kernel. The kernel library's elementwise operations and the
   core's strided copy (strided_copy.c) share it. */
#include "strided.h"

#include "cubert/geometry.h"
#include "launch_1d.h"

void cubert_strided_collapse_axes(uint32_t *rank, uint64_t shape[CUBERT_MAX_RANK],
                                  uint64_t (*strides)[CUBERT_MAX_RANK], uint32_t count) {
  uint32_t r = 0;
  for (uint32_t d = 0; d < *rank; ++d) {
    if (shape[d] == 1) continue; /* a length-1 axis never moves any operand */
    if (r > 0) {
      /* Axis d continues axis r-1 when, in every operand, stepping r-1 once equals stepping
         d over its whole length. */
      bool merge = true;
      for (uint32_t k = 0; k < count && merge; ++k)
        merge = strides[k][r - 1] == strides[k][d] * shape[d];
      if (merge) {
        shape[r - 1] *= shape[d];
        for (uint32_t k = 0; k < count; ++k) strides[k][r - 1] = strides[k][d];
        continue;
      }
    }
    shape[r] = shape[d];
    for (uint32_t k = 0; k < count; ++k) strides[k][r] = strides[k][d];
    ++r;
  }
  for (uint32_t d = r; d < CUBERT_MAX_RANK; ++d) {
    shape[d] = 1;
    for (uint32_t k = 0; k < count; ++k) strides[k][d] = 0;
  }
  *rank = r;
}

bool cubert_strided_plan_contiguous(const cubert_strided_plan *plan) {
  if (plan->rank > 1) return false;
  for (uint32_t k = 0; k < plan->count; ++k)
    if (plan->offsets[k] != 0 || (plan->rank == 1 && plan->strides[k][0] != 1)) return false;
  return true;
}

/* Launches a rows ("_r") kernel over the plan (rank <= 2, rows of at least 64 elements): one
   cube per chunk of a row, of the smallest of 64, 128 and 256 units that covers the row. */
static cubert_status launch_rows(cubert_client *client, const cubert_strided_plan *plan,
                                 const cubert_kernel_def *kernel, uint32_t op,
                                 cubert_handle *const *handles) {
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!p) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "the client is released");
  const uint32_t inner = plan->rank - 1;
  const uint64_t rows = plan->rank == 2 ? plan->shape[0] : 1, len = plan->shape[inner];
  const uint32_t dim = len <= 64 ? 64 : len <= 128 ? 128 : 256;
  const uint64_t per_row = len / dim + (len % dim != 0);
  if (per_row > UINT32_MAX / rows)
    return cubert_status_make(CUBERT_CODE_TOO_MANY_RESOURCES,
                              "kernel \"%s\": %llu rows of %llu elements need more than 2^32-1 "
                              "cubes",
                              kernel->name, (unsigned long long)rows, (unsigned long long)len);
  uint64_t info[13] = {rows, len, per_row, op};
  for (uint32_t k = 0; k < plan->count; ++k) {
    info[4 + k] = plan->offsets[k];
    info[7 + k] = plan->strides[k][inner];
    info[10 + k] = plan->rank == 2 ? plan->strides[k][0] : 0;
  }
  cubert_kernel_args args = {(cubert_handle **)handles, plan->count, info, 13};
  cubert_cube_count_selection sel;
  CUBERT_RETURN_IF_ERROR(cubert_cube_count_select(client, (uint32_t)(rows * per_row), &sel));
  return cubert_client_launch(client, kernel, sel.cube_count, cubert_cube_dim_new_3d(dim, 1, 1),
                              &args);
}

cubert_status cubert_strided_plan_launch(cubert_client *client, const cubert_strided_plan *plan,
                                         const cubert_strided_kernels *kernels, uint32_t op,
                                         cubert_handle *const *handles) {
  if (plan->n == 0) return NULL;
  const bool contiguous = cubert_strided_plan_contiguous(plan);
  const cubert_device_properties *p = cubert_client_properties(client);
  if (!contiguous && kernels->rows && plan->rank >= 1 && plan->rank <= 2 &&
      plan->shape[plan->rank - 1] >= 64 && p && p->hardware.max_units_per_cube >= 256 &&
      p->hardware.max_cube_dim[0] >= 256)
    return launch_rows(client, plan, kernels->rows, op, handles);
  uint64_t info[CUBERT_STRIDED_ND_WORDS] = {0};
  uint32_t words;
  info[0] = plan->n;
  if (contiguous) {
    words = 1;
  } else {
    info[1] = plan->rank;
    info[2] = op;
    for (uint32_t k = 0; k < plan->count; ++k) info[3 + k] = plan->offsets[k];
    for (uint32_t d = 0; d < plan->rank; ++d) {
      info[6 + d] = plan->shape[d];
      for (uint32_t k = 0; k < plan->count; ++k) info[14 + 8 * k + d] = plan->strides[k][d];
    }
    words = CUBERT_STRIDED_ND_WORDS;
  }
  cubert_kernel_args args = {(cubert_handle **)handles, plan->count, info, words};
  return cubert_launch_1d(client, contiguous ? kernels->dense : kernels->strided, plan->n, &args);
}

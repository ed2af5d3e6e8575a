/* cubert kernel library: elementwise kernels (fill, add, mul, saxpy). Self-contained OpenCL C
   1.2; see lib/include/cubert/kernels.h for each kernel's buffers and info words.

   Every kernel handles the global unit id `id` when id < n (info[0]): a launch may cover more
   units than elements, and may be spread over a 2-D/3-D cube count, so the id is computed
   cube-major from the group and local ids rather than taken from get_global_id(0). */

/* Global unit id, cube-major (the CPU server numbers units the same way):
   (group linear id) * (units per cube) + (local linear id). */
static ulong cubert_unit_id(void) {
  const ulong groups_x = get_num_groups(0), groups_y = get_num_groups(1);
  const ulong group =
      get_group_id(0) + get_group_id(1) * groups_x + get_group_id(2) * groups_x * groups_y;
  const ulong size_x = get_local_size(0), size_y = get_local_size(1);
  const ulong local_id =
      get_local_id(0) + get_local_id(1) * size_x + get_local_id(2) * size_x * size_y;
  return group * (size_x * size_y * get_local_size(2)) + local_id;
}

__kernel void cubert_fill_u32(__global uint *out, __global const ulong *info) {
  const ulong id = cubert_unit_id();
  if (id < info[0]) out[id] = (uint)info[1];
}

__kernel void cubert_add_f32(__global const float *a, __global const float *b, __global float *out,
                             __global const ulong *info) {
  const ulong id = cubert_unit_id();
  if (id < info[0]) out[id] = a[id] + b[id];
}

/* Signed overflow would be undefined: add and multiply as uint, which wraps (two's complement
   gives the same bits). */
__kernel void cubert_add_i32(__global const int *a, __global const int *b, __global int *out,
                             __global const ulong *info) {
  const ulong id = cubert_unit_id();
  if (id < info[0]) out[id] = as_int(as_uint(a[id]) + as_uint(b[id]));
}

__kernel void cubert_mul_f32(__global const float *a, __global const float *b, __global float *out,
                             __global const ulong *info) {
  const ulong id = cubert_unit_id();
  if (id < info[0]) out[id] = a[id] * b[id];
}

__kernel void cubert_mul_i32(__global const int *a, __global const int *b, __global int *out,
                             __global const ulong *info) {
  const ulong id = cubert_unit_id();
  if (id < info[0]) out[id] = as_int(as_uint(a[id]) * as_uint(b[id]));
}

__kernel void cubert_saxpy_f32(__global const float *x, __global float *y,
                               __global const ulong *info) {
  const ulong id = cubert_unit_id();
  const float a = as_float((uint)info[1]);
  if (id < info[0]) y[id] = a * x[id] + y[id];
}

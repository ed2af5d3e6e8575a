/* cubert kernel library: per-cube partial sums of f32 (cubert_kernel_reduce_sum_f32 in
   lib/include/cubert/kernels.h). Self-contained OpenCL C 1.2:
     info[0] n (elements of in), info[1] e (elements per cube);
     cube c writes out[c] = sum of in[c*e .. min((c+1)*e, n)).

   Any work-group size works, powers of two or not, larger than the scratch array or not:
     1. each unit sums a strided share of the cube's block (neighbouring units read
        neighbouring elements, so loads coalesce);
     2. the first p units (p = the largest power of two <= min(units, SCRATCH)) store their
        shares; the others add theirs in, p at a time, one barrier per round (rounds only
        happen when the cube has more units than p);
     3. a tree over p slots halves the active units each step.
   Every loop bound and branch around a barrier depends only on values uniform across the
   work-group, as OpenCL requires. */

#ifndef CUBERT_REDUCE_SCRATCH
#define CUBERT_REDUCE_SCRATCH 1024 /* floats; 4 KiB fits the 32 KiB OpenCL 1.2 minimum */
#endif

__kernel void cubert_reduce_sum_f32(__global const float *in, __global float *out,
                                    __global const ulong *info) {
  __local float scratch[CUBERT_REDUCE_SCRATCH];

  const ulong n = info[0], per_cube = info[1];
  const ulong groups_x = get_num_groups(0), groups_y = get_num_groups(1);
  const ulong cube =
      get_group_id(0) + get_group_id(1) * groups_x + get_group_id(2) * groups_x * groups_y;
  const uint size_x = (uint)get_local_size(0), size_y = (uint)get_local_size(1);
  const uint units = size_x * size_y * (uint)get_local_size(2);
  const uint unit = (uint)get_local_id(0) + (uint)get_local_id(1) * size_x +
                    (uint)get_local_id(2) * size_x * size_y;

  /* Cubes past the last block (a spread cube count may launch a few extra) have no output
     slot; the test is uniform across the cube, so returning before the barriers is valid. */
  if (per_cube == 0 || cube >= n / per_cube + (n % per_cube != 0)) return;
  const ulong begin = cube * per_cube;
  const ulong end = n - begin < per_cube ? n : begin + per_cube; /* no overflow */

  float share = 0.0f;
  for (ulong i = begin + unit; i < end; i += units) share += in[i];

  uint slots = 1;
  while (slots * 2 <= units && slots * 2 <= CUBERT_REDUCE_SCRATCH) slots *= 2;

  if (unit < slots) scratch[unit] = share;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint base = slots; base < units; base += slots) {
    if (unit >= base && unit - base < slots) scratch[unit - base] += share;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint step = slots / 2; step > 0; step /= 2) {
    if (unit < step) scratch[unit] += scratch[unit + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (unit == 0) out[cube] = scratch[0];
}

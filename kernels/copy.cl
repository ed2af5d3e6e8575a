/* cubert kernel library: strided gather into a contiguous row-major buffer (read_tensor).
   Self-contained OpenCL C 1.2; buffers and info words are described in
   lib/include/cubert/kernels.h (cubert_kernel_copy_strided):
     info[0] rank, info[1] elem_size (bytes), info[2] n, info[3..3+rank) shape,
     info[3+rank..3+2*rank) src strides in elements. */

#ifndef CUBERT_CHECKED
#define CUBERT_CHECKED 1
#endif

/* Global unit id, cube-major (the CPU server numbers units the same way). */
static ulong cubert_unit_id(void) {
  const ulong groups_x = get_num_groups(0), groups_y = get_num_groups(1);
  const ulong group =
      get_group_id(0) + get_group_id(1) * groups_x + get_group_id(2) * groups_x * groups_y;
  const ulong size_x = get_local_size(0), size_y = get_local_size(1);
  const ulong local_id =
      get_local_id(0) + get_local_id(1) * size_x + get_local_id(2) * size_x * size_y;
  return group * (size_x * size_y * get_local_size(2)) + local_id;
}

/* One unit per destination element: split the row-major index into coordinates (innermost
   dimension first) and gather from the strided source. */
__kernel void cubert_copy_strided(__global const uchar *src, __global uchar *dst,
                                  __global const ulong *info) {
  const ulong id = cubert_unit_id();
  const ulong n = info[2];
  if (id >= n) return;
  const uint rank = (uint)info[0];
  const ulong elem = info[1];
  __global const ulong *shape = info + 3;
  __global const ulong *strides = info + 3 + rank;

  ulong rest = id, offset = 0;
  for (uint d = rank; d-- > 1;) {
    const ulong dim = shape[d];
#if CUBERT_CHECKED
    if (dim == 0) return; /* n > 0 with an empty dimension: inconsistent info */
#endif
    offset += (rest % dim) * strides[d];
    rest /= dim;
  }
  /* The outermost coordinate is what is left; it is in range exactly when id < product(shape)
     (for rank 0, only id 0 exists). */
#if CUBERT_CHECKED
  if (rank == 0 ? rest != 0 : rest >= shape[0]) return;
#endif
  if (rank > 0) offset += rest * strides[0];

  switch (elem) {
    case 1:
      dst[id] = src[offset];
      break;
    case 2:
      ((__global ushort *)dst)[id] = ((__global const ushort *)src)[offset];
      break;
    case 4:
      ((__global uint *)dst)[id] = ((__global const uint *)src)[offset];
      break;
    case 8:
      ((__global ulong *)dst)[id] = ((__global const ulong *)src)[offset];
      break;
    default: {
      __global const uchar *from = src + offset * elem;
      __global uchar *to = dst + id * elem;
      for (ulong i = 0; i < elem; ++i) to[i] = from[i];
    }
  }
}

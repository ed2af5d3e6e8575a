#!/bin/bash
# What NVIDIA's OpenCL compiler makes of the library's kernel files: registers, spills and
# shared memory per kernel (the driver's -cl-nv-verbose log), and the PTX it produced (with
# ptxas -v for sm_90 beside it), in the mode the ops launch in (checked) and unchecked.
#   bash tools/gpu/kernel_info.sh [FILE-ID...]   (default kernels_matmul_cube_c)
# Writes $OUT/kernel_info.log and $OUT/ptx/<file>.<mode>.bin (PTX text).
LOG=kernel_info
. "$(dirname "$0")/common.sh"
export PATH=$PATH:/usr/local/cuda/bin
IDS=${*:-kernels_matmul_cube_c}
step "build cubert-kernel-check and the flattened kernel files"
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_CHECK_KERNELS=OFF \
  >/dev/null 2>&1
cmake --build build-gpu -j16 --target cubert-kernel-check cubert_objects 2>&1 |
  grep -E "error|warning" | log
dev=$(for i in 0 1 2 3; do
  build-gpu/cubert-kernel-check --device=$i --quick /dev/null 2>/dev/null | grep -q NVIDIA &&
    echo $i && break
done)
echo "NVIDIA device index: ${dev:-none}" | log
mkdir -p "$OUT/ptx"
for id in $IDS; do
  f=build-gpu/cubert_kernels/cubert_objects/$id.cl
  step "$id"
  build-gpu/cubert-kernel-check --device="${dev:-0}" --options=-cl-nv-verbose --log \
    --binary="$OUT/ptx" "$f" 2>&1 | grep -vE "^$" | log
  for b in "$OUT"/ptx/$id.cl.*.bin; do
    cp "$b" /tmp/k.ptx
    echo "ptxas -v $(basename "$b"):" | log
    ptxas -arch=sm_90 -v /tmp/k.ptx -o /tmp/k.cubin 2>&1 | grep -E "Compiling|registers|spill" | log
  done
done
step done

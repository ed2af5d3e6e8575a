#!/bin/bash
# Issue 24 on the GPU machine: cubert's SGEMM (bench_matmul through the OpenCL server), CLBlast
# (bench_matmul's peer, where the build finds libclblast: the GPU machine has none) and cuBLAS
# (tools/gpu/cublas_sgemm.py: PyTorch torch.mm, TF32 off, CUDA events) in one call on one GPU;
# the FP32 peak from the OpenCL clock and SM count (bench_matmul's header); a plot (SVG).
#   bash tools/gpu/sgemm_compare.sh [SIZES] [REPS]   (default 1024,2048,4096,8192 and 5)
# Also runs the matmul conformance tests on the GPU first (the new candidates' results).
# Writes $OUT/sgemm.log, $OUT/sgemm_cubert.csv, $OUT/sgemm_cublas.csv, $OUT/sgemm_h100.svg.
LOG=sgemm
. "$(dirname "$0")/common.sh"
SIZES=${1:-1024,2048,4096,8192}
REPS=${2:-5}
step "build (Release)"
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_CHECK_KERNELS=OFF \
  >/dev/null 2>&1
cmake --build build-gpu -j16 --target bench_matmul unit_internals_opencl 2>&1 | grep -E "error|warning" | log
step "matmul conformance on the GPU (every candidate, forced and direct)"
CUBERT_TEST_DEVICE=opencl:gpu timeout 150 build-gpu/tests/unit_internals_opencl --filter='ops_matmul/*' 2>&1 |
  tail -8 | log
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 | log
step "cubert (OpenCL server) $SIZES"
timeout 420 build-gpu/bench/bench_matmul --device=opencl:gpu --sizes="$SIZES" --reps="$REPS" \
  --forms=at,bt,batched --csv="$OUT/sgemm_cubert.csv" 2>&1 | log
step "the tuner's picks (set, checksum, candidate index and name, time in ns, key: M N K batches layouts dtype)"
grep -h "^matmul_f32" "$CUBERT_CACHE_DIR"/tune/*.tune 2>&1 | log
step "cuBLAS (PyTorch, TF32 off) $SIZES"
PYTHONUNBUFFERED=1 timeout 240 python3 tools/gpu/cublas_sgemm.py "$SIZES" "$OUT/sgemm_cublas.csv" \
  "$REPS" 2>&1 | log
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv 2>&1 | log
step "plot"
PEAK=$(grep -o "FP32 peak[^)]*) [0-9.]*" "$OUT/$LOG.log" | grep -o "[0-9.]*$" | head -1)
python3 tools/gpu/plot_sgemm_svg.py "$OUT/sgemm_h100.svg" "$OUT/sgemm_cubert.csv" ${PEAK:+--peak $(awk "BEGIN{print $PEAK*1000}")} \
  "$OUT/sgemm_cublas.csv" 2>&1 | log
step done

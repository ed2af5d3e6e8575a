#!/bin/bash
# Issue 24 item 2 on the GPU machine: each op's first call in a fresh process against its tuned
# time (bench_tune_cold on the first GPU), with full tuning, with CUBERT_AUTOTUNE=minimal, after
# importing a cache bundle exported from one run of examples/mlp, and for a larger MLP.
#   bash tools/gpu/tune_cold.sh        (device run, carry [".gpu"]; about 4 minutes)
# Writes $OUT/tunecold.log.
LOG=tunecold
. "$(dirname "$0")/common.sh"
step "build (Release)"
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_CHECK_KERNELS=OFF \
  >/dev/null 2>&1
cmake --build build-gpu -j16 --target bench_tune_cold cubert-info mlp 2>&1 | grep -E "error" | log
step "full, cold (fresh cubert cache per run; NVIDIA's JIT cache as the machine has it)"
timeout 150 build-gpu/bench/bench_tune_cold opencl:gpu 3 2>&1 | log
step "minimal, cold"
CUBERT_AUTOTUNE=minimal timeout 100 build-gpu/bench/bench_tune_cold opencl:gpu 3 2>&1 | log
step "export a bundle from one run"
rm -rf /tmp/src-c
CUBERT_CACHE_DIR=/tmp/src-c timeout 100 build-gpu/examples/mlp opencl:gpu 2>&1 | tail -2 | log
CUBERT_CACHE_DIR=/tmp/src-c build-gpu/cubert-info --export-caches /tmp/mlp.bundle 2>&1 | log
step "bundle imported, cold"
BENCH_BUNDLE=/tmp/mlp.bundle timeout 100 build-gpu/bench/bench_tune_cold opencl:gpu 3 2>&1 | log
step "larger: 1024 x 4096 -> 4096 -> 4096, full, cold"
timeout 150 build-gpu/bench/bench_tune_cold opencl:gpu 2 1024 4096 4096 4096 2>&1 | log
step done

#!/bin/bash
# On the GPU machine, after run_tests.sh: `bash tools/gpu/run_bench.sh` (writes $OUT/sgemm_gpu.csv).
# GPU run 2: issue 12's benchmarks on the first GPU (after run_tests.sh built build-gpu).
. .gpu/setup.sh
export CUBERT_CACHE_DIR=$PWD/.cache/cubert-gpu POCL_CACHE_DIR=$PWD/.cache/pocl-gpu
[ -x build-gpu/bench/bench_matmul ] || { CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null; cmake --build build-gpu -j16 2>&1 | grep -E "error"; }
date -u; uptime
timeout 240 build-gpu/bench/bench_matmul --device=opencl:gpu --sizes=256,512,1024,2048,4096 --reps=5 --csv=$OUT/sgemm_gpu.csv 2>&1 | tail -25
timeout 120 build-gpu/bench/bench_reduce --device=opencl:gpu 2>&1 | tail -20
timeout 60 build-gpu/bench/bench_tune opencl:gpu 2>&1 | tail -12
timeout 60 build-gpu/bench/bench_ops_elementwise opencl:gpu 8192 2>&1 | tail -16

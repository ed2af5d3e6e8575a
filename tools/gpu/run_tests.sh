#!/bin/bash
# On the GPU machine (device tool, carry [".gpu"]): `bash tools/gpu/run_tests.sh`.
# GPU run 1: build everything, then the conformance suite and the examples on the first GPU.
. .gpu/setup.sh
export CUBERT_CACHE_DIR=$PWD/.cache/cubert-gpu POCL_CACHE_DIR=$PWD/.cache/pocl-gpu
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
cmake --build build-gpu -j16 2>&1 | grep -E "error|CLBlast" ; echo "build rc=${PIPESTATUS[0]}"
date -u
build-gpu/tools/cubert-info 2>/dev/null | head -20 || ls build-gpu
(cd build-gpu && timeout 420 ctest -j4 -L opencl --output-on-failure 2>&1 | tail -40)

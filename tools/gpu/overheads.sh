#!/bin/bash
# Issue 24 item 3 on the GPU machine, in one call: the cross-stream dependency overhead on the
# GPU (bench_streams section 1), the first launch in a new process (bench_opencl_server section
# 2) and launch + sync on the host's PoCL (section 1, a 16-core host: the build machine's 2
# cores are too loaded to read 1 us), and where opening the GPU goes (tools/gpu/open_probe.c:
# each OpenCL call of opening a device in a fresh process, and cubert_client_create).
#   bash tools/gpu/overheads.sh [PROBE_TRIALS]   (default 3)
# Writes $OUT/overheads.log.
LOG=overheads
. "$(dirname "$0")/common.sh"
TRIALS=${1:-3}
step "build (Release)"
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_CHECK_KERNELS=OFF \
  >/dev/null 2>&1
cmake --build build-gpu -j16 --target bench_streams bench_opencl_server cubert 2>&1 |
  grep -E "error|warning" | log
cc -O2 -Ilib/include -o build-gpu/open_probe tools/gpu/open_probe.c -Lbuild-gpu -lcubert -lOpenCL \
  -Wl,-rpath,"$PWD/build-gpu" 2>&1 | log
step "opening the GPU, each a fresh process"
for i in $(seq "$TRIALS"); do
  timeout 30 build-gpu/open_probe raw 2>&1 | log
  timeout 30 build-gpu/open_probe cubert 2>&1 | log
done
step "bench_streams section 1 on the GPU"
timeout 120 build-gpu/bench/bench_streams --device=opencl:gpu --only=1 2>&1 | grep -E "^\|" | log
step "bench_opencl_server sections 1 and 2 on the GPU"
timeout 180 build-gpu/bench/bench_opencl_server --device=opencl:gpu --only=12 2>&1 | grep -E "^\|" | log
step "bench_opencl_server section 1 on the host's PoCL"
timeout 120 build-gpu/bench/bench_opencl_server --device=opencl:cpu --only=1 2>&1 | grep -E "^\||CPU|cores" | log

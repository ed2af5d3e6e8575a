#!/bin/bash
# Where the time of an all_reduce over two GPUs goes (device tool, kind nvidia-h200-x2 or
# nvidia-h100-x2, carry [".gpu"]): `bash tools/gpu/comm_diag.sh` (PROBE=0 skips the probe).
# Runs the raw-OpenCL probe of the member pipeline (tools/gpu/comm_probe.c: gated or not,
# blocking writes or not, pinned memory of another context, host copy bandwidth, a peer copy in
# one context), builds bench_comm and cts_opencl, runs bench_comm with its variants (device or
# host combination, chunk sizes, three members, a GPU with the CPU server) and once under
# CUBERT_TRACE, whose file ($OUT/comm_trace.json) shows each member thread's phases per chunk,
# then the collectives suite over both GPUs.
LOG=comm_diag
. tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv | log
nproc | log
if [ "${PROBE:-1}" = 1 ]; then
step "probe"
cc -O2 -o /tmp/comm_probe tools/gpu/comm_probe.c -lOpenCL -lpthread || exit 1
for a in "0 1 4" "1 1 4" "0 0 4" "1 0 4" "0 1 1"; do timeout 20 /tmp/comm_probe $a | tail -1 | log; done
PROBE_FOREIGN=1 timeout 20 /tmp/comm_probe 0 1 4 | tail -1 | log
for t in 1 4 8 16; do timeout 20 /tmp/comm_probe memcpy $t | tail -1 | log; done
timeout 30 /tmp/comm_probe peer 2>&1 | log
fi
step configure
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_MPI=OFF \
  >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
step build
timeout 200 cmake --build build-gpu -j16 --target bench_comm cts_opencl >"$OUT/build.log" 2>&1
echo "build rc=$?" | log
grep -E "error" "$OUT/build.log" | head -20 | log
B=build-gpu/bench/bench_comm
run() { step "$*"; timeout 45 "$@" 2>&1 | grep -E '^\| all_reduce algbw|^\| staged|^ratio' | log; }
run $B opencl:0,opencl:1 --size 256 --reps 5
CUBERT_COMM_DEVICE_REDUCE=0 run $B opencl:0,opencl:1 --size 256 --reps 5
CUBERT_TRACE=$OUT/comm_trace.json run $B opencl:0,opencl:1 --size 256 --reps 2
CUBERT_COMM_CHUNK_BYTES=8388608 run $B opencl:0,opencl:1 --size 256 --reps 5
CUBERT_COMM_CHUNK_BYTES=16777216 run $B opencl:0,opencl:1 --size 256 --reps 5
run $B opencl:0,opencl:1,opencl:0 --size 256 --reps 3
run $B opencl:0,cpu --size 256 --reps 3
step "cts comm over opencl:0,opencl:1 (default chunks, then 4 KiB chunks)"
for c in "" 4096; do
  CUBERT_COMM_CHUNK_BYTES=$c CUBERT_TEST_DEVICE=opencl:0 CUBERT_COMM_DEVICES=opencl:0,opencl:1 \
    timeout 120 build-gpu/tests/cts_opencl --filter 'comm/*' 2>&1 | tail -4 | log
done
step done

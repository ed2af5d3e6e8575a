#!/bin/bash
# On a two-GPU machine (device tool, kind nvidia-h200-x2 or nvidia-h100-x2, carry [".gpu"]):
# `bash tools/gpu/run_multi.sh`. Builds what the multi-device checks need, then runs, most
# wanted first (each step bounded, every log also under $OUT so a cut-off run still reports):
# the collectives suite over both GPUs, to_client and all_reduce benchmarks between them and
# with the CPU server, the devices suite (to_client between every pair) and the interop suite
# on the first GPU. tools/gpu/comm_diag.sh looks into the all_reduce itself.
LOG=run_multi
. tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,clocks.max.sm,driver_version --format=csv | log
step configure
CUBERT_SKIP_DEPS=1 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUBERT_MPI=OFF \
  >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
step build
timeout 200 cmake --build build-gpu -j16 --target cts_opencl bench_to_client bench_comm \
  unit_opencl_launch \
  >"$OUT/build.log" 2>&1
echo "build rc=$?" | log
grep -E "error" "$OUT/build.log" | head -20 | log
step "cts comm over opencl:0,opencl:1"
CUBERT_TEST_DEVICE=opencl:0 CUBERT_COMM_DEVICES=opencl:0,opencl:1 timeout 90 \
  build-gpu/tests/cts_opencl --filter 'comm/*' 2>&1 | tail -15 | log
step "bench_to_client"
timeout 60 build-gpu/bench/bench_to_client --mib=256 --reps=5 opencl:0,opencl:1 opencl:1,opencl:0 \
  opencl:0,cpu cpu,opencl:0 2>&1 | tail -22 | log
step "bench_to_client, 16 staging copy threads"
timeout 40 build-gpu/bench/bench_to_client --mib=256 --reps=5 --copy-threads=16 opencl:0,cpu \
  cpu,opencl:0 2>&1 | grep -E '^\| to_client' | log
step "bench_comm opencl:0,opencl:1"
timeout 45 build-gpu/bench/bench_comm opencl:0,opencl:1 --size 256 --reps 5 2>&1 | tail -9 | log
step "bench_comm opencl:0,cpu"
timeout 45 build-gpu/bench/bench_comm opencl:0,cpu --size 256 --reps 5 2>&1 | tail -9 | log
step "cts devices and interop on opencl:0"
CUBERT_TEST_DEVICE=opencl:0 timeout 90 build-gpu/tests/cts_opencl --filter 'devices/*' 2>&1 |
  tail -12 | log
CUBERT_TEST_DEVICE=opencl:0 timeout 40 build-gpu/tests/cts_opencl --filter 'interop/*' 2>&1 |
  tail -8 | log
step "unit_opencl_launch on opencl:0 (staged and pinned transfers)"
CUBERT_TEST_DEVICE=opencl:0 timeout 60 build-gpu/tests/unit_opencl_launch 2>&1 | tail -6 | log
step "bench_comm opencl:0,opencl:1 with 4 and 16 threads per member, with 6 MiB chunks"
for v in CUBERT_COMM_THREADS=4 CUBERT_COMM_THREADS=16 CUBERT_COMM_CHUNK_BYTES=6291456; do
  echo "$v" | log
  env $v timeout 45 build-gpu/bench/bench_comm opencl:0,opencl:1 --size 256 --reps 5 2>&1 |
    grep -E '^\| all_reduce algbw|^ratio' | log
done
step done

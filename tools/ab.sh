#!/bin/bash
# A/B of this tree against an older one on this machine, alternating, in one call: how
# docs/BENCHMARKS.md measures that a refactoring left the launch path as fast as before
# (issue 23: bench_cpu_server, bench_opencl_server, bench_matmul within 2% of the previous
# commit). tools/gpu/overhead_ab.sh is the same on the GPU machine.
#   git archive <commit> | tar -x -C /tmp/ab-old      # the older tree, once
#   OLD=/tmp/ab-old ROUNDS=5 bash tools/ab.sh [cpu_server opencl_server matmul tune_cold]
# Builds both (Release, benchmarks only) into /tmp/ab-b-old and /tmp/ab-b-new, then runs each
# benchmark ROUNDS times per build, old and new alternating, reports in $OUT (default /tmp/ab).
set -u
OLD=${OLD:?OLD=<folder holding the older tree>}
OUT=${OUT:-/tmp/ab}
JOBS=${JOBS:-$(nproc)}
WHICH=${*:-cpu_server opencl_server matmul}
mkdir -p "$OUT"
targets=$(for w in $WHICH; do printf 'bench_%s ' "$w"; done)
build() {
  CUBERT_SKIP_DEPS=1 cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCUBERT_BUILD_TESTS=OFF \
    -DCUBERT_MPI=OFF ${CMAKE_C_COMPILER_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER} \
    >/dev/null 2>&1
  # shellcheck disable=SC2086
  cmake --build "$2" -j"$JOBS" --target $targets 2>&1 | grep -E "error|Error" | head -5
}
[ -n "${AB_SKIP_BUILD:-}" ] || { build "$OLD" /tmp/ab-b-old; build . /tmp/ab-b-new; }
nproc
uptime
args_cpu_server=${ARGS_cpu_server:---only=123 --n=16777216}
args_matmul=${ARGS_matmul:---sizes=256,512,1024 --reps=5 --no-peer}
args_opencl_server=${ARGS_opencl_server:---only=13}
args_tune_cold=${ARGS_tune_cold:-opencl 1}
for i in $(seq 1 "${ROUNDS:-3}"); do
  for w in $WHICH; do
    for v in old new; do
      echo "== $w $v $i $(cut -d' ' -f1 /proc/loadavg)"
      a="args_$w"
      # Each build tunes into its own cache, warmed by its first run.
      # shellcheck disable=SC2086
      CUBERT_CACHE_DIR=/tmp/ab-cache-$v timeout 300 /tmp/ab-b-$v/bench/bench_$w ${!a} \
        >"$OUT/${w}_${v}_$i.md" 2>&1
      grep -E "^\|" "$OUT/${w}_${v}_$i.md" | head -14
    done
  done
done

#!/bin/bash
# On the GPU machine (16 quiet cores): the CPU server's checked-mode costs of this tree against an
# older one, alternating, in one call — how docs/BENCHMARKS.md measures that a change (issue 21's
# kernel sanitizer) left checked and unchecked launches as fast as before.
# Before the call, export the older tree into the carried folder:
#   rm -rf .gpu/old && mkdir -p .gpu/old && git archive <commit> | tar -x -C .gpu/old
# Then: device run `bash tools/gpu/overhead_ab.sh [cpu_server|matmul|reduce|opencl_server|streams ...]` with carry
# [".gpu"]; reports in $OUT (default: the first three; ROUNDS=n alternations, default 3).
. .gpu/setup.sh
OLD=${OLD:-.gpu/old}
OUT=${OUT:-/tmp/out}
WHICH=${*:-cpu_server matmul reduce}
targets=$(for w in $WHICH; do printf 'bench_%s ' "$w"; done)
build() {
  CUBERT_SKIP_DEPS=1 cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCUBERT_BUILD_TESTS=OFF \
    -DCUBERT_MPI=OFF >/dev/null 2>&1
  # shellcheck disable=SC2086
  cmake --build "$2" -j16 --target $targets 2>&1 | grep -E "error|Error" | head -5
}
build "$OLD" /tmp/b-old &
build . /tmp/b-new &
wait
nproc; uptime
args_cpu_server="--only=123 --n=16777216"
args_matmul="--sizes=512,1024,2048 --reps=5 --no-peer"
args_reduce="--n=4096 --m=4096 --reps=5"
args_opencl_server="--device=opencl:gpu --only=13"
args_streams="--device=opencl:gpu --only=1"
for i in $(seq 1 "${ROUNDS:-3}"); do
  for w in $WHICH; do
    for v in old new; do
      echo "== $w $v $i"
      a="args_$w"
      # Each build tunes into its own cache, warmed by its first run.
      # shellcheck disable=SC2086
      CUBERT_CACHE_DIR=/tmp/cache-$v timeout 150 /tmp/b-$v/bench/bench_$w ${!a} \
        >"$OUT/${w}_${v}_$i.md" 2>&1
      grep -E "^\|" "$OUT/${w}_${v}_$i.md" | head -14
    done
  done
done

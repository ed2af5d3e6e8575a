#!/bin/bash
# On the GPU machine (16 quiet cores): the CPU server's checked-mode costs of this tree against an
# older one, alternating, in one call — how docs/BENCHMARKS.md measures that a change (issue 21's
# kernel sanitizer) left checked and unchecked launches as fast as before.
# Before the call, export the older tree into the carried folder:
#   rm -rf .gpu/old && mkdir -p .gpu/old && git archive <commit> | tar -x -C .gpu/old
# Then: device run `bash tools/gpu/overhead_ab.sh` with carry [".gpu"]; reports in $OUT.
. .gpu/setup.sh
OLD=${OLD:-.gpu/old}
OUT=${OUT:-/tmp/out}
build() {
  CUBERT_SKIP_DEPS=1 cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCUBERT_BUILD_TESTS=OFF \
    -DCUBERT_MPI=OFF >/dev/null 2>&1
  cmake --build "$2" -j16 --target bench_cpu_server 2>&1 | grep -E "error|Error" | head -5
}
build "$OLD" /tmp/b-old &
build . /tmp/b-new &
wait
nproc; uptime
for i in 1 2 3; do
  for v in old new; do
    echo "== $v $i"
    timeout 100 /tmp/b-$v/bench/bench_cpu_server --only=123 --n=16777216 >"$OUT/cpu_${v}_$i.md" 2>&1
    grep -E "^\|" "$OUT/cpu_${v}_$i.md" | head -12
  done
done

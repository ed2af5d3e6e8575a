#!/bin/bash
# A compiler launcher that times each translation unit: appends "<cpu s> <wall s> <object>" to
# $CUBERT_TU_TIMES (default /tmp/cubert-tu-times.txt), then exits as the compiler did. CPU time
# (user + system of the compiler) hardly moves with the machine's load, wall time does.
# Use: cmake -DCMAKE_C_COMPILER_LAUNCHER=$PWD/tools/tu_times.sh ...; then
#      sort -rn /tmp/cubert-tu-times.txt | head   (docs/development.md, "Where the build's time goes")
log=${CUBERT_TU_TIMES:-/tmp/cubert-tu-times.txt}
out=?
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
# `times` (run in this shell, not a subshell) prints the children's user and system time on its
# second line, as "XmY.YYYs XmY.YYYs".
tmp=$(mktemp)
times >"$tmp"
cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; ++i) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] }; printf "%.2f", n }' "$tmp")
rm -f "$tmp"
printf '%s %.2f %s\n' "$cpu" "$(echo "$end - $start" | bc)" "$out" >>"$log"
exit $rc

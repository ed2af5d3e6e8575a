#!/bin/sh
# tools/tune_cold_mlp.sh — the whole-process wall time of examples/mlp's first run with cold
# caches (fresh CUBERT_CACHE_DIR and POCL_CACHE_DIR per run) under each autotune mode, and what
# the run leaves in the autotune cache (docs/BENCHMARKS.md, "Autotune and cold first runs").
#
# Usage: tools/tune_cold_mlp.sh [build dir] [runs] [device]   (default: build 5 opencl)
# Prints, per mode, the median (min-max) wall seconds over the runs and the median number of
# winners in the autotune file afterwards (records that a later run finds on disk). Modes:
#   default        CUBERT_AUTOTUNE unset (full, background tuning where it applies)
#   minimal        CUBERT_AUTOTUNE=minimal
#   full-sync      CUBERT_AUTOTUNE=full CUBERT_AUTOTUNE_BACKGROUND=off (measured in each call)
set -eu
build=${1:-build}
runs=${2:-5}
device=${3:-opencl}
mlp=$build/examples/mlp
[ -x "$mlp" ] || { echo "no $mlp: build the mlp target first" >&2; exit 1; }
median() { sort -g | awk '{v[NR]=$1} END {printf "%s (%s-%s)", v[int((NR+1)/2)], v[1], v[NR]}'; }
for mode in default minimal full-sync; do
  times=$(mktemp) winners=$(mktemp)
  i=0
  while [ "$i" -lt "$runs" ]; do
    dir=$(mktemp -d)
    case $mode in
      default) set -- ;;
      minimal) set -- CUBERT_AUTOTUNE=minimal ;;
      full-sync) set -- CUBERT_AUTOTUNE=full CUBERT_AUTOTUNE_BACKGROUND=off ;;
    esac
    start=$(date +%s.%N)
    env CUBERT_CACHE_DIR="$dir" POCL_CACHE_DIR="$dir/pocl" "$@" "$mlp" "$device" >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc >>"$times"
    cat "$dir"/tune/*.tune 2>/dev/null | awk 'NR > 3 && $1 != "end"' | wc -l >>"$winners"
    rm -rf "$dir"
    i=$((i + 1))
  done
  echo "$mode: wall s $(median <"$times"), winners on disk $(median <"$winners" | cut -d' ' -f1)"
  rm -f "$times" "$winners"
done

# Sourced by the GPU machine scripts of tools/gpu/ (after `LOG=name`): the machine's OpenCL set-up
# (.gpu/setup.sh, carried by the device tool), caches inside the checkout, $OUT, and log/step
# helpers that append to $OUT/$LOG.log so that a run cut off by its time limit still reports.
. .gpu/setup.sh
export CUBERT_CACHE_DIR=$PWD/.cache/cubert-gpu POCL_CACHE_DIR=$PWD/.cache/pocl-gpu
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log() { tee -a "$OUT/$LOG.log"; }
step() { echo "== $(date -u +%T) $*" | log; }

#!/bin/sh
# Installs the Debian packages cubert needs, once. Idempotent: when everything is present it
# only asks dpkg (well under a second). Set CUBERT_SKIP_DEPS=1 to skip it entirely (machines
# without a package archive, such as the GPU machine, which brings its own packages).
set -eu
[ "${CUBERT_SKIP_DEPS:-0}" = 1 ] && exit 0
PKGS="cmake make gcc pkg-config libhwloc-dev libcriterion-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo libopenblas-dev libclblast-dev libopenmpi-dev openmpi-bin doxygen oclgrind python3-clang libclang-dev"
# `install-deps.sh fuzz` (make test-fuzz) adds clang and its runtime libraries (libFuzzer).
[ "${1:-}" = fuzz ] && PKGS="$PKGS clang libclang-rt-dev"
missing=""
for p in $PKGS; do
  s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$s" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "cubert: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing

#!/bin/bash
# The README's first program, verbatim: extracts the kernel file, the host program and the CMake
# lines of README.md's "A first program", checks that they are examples/first.cube.c and
# examples/first.c (so the README shows what the build tests), builds them as a project of
# their own against an installed cubert (find_package, the README's target_link_libraries and
# cubert_add_kernels lines as written) and runs it on each device.
#   tests/package/readme_first.sh PREFIX WORKDIR "DEVICES"   (PREFIX: the staged install)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$1 work=$2 devices=$3
fail() { echo "readme first program: FAILED: $*" >&2; exit 1; }
mkdir -p "$work"
# A fenced block of the given language whose first line starts with the given text.
block() {
  awk -v lang="$1" -v head="$2" '
    $0 == "```" lang { inb = 1; n = 0; next }
    inb && $0 == "```" { if (keep) { printf "%s", text; exit } inb = 0; keep = 0; text = ""; next }
    inb { if (n++ == 0) keep = index($0, head) == 1; text = text $0 "\n" }' "$root/README.md"
}
block c "/* examples/first.cube.c:" >"$work/first.cube.c"
block c "/* examples/first.c:" >"$work/first.c"
block cmake "add_executable(first" >"$work/snippet.cmake"
for f in first.cube.c first.c snippet.cmake; do
  [ -s "$work/$f" ] || fail "README.md has no block for $f"
done
cmp -s "$work/first.cube.c" "$root/examples/first.cube.c" ||
  fail "README's kernel file differs from examples/first.cube.c: $(diff "$work/first.cube.c" "$root/examples/first.cube.c" | head -5)"
cmp -s "$work/first.c" "$root/examples/first.c" ||
  fail "README's host program differs from examples/first.c: $(diff "$work/first.c" "$root/examples/first.c" | head -5)"
{
  echo "cmake_minimum_required(VERSION 3.20)"
  echo "project(readme_first LANGUAGES C)"
  echo "find_package(cubert REQUIRED)"
  cat "$work/snippet.cmake"
} >"$work/CMakeLists.txt"
cmake -S "$work" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "configure"; }
cmake --build "$work/build" >>"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
for device in $devices; do
  echo "== readme first program: $device"
  "$work/build/first" "$device" || fail "first on $device"
done

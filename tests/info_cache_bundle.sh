#!/bin/sh
# cubert-info --export-caches / --import-caches round trip on the CPU server: the MLP example
# tunes into one cache folder, the bundle carries its winners into an empty one (cubert-info
# --tune then lists the same entries there), and a damaged bundle is refused (exit 1) with
# nothing imported.
#   info_cache_bundle.sh CUBERT_INFO MLP
set -eu
info=$1
mlp=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cubert-info-bundle.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/a" "$tmp/b" "$tmp/c"
CUBERT_CACHE_DIR="$tmp/a" "$mlp" cpu 8 32 16 4 >/dev/null
CUBERT_CACHE_DIR="$tmp/a" "$info" --export-caches "$tmp/caches.bundle" | tee "$tmp/export.txt"
grep -q "^exported [1-9][0-9]* autotune file" "$tmp/export.txt"
CUBERT_CACHE_DIR="$tmp/b" "$info" --import-caches "$tmp/caches.bundle" | tee "$tmp/import.txt"
grep -q "^imported [1-9][0-9]* autotune file" "$tmp/import.txt"
# The CPU server's winners, as --tune lists them, without the folder-specific path line.
entries() {
  CUBERT_CACHE_DIR="$1" "$info" --tune | sed -n '/^cpu:/,/^opencl:/p' | grep ' key (' | sort
}
entries "$tmp/a" >"$tmp/a.txt"
entries "$tmp/b" >"$tmp/b.txt"
test -s "$tmp/a.txt"
cmp "$tmp/a.txt" "$tmp/b.txt"
# One byte changed: refused, nothing imported.
size=$(wc -c <"$tmp/caches.bundle")
head -c $((size / 2)) "$tmp/caches.bundle" >"$tmp/bad.bundle"
printf 'X' >>"$tmp/bad.bundle"
tail -c $((size - size / 2 - 1)) "$tmp/caches.bundle" >>"$tmp/bad.bundle"
if CUBERT_CACHE_DIR="$tmp/c" "$info" --import-caches "$tmp/bad.bundle"; then
  echo "a damaged bundle was imported" >&2
  exit 1
fi
test -z "$(ls "$tmp/c")"
echo "cache bundle round trip: $(wc -l <"$tmp/a.txt") cpu entries"

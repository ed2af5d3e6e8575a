#!/bin/sh
# Builds the API reference (docs/api.md): Doxygen over lib/include/cubert/*.h (docs/Doxyfile)
# into OUT/html, quiet on success. Fails, naming what is missing, when a public declaration is
# undocumented: Doxygen's own warnings are errors (WARN_AS_ERROR), and two checks cover what
# Doxygen does not warn about: a header without an @file paragraph (Doxygen skips the
# undocumented members of an undocumented file) and an undocumented enum value.
# Usage: tools/docs.sh [OUT]   (default build/docs; run from anywhere)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/docs}
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
cd "$root"
status=0
for h in lib/include/cubert/*.h; do
  if ! grep -q '@file' "$h"; then
    echo "$h:1: error: no @file paragraph (its declarations would go unchecked)" >&2
    status=1
  fi
done
[ "$status" = 0 ] || exit 1
mkdir -p "$out"
rm -rf "$out/html" "$out/xml"
CUBERT_DOCS_OUT="$out" doxygen docs/Doxyfile
# Every <enumvalue> of the XML output needs a description (<para> in its brief or details),
# except the implementation's names ending in an underscore (CUBERT_DTYPE_COUNT_), which
# HIDE_UNDOC_MEMBERS keeps out of the pages.
bad=$(awk '
  /<compoundname>/ { sub(/.*<compoundname>/, ""); sub(/<\/compoundname>.*/, ""); file = $0 }
  /<enumvalue / { in_value = 1; name = ""; doc = 0; next }
  in_value && /<name>/ { sub(/.*<name>/, ""); sub(/<\/name>.*/, ""); name = $0 }
  in_value && /<para>/ { doc = 1 }
  in_value && /<\/enumvalue>/ {
    if (!doc && name !~ /_$/) print "lib/include/cubert/" file ": error: enum value " name " is not documented"
    in_value = 0
  }' "$out"/xml/*_8h.xml)
if [ -n "$bad" ]; then
  echo "$bad" >&2
  exit 1
fi

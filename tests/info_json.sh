#!/bin/sh
# cubert-info --json: one valid JSON document (python3 -m json.tool parses it) with the CPU
# server's fields, and strings escaped: with --tune the autotune cache path is printed, and
# here it holds a quote, a backslash, a control byte and a byte that is not UTF-8.
#   info_json.sh CUBERT_INFO PYTHON3
set -eu
info=$1
python=$2
"$info" --json >info.json
"$python" -m json.tool info.json >/dev/null
"$python" - info.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
cpu = [b for b in d["backends"] if b["name"] == "cpu"][0]["devices"][0]
assert cpu["selector"] == "cpu" and cpu["available"] is True, cpu
for key in ("name", "max_units_per_cube", "max_cube_dim", "max_cube_count", "plane_size_min",
            "max_shared_memory_size", "num_cpu_cores", "load_width", "memory", "features",
            "timing", "details"):
    assert key in cpu, key
assert cpu["max_units_per_cube"] > 0 and len(cpu["max_cube_dim"]) == 3 and cpu["details"], cpu
print("cubert-info --json: %d backends, cpu: %s" % (len(d["backends"]), cpu["name"]))
PY
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cubert-info-json.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
odd="$tmp/odd \"q\" \\ $(printf 'x\001y\377z')"
CUBERT_CACHE_DIR=$odd "$info" --json --tune >info_tune.json
"$python" -m json.tool info_tune.json >/dev/null
"$python" - info_tune.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
cpu = [b for b in d["backends"] if b["name"] == "cpu"][0]["devices"][0]
cache = cpu["autotune"].get("cache", "")
assert '"q" \\ x\x01y\ufffdz' in cache, cpu["autotune"]
print("cubert-info --json --tune: cache path escaped:", ascii(cache))
PY

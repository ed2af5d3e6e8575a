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
# device description (seed-client.rs.txt: features, io_optimized_vector_sizes; seed-server-base.rs.txt:
# properties_hash): plane sizes {1}, f32 lanes of a 128/256/512-bit ISA, a 16-hex-digit hash
assert cpu["plane_sizes"] == [1], cpu["plane_sizes"]
assert cpu["vector_widths"]["f32"] in (4, 8, 16), cpu["vector_widths"]
assert cpu["vector_widths"]["i8"] == 4 * cpu["vector_widths"]["f32"], cpu["vector_widths"]
assert len(cpu["properties_hash"]) == 16 and int(cpu["properties_hash"], 16) != 0, cpu
assert "fp64" in cpu["features"] and "plane" not in cpu["features"], cpu["features"]
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

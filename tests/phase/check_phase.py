#!/usr/bin/python3
"""Runs tools/cubert_phase.py on rules.cube.c and checks its output and notes against the
file's `expect:`, `expect-not:` and `note:` comments, then the tool's cache: an entry is
reused, and one planted in a folder others may write is not. Usage: check_phase.py TOOL SOURCE
INCLUDE_DIR OUT_DIR. Exit status 0 when every check holds."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

tool, source, include, out_dir = sys.argv[1:5]
out = out_dir + "/rules_phased.c"
run = subprocess.run([sys.executable, tool, source, "--output", out, "-I", include],
                     capture_output=True, text=True)
if run.returncode != 0:
    sys.exit("the tool failed: " + run.stderr)
# The output keeps the file's comments: leave out those holding the checks.
text = re.sub(r"/\* (expect|expect-not|note): .*? \*/", "", open(out).read())
failures = []
for kind, what in re.findall(r"/\* (expect|expect-not|note): (.*?) \*/", open(source).read()):
    if kind == "expect" and what not in text:
        failures.append("missing from the output: " + what)
    elif kind == "expect-not" and what in text:
        failures.append("in the output: " + what)
    elif kind == "note":
        name, construct = what.split(": ", 1)
        want = "CUBE_KERNEL %s keeps the fiber form on the CPU server: %s" % (name, construct)
        if want not in run.stderr:
            failures.append("no note: " + want)
notes = run.stderr.count(": note: ")
expected = len(re.findall(r"/\* note: ", open(source).read()))
if notes != expected:
    failures.append("%d notes, %d expected:\n%s" % (notes, expected, run.stderr))


def cache_run(cache, output):
    return subprocess.run([sys.executable, tool, source, "--output", output, "-I", include,
                           "--cache-dir", cache], capture_output=True, text=True)


cache = out_dir + "/phase_rules_cache"
shutil.rmtree(cache, ignore_errors=True)
cache_run(cache, out_dir + "/rules_cached.c")
entries = glob.glob(cache + "/*/*.json")
if len(entries) != 1 or os.stat(entries[0]).st_mode & 0o077:
    failures.append("the cache holds %s, not one entry of mode 0600" % entries)
else:
    # A planted text: used while the folder is the user's alone, never once others may write it.
    data = json.load(open(entries[0]))
    data["text"] = "/* planted */\n" + data["text"]
    with open(entries[0], "w") as f:
        json.dump(data, f)
    cache_run(cache, out_dir + "/rules_cached.c")
    if "/* planted */" not in open(out_dir + "/rules_cached.c").read():
        failures.append("a valid cache entry was not reused")
    os.chmod(os.path.dirname(entries[0]), 0o777)
    cache_run(cache, out_dir + "/rules_cached.c")
    if "/* planted */" in open(out_dir + "/rules_cached.c").read():
        failures.append("an entry in a folder others may write was used")
print("\n".join(failures) or "all checks hold")
sys.exit(1 if failures else 0)

#!/usr/bin/python3
"""Runs tools/cubert_phase.py on rules.cube.c and checks its output and notes against the
file's `expect:`, `expect-not:` and `note:` comments. Usage: check_phase.py TOOL SOURCE
INCLUDE_DIR OUT_DIR. Exit status 0 when every check holds."""
import re
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
print("\n".join(failures) or "all checks hold")
sys.exit(1 if failures else 0)

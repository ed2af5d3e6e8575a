#!/usr/bin/env python3
"""Checks that the names the documentation mentions exist in the code.

Usage: tools/check_doc_names.py [REPO_ROOT]   (exit 0: all good; 1: problems, listed on stderr)

Every `cubert_*` and `CUBERT_*` identifier mentioned in a comment of the public headers
(lib/include/cubert/, server/ included), in docs/*.md or in a folder's README.md must name
something the code has: an identifier of a C file or header outside comments (string
literals count: environment variables are read by name), of a CMake file or a shell script
(.ci/run included), or one that the build generates (CUBERT_CODE_<name> from status.h's code
table, cubert_kernel_<kernel> from the kernel files). A name that ends with `_`, or is followed by `*`, `<` or `{`, is a prefix or a
pattern and is skipped. So a renamed or removed function cannot stay in a header comment or a
page. Python 3 standard library only."""
import os
import re
import sys

from check_links import walk  # the same folders skipped: build*, dot-folders, caches

NAME = re.compile(r"\b(?:cubert|CUBERT)_[A-Za-z0-9_]+")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
CODE_EXT = (".c", ".h", ".cl")
BUILD_EXT = (".cmake", ".txt", ".in", ".sh")
CI_SCRIPT = os.path.join(".ci", "run")  # reads CUBERT_SKIP_DEPS and the like
# Names the documentation uses as examples of what a user writes, never defined by cubert.
EXAMPLES = {
    "CUBERT_CPU_OVERRIDE_K",  # cube_cpu.h, kernels.md: a user's override of kernel K
    "CUBERT_TYPE_CHECK_MACROS",  # a Doxygen @cond section name
}


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError:
        return ""


def generated_names(root):
    """Names the preprocessor pastes together: status codes and kernel definitions."""
    names = set()
    status = read(os.path.join(root, "lib/include/cubert/status.h"))
    names.update("CUBERT_CODE_" + m for m in re.findall(r"\bX\((\w+),", status))
    for path in walk(os.path.join(root, "kernels")):
        if path.endswith(".cube.c"):
            for kernel in re.findall(r"\b(?:UNIT|CUBE|PHASED)_KERNEL\(\s*(\w+)", read(path)):
                names.add("cubert_kernel_" + kernel)
    return names


def code_names(root):
    names = generated_names(root)
    for path in walk(root):
        if path.endswith(CODE_EXT):
            names.update(NAME.findall(COMMENT.sub(" ", read(path))))
        elif path.endswith(BUILD_EXT) or os.path.basename(path) == "CMakeLists.txt":
            names.update(NAME.findall(read(path)))
    names.update(NAME.findall(read(os.path.join(root, CI_SCRIPT))))
    return names


def documents(root):
    include = os.path.join(root, "lib", "include", "cubert")
    for path in walk(root):
        rel = os.path.relpath(path, root)
        if path.startswith(include) and path.endswith(".h"):
            yield rel, "\n".join(COMMENT.findall(read(path)))
        elif (rel.startswith("docs" + os.sep) and rel.endswith(".md")) or \
                os.path.basename(path) == "README.md":
            yield rel, read(path)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    known = code_names(root) | EXAMPLES
    problems, checked = [], 0
    for rel, text in documents(root):
        for m in NAME.finditer(text):
            name, after = m.group(0), text[m.end():m.end() + 1]
            if name.endswith("_") or after in ("*", "<", "{"):
                continue
            checked += 1
            if name not in known:
                problems.append(f"{rel}: {name} names nothing in the code (renamed or removed? "
                                "name what exists, or drop the reference)")
    for p in sorted(set(problems)):
        print(p, file=sys.stderr)
    print(f"check_doc_names: {checked} mentions checked, {len(set(problems))} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the repository's documentation for references that do not resolve.

Usage: tools/check_links.py [REPO_ROOT]      (exit 0: all good; 1: problems, listed on stderr)

1. Every relative Markdown link `[text](target)` in a tracked .md file names an existing file
   or folder, and its `#anchor`, if any, names a heading of that Markdown file (GitHub's
   heading slugs). Absolute URLs (http, https, mailto) are not fetched.
2. Every `docs/<name>.md` or `docs/<name>.md#anchor` cited in a comment of the C sources,
   headers and CMake files resolves the same way, so comments never point at nothing.
3. Every fenced code block of README.md whose first line is a comment naming
   `examples/<file>` is exactly that file, so the README's first program is the one the build
   compiles and CTest runs.

The repository is walked on disk (build folders, caches and dot-folders skipped), so the
check needs no git and works on a source tarball. Python 3 standard library only."""
import os
import re
import sys

SKIP_DIRS = {".git", ".cache", ".gpu", "node_modules"}
SOURCE_EXT = (".c", ".h", ".cl", ".cmake", ".txt", ".sh", ".py")
LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"\!\[[^\]\n]*\]\(([^)\s]+)\)")
DOC_REF = re.compile(r"\b(docs/[A-Za-z0-9_.-]+\.md)(#[A-Za-z0-9_-]+)?")
FENCE = re.compile(r"^```")


def walk(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not d.startswith("build")
                         and not d.startswith("."))
        for name in sorted(files):
            yield os.path.join(folder, name)


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, counts, in_code = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    in_code = not in_code
                    continue
                m = None if in_code else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
                if m:
                    base = slug(m.group(2))
                    n = counts.get(base, 0)
                    counts[base] = n + 1
                    found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check_target(root, source, target, problems, where):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
        return
    path, _, anchor = target.partition("#")
    if path:
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), path))
    else:
        resolved = source
    if not resolved.startswith(root):
        problems.append(f"{where}: {target} leaves the repository")
        return
    if not os.path.exists(resolved):
        problems.append(f"{where}: {target} does not exist")
        return
    if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
        problems.append(f"{where}: {target}: no heading with anchor #{anchor} in "
                        f"{os.path.relpath(resolved, root)}")


def markdown_lines(path):
    """(line number, text) of the lines outside fenced code blocks and inline code spans."""
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if not in_code:
                yield number, re.sub(r"`[^`]*`", "", line)


def check_readme_programs(root, problems):
    readme = os.path.join(root, "README.md")
    if not os.path.exists(readme):
        return
    blocks, current = [], None
    with open(readme, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                if current is None:
                    current = (number, [])
                else:
                    blocks.append(current)
                    current = None
            elif current is not None:
                current[1].append(line)
    for number, lines in blocks:
        m = re.match(r"^\s*(?:/\*|//|#)\s*(examples/[A-Za-z0-9_.-]+)", lines[0] if lines else "")
        if not m:
            continue
        path = os.path.join(root, m.group(1))
        if not os.path.exists(path):
            problems.append(f"README.md:{number}: code block names {m.group(1)}, which is missing")
            continue
        with open(path, encoding="utf-8") as f:
            if f.read().rstrip("\n") != "".join(lines).rstrip("\n"):
                problems.append(f"README.md:{number}: code block differs from {m.group(1)}; "
                                "copy the file into the README again")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems, links = [], 0
    for path in walk(root):
        rel = os.path.relpath(path, root)
        if path.endswith(".md"):
            for number, line in markdown_lines(path):
                for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
                    links += 1
                    check_target(root, path, m.group(1), problems, f"{rel}:{number}")
        elif path.endswith(SOURCE_EXT) and os.path.basename(path) != "check_links.py":
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.readlines()
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text, 1):
                for m in DOC_REF.finditer(line):
                    links += 1
                    check_target(root, os.path.join(root, "README.md"),
                                 m.group(1) + (m.group(2) or ""), problems, f"{rel}:{number}")
    check_readme_programs(root, problems)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"check_links: {links} references checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Lists the product functions longer than 80 lines (STYLE.md: none should be), by brace
matching over the C files of lib/, backends/ and kernels/ (kernel files *.cube.c left out:
their bodies are macro-generated). A function runs from the first line of its signature to
its closing brace, comments above it not counted.

Usage: tools/long_functions.py [COMMIT]   (default: the working tree; a commit reads git)"""
import re
import subprocess
import sys

REV = sys.argv[1] if len(sys.argv) > 1 else None


def files():
    cmd = ['git', 'ls-tree', '-r', '--name-only', REV] if REV else ['git', 'ls-files']
    names = subprocess.check_output(cmd + ['lib', 'backends', 'kernels'], text=True).split()
    return [f for f in names if f.endswith('.c') and not f.endswith('.cube.c')]


def text(name):
    if REV:
        return subprocess.check_output(['git', 'show', f'{REV}:{name}'], text=True,
                                       errors='replace')
    with open(name, errors='replace') as f:
        return f.read()


def long_functions(name, limit=80):
    lines = text(name).split('\n')
    depth, start = 0, None
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        code = re.sub(r'/\*.*?\*/', '', code)
        if (depth == 0 and code.rstrip().endswith('{') and
                not re.search(r'=\s*\{|^\s*(typedef\s+)?(struct|enum|union)\b', code)):
            j = i
            while j > 0 and lines[j][:1] in (' ', '\t'):
                j -= 1
            if '(' in ''.join(lines[j:i + 1]):
                start = j
        depth += code.count('{') - code.count('}')
        if depth == 0 and start is not None:
            if i - start + 1 > limit:
                yield i - start + 1, lines[start].strip()
            start = None


count = 0
for name in files():
    for n, signature in long_functions(name):
        count += 1
        print(f'{n:4d} {name}: {signature[:70]}')
print(f'{count} functions over 80 lines')

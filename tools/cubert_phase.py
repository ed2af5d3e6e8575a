#!/usr/bin/python3
"""cubert's phase transform: gives every CUBE_KERNEL of a kernel file a phased CPU side.

Run by cubert_add_kernels (cmake/CubertKernels.cmake) on the C side of each kernel file:

    cubert_phase.py --output OUT.c [--depfile OUT.d] [--cache-dir DIR] [-I dir]... [-D def]...
                    FILE.cube.c

It parses FILE with libclang (python3-clang) as the CPU server's C, with the kernel's include
directories and definitions, and writes OUT.c: FILE's text in which each CUBE_KERNEL it can
handle is rewritten as the PHASED_KERNEL a person would write (docs/kernels.md, "Natural kernels
are phased by the build"), with `#line` directives naming FILE's lines, so that the compiler,
the kernel sanitizer and SYNC_CUBE()'s __LINE__ all report the original file:line. The OpenCL
side is not touched. A kernel it cannot handle keeps the fiber form, and the tool prints one
note naming the kernel, its file:line and the construct. CUBE_KERNEL_FIBERS kernels are left
alone. The work is done on the parse: statements, declarations and references come from the
AST; the text of each statement is copied from FILE, its references to per-unit variables that
live across barriers rewritten as MY(x). A phase whose indices the tool can bound also gets a
per-cube version (cubert_phase_ranges.py, beside this file): a copy with direct accesses and
64-bit indices that runs where code before the phase proves every access of it in range.

The output is cached under --cache-dir (used only where the user owns it and nobody else may
write it) by the content of FILE, the headers it includes, the arguments and the text of this
tool and its module, so that a clean build whose kernels did not change does not parse them
again. Exit status: 0 (output written, kernels phased or kept), 2 (bad arguments,
python3-clang missing: the caller builds the fiber form). A file libclang does not parse is
copied unchanged, with a note.
"""
import argparse
import bisect
import hashlib
import json
import os
import sys

try:
    import clang.cindex as ci
except ImportError:  # the caller builds the fiber form
    ci = None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cubert_phase_ranges as ranges  # noqa: E402 (beside this file, installed with it)

BARRIER = "SYNC_CUBE"
# Accesses a phase's version keeps as written (tools/cubert_phase_ranges.py handles LOAD and
# STORE): with any of them left, its statements keep their order between units.
OTHER_ACCESS = ("LOAD_UNIT", "STORE_UNIT", "STORE_SAME", "SHARED_STORE_SAME")
HELPERS = ("CUBE_REDUCE_SUM", "CUBE_REDUCE_MIN", "CUBE_REDUCE_MAX", "CUBE_SCAN_INCLUSIVE_SUM",
           "CUBE_SCAN_EXCLUSIVE_SUM")
# The body's parameters (cube_cpu.h, CUBERT_CUBE_UNIT_PARAMS_) that differ between the units of
# a cube; buffer pointers and the shared-memory pointer are per-unit too (what they point to is
# written by units).
PER_UNIT_PARAMS = {"cubert_id_", "cubert_rid_", "cubert_ul_", "cubert_ux_", "cubert_uy_",
                   "cubert_uz_", "cubert_ax_", "cubert_ay_", "cubert_az_"}
UNIFORM_PARAMS = {"cubert_ctx_", "cubert_mode_", "cubert_own_safe_", "cubert_form_",
                  "cubert_in_phase_", "cubert_cl_", "cubert_cx_", "cubert_cy_", "cubert_cz_",
                  "cubert_form_tag_"}
K = ci.CursorKind if ci else None


class Refused(Exception):
    """A construct the transform does not handle: the kernel keeps the fiber form."""

    def __init__(self, what, line):
        super().__init__(what)
        self.what = what
        self.line = line


class Source:
    """FILE's bytes, tokens and macro expansions, by offset."""

    def __init__(self, tu, path):
        self.tu = tu
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        self.all_tokens = None
        self.macros = []  # (start, end, name) of expansions in FILE
        for c in tu.cursor.get_children():
            if c.kind == K.MACRO_INSTANTIATION and self.here(c):
                self.macros.append((c.extent.start.offset, c.extent.end.offset, c.spelling))

    def here(self, c):
        f = c.location.file
        return f is not None and os.path.samefile(f.name, self.path)

    def text(self, a, b):
        return self.data[a:b].decode("utf-8")

    def tokens(self, a, b):
        """FILE's tokens within [a, b) (one tokenisation of the whole file: libclang's of a
        range inside a macro's arguments stops early)."""
        if self.all_tokens is None:
            f = self.tu.get_file(self.path)
            ext = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, f, 0),
                                                ci.SourceLocation.from_offset(self.tu, f,
                                                                              len(self.data)))
            self.all_tokens = list(self.tu.get_tokens(extent=ext))
            self.starts = [t.extent.start.offset for t in self.all_tokens]
        i = bisect.bisect_left(self.starts, a)
        out = []
        while i < len(self.all_tokens) and self.all_tokens[i].extent.end.offset <= b:
            out.append(self.all_tokens[i])
            i += 1
        return out

    def line(self, off):
        return self.data.count(b"\n", 0, off) + 1

    def stmt_end(self, c):
        """The end offset of statement c, its `;` included (libclang's extent of an expression
        statement stops before it)."""
        end = c.extent.end.offset
        if self.data[end - 1:end] in (b";", b"}"):
            return end
        i = end
        while i < len(self.data) and self.data[i:i + 1] in b" \t\r\n":
            i += 1
        return i + 1 if self.data[i:i + 1] == b";" else end

    def macros_in(self, a, b, names):
        return [m for m in self.macros if a <= m[0] and m[1] <= b and m[2] in names]


def walk(c):
    yield c
    for d in c.get_children():
        yield from walk(d)


def key(c):
    return (c.location.offset, c.spelling)


def children(c):
    return list(c.get_children())


def stmt_list(c):
    """The statements of a body: a compound's children, or the one statement."""
    return children(c) if c.kind == K.COMPOUND_STMT else [c]


class Kernel:
    """One CUBE_KERNEL: its analysis (what is uniform, what crosses a barrier) and its text."""

    def __init__(self, src, fn, macro):
        self.src = src
        self.fn = fn
        self.name = fn.spelling[:-len("_body_")]
        self.macro = macro  # (start, end, name) of the CUBE_KERNEL expansion
        self.body = [c for c in children(fn) if c.kind == K.COMPOUND_STMT][0]
        self.start = self.body.extent.start.offset
        self.end = self.body.extent.end.offset
        self.barriers = src.macros_in(self.start, self.end, (BARRIER,) + HELPERS)
        self.vars = {}  # key -> VAR_DECL
        self.decl_stmt = {}  # var key -> its DECL_STMT
        self.refs = {}  # var key -> [(DECL_REF_EXPR, parent)]
        self.parents = {}
        self._index(self.body, None)
        self.top = set()  # keys of statements directly in a list split at barriers
        self.struct_init = set()  # var keys declared in the header of a loop with barriers
        self.struct_inc = []  # increments of loops with barriers
        self.top_of, self.top_cursor = {}, {}  # node key -> key of its statement in self.top
        self.uniform = set()

    def fail(self, what, c):
        raise Refused(what, self.src.line(c.extent.start.offset if hasattr(c, "extent") else c))

    def _index(self, c, parent):
        for d in c.get_children():
            self.parents[key(d)] = c
            if d.kind == K.VAR_DECL:
                self.vars[key(d)] = d
                self.decl_stmt[key(d)] = c
            elif d.kind == K.DECL_REF_EXPR and d.referenced is not None and \
                    d.referenced.kind == K.VAR_DECL:
                self.refs.setdefault(key(d.referenced), []).append((d, c))
            self._index(d, c)

    def has_barrier(self, c):
        a, b = c.extent.start.offset, self.src.stmt_end(c)
        return any(a <= m[0] and m[1] <= b for m in self.barriers)

    def is_uniform(self, c, allow=None):
        """Whether expression c is the same for every unit: constants, INFO_*, LEN, CUBE_*
        positions and dims, and uniform locals (`allow` adds locals)."""
        for n in walk(c):
            if n.kind != K.DECL_REF_EXPR or n.referenced is None:
                continue
            r = n.referenced
            if r.kind == K.PARM_DECL:
                s = r.spelling
                if not (s in UNIFORM_PARAMS or s.endswith("_len_") or s.endswith("_idx_")):
                    return False
            elif r.kind == K.VAR_DECL and key(r) in self.vars:
                if key(r) not in self.uniform and not (allow and key(r) in allow):
                    return False
        return True

    # ---- the structure: which statements are split at barriers ----
    def mark(self, stmts):
        for s in stmts:
            self.top.add(key(s))
            self.top_cursor[key(s)] = s
            for n in walk(s):
                self.top_of[key(n)] = key(s)
            if not self.has_barrier(s):
                continue
            if s.kind == K.COMPOUND_STMT:
                self.mark(children(s))
            elif s.kind == K.FOR_STMT:
                parts = children(s)
                for p in parts[:-1]:
                    if p.kind == K.DECL_STMT:
                        self.struct_init.update(key(v) for v in children(p))
                    else:
                        self.struct_inc.extend(key(n) for n in walk(p))
                self.mark(stmt_list(parts[-1]))
            elif s.kind in (K.WHILE_STMT, K.DO_STMT):
                body = children(s)[-1 if s.kind == K.WHILE_STMT else 0]
                self.mark(stmt_list(body))
            elif s.kind == K.IF_STMT:
                for p in children(s)[1:]:
                    self.mark(stmt_list(p))

    def op_of(self, parent, lhs):
        for t in self.src.tokens(parent.extent.start.offset, parent.extent.end.offset):
            if t.extent.start.offset >= lhs.extent.end.offset:
                return t.spelling
        return ""

    def writes(self, v):
        """(reference, parent, kind) of each write of var key v: 'assign', 'incdec', 'addr'."""
        out = []
        for d, p in self.refs.get(v, []):
            if p.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and key(children(p)[0]) == key(d):
                out.append((d, p, "assign"))
            elif p.kind == K.BINARY_OPERATOR and key(children(p)[0]) == key(d) and \
                    self.op_of(p, d) == "=":
                out.append((d, p, "assign"))
            elif p.kind == K.UNARY_OPERATOR:
                toks = [t.spelling for t in self.src.tokens(p.extent.start.offset,
                                                           p.extent.end.offset)]
                if toks and (toks[0] in ("++", "--") or toks[-1] in ("++", "--")):
                    out.append((d, p, "incdec"))
                elif toks and toks[0] == "&":
                    out.append((d, p, "addr"))
        return out

    def uniform_ok(self, v):
        c = self.vars[v]
        if c.type.kind == ci.TypeKind.CONSTANTARRAY:
            return False
        init = [x for x in children(c) if x.kind.is_expression()]
        if init and not self.is_uniform(init[-1]):
            return False
        for d, p, kind in self.writes(v):
            if kind == "addr":
                return False
            if key(p) in self.struct_inc:
                continue
            ts = self.top_cursor.get(self.top_of.get(key(p)))
            if ts is None or self.has_barrier(ts) or not self.is_uniform(ts):
                return False
        return True

    def find_uniform(self):
        # A helper's destination is written by the helper, per unit.
        dsts = {self.src.tokens(m[0], m[1])[-2].spelling for m in self.barriers if m[2] != BARRIER}
        cand = {v for v in self.vars if self.vars[v].spelling not in dsts and
                (v in self.struct_init or key(self.decl_stmt[v]) in self.top)}
        self.uniform = set(cand)
        changed = True
        while changed:
            changed = False
            for v in sorted(self.uniform):
                if not self.uniform_ok(v):
                    self.uniform.discard(v)
                    changed = True

    # ---- the phases ----
    def new_seg(self, a=None, b=None):
        self.nseg += 1
        if a is not None:
            self.seg_ranges.append((a, b, self.nseg))
        return self.nseg

    def macro_at(self, s, names):
        a, b = s.extent.start.offset, s.extent.end.offset
        for m in self.barriers:
            if m[0] == a and m[1] == b and m[2] in names:
                return m
        return None

    def top_uniform(self, s):
        if s.kind == K.DECL_STMT:
            vs = declarators(s)
            return bool(vs) and all(key(v) in self.uniform for v in vs)
        return self.is_uniform(s)

    def build(self, stmts):
        items, phase = [], None
        for s in stmts:
            helper = self.macro_at(s, HELPERS)
            if helper:
                if phase is None:
                    phase = ["phase", self.new_seg(), []]
                    items.append(phase)
                items.append(self.helper(s, helper, phase))
                phase = None
            elif self.has_barrier(s):
                phase = None
                items.append(self.structural(s))
            elif self.top_uniform(s):
                if s.kind == K.DECL_STMT and phase is not None:
                    items.insert(items.index(phase), ("top", s))
                else:
                    phase = None
                    items.append(("top", s))
            else:
                uniform = [v for v in declarators(s) if key(v) in self.uniform]
                if phase is None:
                    phase = ["phase", self.new_seg(), []]
                    items.append(phase)
                if uniform:  # the uniform declarators before the phase, the rest in it
                    self.split.add(key(s))
                    items.insert(items.index(phase), ("top", s, uniform))
                phase[2].append(("stmt", s))
                self.seg_ranges.append((s.extent.start.offset, self.src.stmt_end(s), phase[1]))
        return items

    def helper(self, s, m, phase):
        """CUBE_REDUCE_* / CUBE_SCAN_*: the value into a per-unit temporary in the phase before,
        the helper itself between phases with the temporary and the destination as MY()."""
        args = self.macro_args(m)
        if len(args) < 3 or len(args[-1]) != 1:
            self.fail("%s whose destination is not a plain local variable" % m[2], s)
        dst = args[-1][0].spelling
        dvars = [v for v in self.vars if self.vars[v].spelling == dst]
        if len(dvars) != 1 or dvars[0] in self.uniform:
            self.fail("%s whose destination is not a per-unit local variable" % m[2], s)
        self.forced.add(dvars[0])
        value = [t for a in args[:-2] for t in a + [None]][:-1]
        for t in value:
            if t is not None and t.kind == ci.TokenKind.IDENTIFIER:
                for v in self.vars:
                    if self.vars[v].spelling == t.spelling:
                        self.extra_refs.setdefault(v, set()).add(phase[1])
        self.extra_refs.setdefault(dvars[0], set()).add(self.new_seg())
        tmp = "cubert_pv%d_" % len(self.temps)
        scratch = self.src.text(args[-2][0].extent.start.offset, args[-2][-1].extent.end.offset)
        self.temps.append((tmp, scratch))
        phase[2].append(("value", tmp, value, s))
        self.helper_ranges.append((m[0], m[1]))
        return ("helper", s, m[2], tmp, scratch, dst)

    def structural(self, s):
        """A statement with barriers inside: uniform control flow kept around the phases."""
        k = s.kind
        parts = children(s)
        if k == K.COMPOUND_STMT:
            return ("block", s, self.build(parts))
        if self.macro_at(s, (BARRIER,)):
            return ("sync", s)
        if k in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT):
            body = parts[-1] if k != K.DO_STMT else parts[0]
            heads = [p for p in parts if key(p) != key(body)]
            seg = self.new_seg()
            for h in heads:
                self.seg_ranges.append((h.extent.start.offset, h.extent.end.offset, seg))
                ok = all(self.is_uniform(x) for x in children(h)) if h.kind == K.DECL_STMT \
                    else self.is_uniform(h)
                if not ok:
                    self.fail("a barrier in a loop whose condition is not uniform (it depends on "
                              "a unit's position, a buffer, shared memory or a per-unit variable)",
                              s)
            return ("loop", s, body, self.build(stmt_list(body)))
        if k == K.IF_STMT:
            cond = parts[0]
            self.seg_ranges.append((cond.extent.start.offset, cond.extent.end.offset,
                                    self.new_seg()))
            if not self.is_uniform(cond):
                self.fail("a barrier under a condition that is not uniform (it depends on a "
                          "unit's position, a buffer, shared memory or a per-unit variable)", s)
            return ("if", s, [(p, self.build(stmt_list(p))) for p in parts[1:]])
        self.fail("a barrier inside a %s" % k.name.lower().replace("_stmt", ""), s)

    # ---- what lives across barriers ----
    def analyse(self):
        self.nseg, self.seg_ranges, self.forced, self.extra_refs = 0, [], set(), {}
        self.temps, self.helper_ranges, self.returns = [], [], []
        self.split = set()  # declarations whose uniform declarators are emitted before the phase
        self.subs = {}  # replacements while a phase's version is written (rewrite)
        for n in walk(self.body):
            if n.kind in (K.GOTO_STMT, K.INDIRECT_GOTO_STMT, K.LABEL_STMT) and self.barriers:
                self.fail("goto or a label in a kernel with barriers", n)
        self.mark(children(self.body))
        self.find_uniform()
        self.items = self.build(children(self.body))
        self.check_jumps()
        self.classify()

    def seg_of(self, off):
        best = None
        for a, b, seg in self.seg_ranges:
            if a <= off < b and (best is None or b - a < best[1] - best[0]):
                best = (a, b, seg)
        return best[2] if best else None

    def segs(self, v, decl=True):
        out = set(self.extra_refs.get(v, ()))
        offs = [d.location.offset for d, _ in self.refs.get(v, [])]
        offs += [self.vars[v].location.offset] if decl else []
        for off in offs:
            if any(a <= off < b for a, b in self.helper_ranges):
                continue
            seg = self.seg_of(off)
            if seg is not None:
                out.add(seg)
        return out

    def cheap(self, v):
        """A per-unit value recomputed in each phase that needs it rather than stored, as a
        hand-written kernel recomputes its indices: never written, and its initialiser reads
        only positions, uniform locals that never change, and other such values."""
        c = self.vars[v]
        init = [x for x in children(c) if x.kind.is_expression()]
        if not init or self.writes(v) or c.type.kind == ci.TypeKind.CONSTANTARRAY:
            return False
        for n in walk(init[-1]):
            if n.kind == K.CALL_EXPR and not ranges.callee(n).startswith(
                    ("cubert_min_", "cubert_max_", "cubert_clamp_", "cubert_abs_")):
                return False
            if n.kind != K.DECL_REF_EXPR or n.referenced is None:
                continue
            r = n.referenced
            if r.kind == K.PARM_DECL and not (
                    r.spelling in UNIFORM_PARAMS or r.spelling in PER_UNIT_PARAMS or
                    r.spelling.endswith(("_len_", "_idx_"))):
                return False
            if r.kind == K.VAR_DECL and key(r) in self.vars:
                rk = key(r)
                if not ((rk in self.uniform and not self.writes(rk)) or rk in self.cheaps):
                    return False
        return True

    def classify(self):
        self.exclusive, self.cheaps, self.decl_seg = [], [], {}
        names = [c.spelling for c in self.vars.values()]
        for v in sorted(self.vars, key=lambda v: self.vars[v].location.offset):
            if v in self.uniform:
                continue
            self.decl_seg[v] = self.seg_of(self.vars[v].location.offset)
            if self.cheap(v) and v not in self.forced:
                self.cheaps.append(v)
                continue
            if len(self.segs(v)) <= 1 and v not in self.forced:
                continue
            c = self.vars[v]
            if c.type.kind == ci.TypeKind.CONSTANTARRAY:
                self.fail("the per-unit array `%s` lives across a barrier" % c.spelling, c)
            if names.count(c.spelling) > 1:
                self.fail("the per-unit variable `%s` lives across a barrier and its name is "
                          "declared twice in the kernel" % c.spelling, c)
            if c.type.kind == ci.TypeKind.POINTER and any(
                    n.kind == K.UNARY_OPERATOR and self.src.text(
                        n.extent.start.offset, n.extent.start.offset + 1) == "&"
                    for n in walk(c)):
                self.fail("the address of a per-unit variable escapes a phase (`%s` keeps it "
                          "across a barrier)" % c.spelling, c)
            self.exclusive.append(v)
        self.exnames = {self.vars[v].spelling for v in self.exclusive}

    def check_jumps(self):
        last = self.items[-1] if self.items else None
        for it in self.all_phases(self.items):
            for e in it[2]:
                if e[0] == "stmt":
                    self._jumps(e[1], 0, 0, it is last)

    def _jumps(self, c, loops, breaks, last):
        k = c.kind
        if k == K.RETURN_STMT:
            if loops or not last:
                self.fail("return before a barrier (a unit that leaves the kernel early "
                          "skips the barriers the others reach)", c)
            self.returns.append(c.extent.start.offset)
        if k in (K.BREAK_STMT,) and breaks == 0 or k == K.CONTINUE_STMT and loops == 0:
            self.fail("break or continue across a barrier", c)
        inner = k in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)
        for d in c.get_children():
            self._jumps(d, loops + inner, breaks + (inner or k == K.SWITCH_STMT), last)

    def all_phases(self, items):
        for it in items:
            if it[0] == "phase":
                yield it
            elif it[0] in ("block", "loop"):
                yield from self.all_phases(it[-1])
            elif it[0] == "if":
                for _, sub in it[2]:
                    yield from self.all_phases(sub)

    # ---- the phased text ----
    def at(self, off):
        return '#line %d "%s"' % (self.src.line(off), self.src.path)

    def rewrite(self, a, b):
        """FILE's text [a, b) with per-unit variables that cross barriers as MY(x), a unit's
        early return as the end of its trip through the phase, and, while a phase's version
        is written, its replacements (self.subs: start -> (end, text function); an empty
        range inserts the text)."""
        out, pos, prev = [], a, ""
        for t in self.src.tokens(a, b):
            ta, tb = t.extent.start.offset, t.extent.end.offset
            if ta < pos:
                continue
            sub = self.subs.get(ta)
            if sub is not None:
                out.append(self.src.text(pos, ta) + sub[1]())
                pos = max(ta, sub[0])
                if sub[0] > ta:
                    prev = ""
                    continue
            rep = None
            if t.kind == ci.TokenKind.IDENTIFIER and t.spelling in self.exnames and \
                    prev not in (".", "->"):
                rep = "MY(%s)" % t.spelling
            elif t.spelling == "return" and ta in self.returns:
                rep = "continue"
            if rep is not None:
                out.append(self.src.text(pos, ta) + rep)
                pos = tb
            prev = t.spelling
        out.append(self.src.text(pos, b))
        return "".join(out)

    def stmt_text(self, s):
        end = self.src.stmt_end(s)
        vs = declarators(s)
        if key(s) in self.split:
            vs = [v for v in vs if key(v) not in self.uniform]
        idle = [key(v) for v in vs if key(v) in self.cheaps and
                self.decl_seg[key(v)] not in self.segs(key(v), decl=False)]
        # In a phase's version an index local may be left unused (its uses computed in 64 bits).
        pre = "CUBERT_CUBE_UNUSED_ " if self.subs and vs and all(
            key(v) in self.cheaps for v in vs) else ""
        if not any(key(v) in self.exclusive for v in vs) and not idle and key(s) not in self.split:
            return pre + self.rewrite(s.extent.start.offset, end)
        out = []
        for v in vs:
            init = [x for x in children(v) if x.kind.is_expression()]
            if key(v) in idle:  # recomputed where it is used
                continue
            if key(v) in self.exclusive:
                if init:
                    out.append("MY(%s) = %s;" % (v.spelling, self.rewrite(
                        init[-1].extent.start.offset, v.extent.end.offset)))
            else:
                out.append(pre + self.declaration(s, v))
        return " ".join(out)

    def declaration(self, s, v):
        """Declarator v of declaration s as a declaration of its own: the shared specifiers
        (`const uint32_t`) and v's declarator, pointer stars included."""
        vs = declarators(s)
        first = vs[0].location.offset
        cut, depth = first, 0
        for t in self.src.tokens(s.extent.start.offset, first):
            if t.spelling in ("(", "["):
                depth += 1
            elif t.spelling in (")", "]"):
                depth -= 1
            elif t.spelling == "*" and depth == 0:
                cut = t.extent.start.offset
                break
        i = [key(o) for o in vs].index(key(v))
        start = cut
        if i > 0:
            commas = [t for t in self.src.tokens(vs[i - 1].extent.end.offset, v.location.offset)
                      if t.spelling == ","]
            start = commas[0].extent.end.offset
        return "%s%s;" % (self.src.text(s.extent.start.offset, cut),
                          self.rewrite(start, v.extent.end.offset).strip())

    def phase(self, it):
        seg = it[1]
        need = {v for v in self.cheaps if seg in self.segs(v) and self.decl_seg.get(v) != seg}
        grow = True
        while grow:
            grow = False
            for v in list(need):
                for n in walk(self.vars[v]):
                    r = n.referenced if n.kind == K.DECL_REF_EXPR else None
                    if r is not None and key(r) in self.cheaps and key(r) not in need and \
                            self.decl_seg.get(key(r)) != seg:
                        need.add(key(r))
                        grow = True
        first = it[2][0][-1].extent.start.offset
        out = [self.at(first), "PHASE {"]
        acting = [e for e in it[2] if e[0] != "stmt" or self.stmt_text(e[1])]
        if len(acting) == 1 and acting[0][0] == "stmt" and acting[0][1].kind == K.IF_STMT and \
                len(children(acting[0][1])) == 2:
            limit = self.x_limit(children(acting[0][1])[0])
            if limit:
                out[1] = "CUBERT_CUBE_PHASE_BELOW_X_(%s) {" % limit
        out += self.cheap_decls(need)
        body = []
        for e in it[2]:
            if e[0] == "stmt":
                text = self.stmt_text(e[1])
                body += [self.at(e[1].extent.start.offset), text] if text else []
            else:
                toks = [t for t in e[2] if t is not None]
                body += [self.at(e[3].extent.start.offset), "MY(%s) = (%s);" % (
                    e[1], self.rewrite(toks[0].extent.start.offset, toks[-1].extent.end.offset))]
        # A phase left with only declarations recomputed where they are used is dropped.
        return self.version(it, out[1], out + body + ["}"]) if body else []

    # ---- a phase's per-cube version (tools/cubert_phase_ranges.py) ----
    def version(self, it, header, checked):
        """The phase's lines: its version under the facts that make it valid, else `checked`
        (the phase as written); `checked` alone when the version would change nothing."""
        stmts = [e[1] for e in it[2] if e[0] == "stmt"]
        if len(stmts) != len(it[2]):
            return checked
        rg, facts = ranges.Ranges(self), []
        subs, left = self.version_subs(stmts, rg, facts)
        if not any(v[0] > k for k, v in subs.items()):
            return checked
        self.subs = subs
        try:
            groups = self.fission(stmts) if not left else None
            fast = []
            if groups is None or len(groups) < 2:
                fast = [header] + self.group_decls(stmts) + self.version_body(stmts, top=True) + \
                    ["}"]
            else:
                for lim, g in groups:
                    head = "PHASE {" if lim is None else "CUBERT_CUBE_PHASE_RANGE_(%s, %s) {" % (
                        self.unit_range(lim.get("x"), "cubert_dx_"),
                        self.unit_range(lim.get("y"), "cubert_dy_"))
                    fast += [head] + self.group_decls(g) + self.version_body(g) + ["}"]
        finally:
            self.subs = {}
        facts = list(dict.fromkeys(facts))
        return [self.at(stmts[0].extent.start.offset),
                "if (CUBERT_CUBE_VERSIONS_ && %s) {" % " &&\n    ".join(facts)] + fast + \
            ["} else {"] + checked + ["}"]

    @staticmethod
    def unit_range(bound, dim):
        return "0, %s" % dim if bound is None else "%s, (uint64_t)(%s) + 1" % (bound, bound)

    def version_body(self, stmts, top=False):
        out = []
        for s in stmts:
            if not top and s.kind == K.DECL_STMT:
                continue  # index locals: group_decls declares them
            text = self.stmt_text(s)
            out += [self.at(s.extent.start.offset), text] if text else []
        return out

    def clean_range(self, c):
        """c's [start, end) in FILE when its text is there, outside every macro call."""
        a, b = c.extent.start, c.extent.end
        if a.file is None or b.file is None or not os.path.samefile(a.file.name, self.src.path):
            return None
        a, b = a.offset, b.offset
        if a >= b or any(m[0] <= a and b <= m[1] or m[0] < a < m[1] < b or a < m[0] < b < m[1]
                         for m in self.src.macros):
            return None  # inside a macro call (its expansion's range), or across one's edge
        return a, b

    def version_subs(self, stmts, rg, facts):
        """The version's replacements (LOAD/STORE by direct accesses, per-unit subscripts in 64
        bits, bound tests by 1, index locals marked unused) with their facts added to `facts`,
        and whether a checked access is left."""
        subs, a0, b0 = {}, stmts[0].extent.start.offset, self.src.stmt_end(stmts[-1])
        access = self.src.macros_in(a0, b0, ("LOAD", "STORE"))
        found = {}
        for s in stmts:
            for n in walk(s):
                if n.kind == K.CALL_EXPR and n.spelling == "cubert_chk_" and len(children(n)) == 7:
                    off = ranges.spelled(children(n)[3].extent.start)[1]
                    inner = [m for m in access if m[0] <= off < m[1]]
                    if inner:
                        found[min(inner, key=lambda m: m[1] - m[0])] = n
                elif n.kind == K.ARRAY_SUBSCRIPT_EXPR and len(children(n)) == 2:
                    r, t = self.clean_range(children(n)[1]), rg.term(children(n)[1])
                    if r and t and ranges.has_pos(t):
                        rg.facts(t, facts)
                        facts.append("cubert_span_ok_(%s)" % rg.span(t))
                        subs[r[0]] = (r[1], lambda w=rg.wide(t): "(%s)" % w)
                elif n.kind == K.IF_STMT and self.clean_range(n):
                    r, f = self.clean_range(children(n)[0]), rg.cond(children(n)[0])
                    if r and f:
                        facts.append(f)
                        subs[r[0]] = (r[1], lambda: "1")
                elif n.kind == K.DECL_STMT and n not in stmts and declarators(n) and all(
                        key(v) in self.cheaps for v in declarators(n)):
                    r = self.clean_range(n)
                    if r:
                        subs[r[0]] = (r[0], lambda: "CUBERT_CUBE_UNUSED_ ")
        left = len(found) < len(access) or any(
            a0 <= m[0] and m[1] <= b0 and (m[2] in OTHER_ACCESS or "ATOMIC" in m[2])
            for m in self.src.macros)
        for m, chk in found.items():
            args = self.macro_args(m)
            t = rg.term(children(chk)[3])
            if t is None or len(args) != (2 if m[2] == "LOAD" else 3):
                left = True
                continue
            rg.facts(t, facts)
            length = children(chk)[4].spelling
            facts.append("cubert_span_in_(%s, %s)" % (rg.span(t), length))
            buf = "(%s)[%s]" % (length[:-len("_len_")], rg.wide(t))
            if m[2] == "LOAD":
                subs[m[0]] = (m[1], lambda b=buf: b)
            else:
                va, vb = args[2][0].extent.start.offset, args[2][-1].extent.end.offset
                subs[m[0]] = (m[1], lambda b=buf, va=va, vb=vb: "%s = (%s)" % (
                    b, self.rewrite(va, vb)))
        return subs, left

    def macro_args(self, m):
        """The tokens of each argument of macro call m (start, end, name)."""
        args, depth, cur = [], 0, []
        for t in self.src.tokens(m[0], m[1])[2:-1]:
            if t.spelling in ("(", "[", "{"):
                depth += 1
            elif t.spelling in (")", "]", "}"):
                depth -= 1
            if t.spelling == "," and depth == 0:
                args.append(cur)
                cur = []
            else:
                cur.append(t)
        return [a for a in args + [cur] if a]

    def fission(self, stmts):
        """The version's phases when the phase's statements of the form `if (x == L) ...` (x
        the unit's x or y position) go into phases of their own: [(L or None, statements)], in
        order; None when a statement declares more than index locals (they are redeclared in
        each phase) or a unit may return in the phase (version() splits only where no checked
        access and no atomic is left, whose order between units would change)."""
        a0, b0 = stmts[0].extent.start.offset, self.src.stmt_end(stmts[-1])
        if any(a0 <= r < b0 for r in self.returns):
            return None  # a unit's return ends its trip through the whole phase
        for s in stmts:
            if s.kind == K.DECL_STMT and not all(key(v) in self.cheaps for v in declarators(s)):
                return None
        groups, cur = [], []
        for s in stmts:
            if s.kind == K.DECL_STMT:
                continue  # index locals: group_decls declares them where they are used
            lim = self.unit_equal(s)
            if lim is None:
                cur.append(s)
                continue
            if cur:
                groups.append((None, cur))
            groups.append((lim, [s]))
            cur = []
        if cur:
            groups.append((None, cur))
        return groups

    def unit_equal(self, s):
        """{"x": L text, "y": L text} (either or both) for `if (X == L) ...` without else (X the
        unit's x or y position, or a never assigned local holding it, among the condition's
        conjuncts), else None."""
        if s.kind != K.IF_STMT or len(children(s)) != 2:
            return None
        todo, found = [children(s)[0]], {}
        while todo:
            c = bare(todo.pop())
            if c.kind != K.BINARY_OPERATOR:
                continue
            lhs, rhs = children(c)
            op = self.op_of(c, lhs)
            if op == "&&":
                todo += [lhs, rhs]
                continue
            for x, bound in ((lhs, rhs), (rhs, lhs)):
                if op != "==" or not self.plain_uniform(bound):
                    continue
                for axis, name in (("x", "cubert_ux_"), ("y", "cubert_uy_")):
                    if self.is_x(x, (name,)):
                        found[axis] = self.rewrite(bound.extent.start.offset,
                                                   bound.extent.end.offset)
        return found or None

    def group_decls(self, stmts):
        """Declarations of the index locals the statements use and do not declare."""
        need, todo = set(), [n for s in stmts for n in walk(s)]
        inside = {key(n) for s in stmts for n in walk(s) if n.kind == K.VAR_DECL}
        while todo:
            n = todo.pop()
            r = n.referenced if n.kind == K.DECL_REF_EXPR else None
            if r is not None and key(r) in self.cheaps and key(r) not in need | inside:
                need.add(key(r))
                todo += list(walk(self.vars[key(r)]))
        return self.cheap_decls(need, "CUBERT_CUBE_UNUSED_ ")

    def cheap_decls(self, need, pre=""):
        """Declarations of the cheap per-unit locals `need`, recomputed at a phase's start."""
        out = []
        for v in sorted(need, key=lambda v: self.vars[v].location.offset):
            c = self.vars[v]
            init = [x for x in children(c) if x.kind.is_expression()][-1]
            out += [self.at(c.extent.start.offset), "%sconst %s %s = %s;" % (
                pre, unqualified(c.type.spelling), c.spelling,
                self.src.text(init.extent.start.offset, c.extent.end.offset))]
        return out

    # ---- a phase whose units past an x bound do nothing ----
    def x_limit(self, cond):
        """The C text of a bound L such that condition cond is false for every unit with
        UNIT_POS_X >= L, from a conjunct `X < L`, `L > X` or `X == L` (X the unit's x or linear
        position, L of an integer type, uniform and without calls), else None."""
        c = bare(cond)
        if c.kind != K.BINARY_OPERATOR:
            return None
        lhs, rhs = children(c)
        op = self.op_of(c, lhs)
        if op == "&&":
            return self.x_limit(lhs) or self.x_limit(rhs)
        for x, bound, ops in ((lhs, rhs, ("<", "==")), (rhs, lhs, (">", "=="))):
            if op in ops and self.is_x(x) and self.plain_uniform(bound):
                text = self.rewrite(bound.extent.start.offset, bound.extent.end.offset)
                return "(uint64_t)(%s) + 1" % text if op == "==" else text
        return None

    def is_x(self, e, names=("cubert_ux_", "cubert_ul_")):
        """Whether e is the unit's x or linear position (the parameters `names`), or a per-unit
        local never written whose initialiser is (each of an integer type of 32 bits or more, so
        that it does not wrap)."""
        e = bare(e)
        if e.kind == K.CSTYLE_CAST_EXPR:
            if not wide_int(e.type):
                return False
            e = bare(children(e)[-1])
        if e.kind != K.DECL_REF_EXPR or e.referenced is None:
            return False
        r = e.referenced
        if r.kind == K.PARM_DECL:
            return r.spelling in names
        v = key(r)
        if v not in self.cheaps or not wide_int(r.type):
            return False
        return self.is_x([x for x in children(r) if x.kind.is_expression()][-1], names)

    def plain_uniform(self, e):
        return wide_int(e.type) and self.is_uniform(e) and not any(
            n.kind == K.CALL_EXPR for n in walk(e))

    def emit(self, items):
        out = []
        for it in items:
            kind, s = it[0], it[1]
            if kind == "phase":
                out += self.phase(it)
                continue
            a = s.extent.start.offset
            out.append(self.at(a))
            if kind == "top" and len(it) > 2:
                out.append(" ".join(self.declaration(s, v) for v in it[2]))
            elif kind in ("top", "sync"):
                out.append(self.src.text(a, self.src.stmt_end(s)))
            elif kind == "helper":
                out.append("%s(MY(%s), %s, MY(%s));" % (it[2], it[3], it[4], it[5]))
            elif kind == "block":
                out += ["{"] + self.emit(it[2]) + ["}"]
            elif kind == "loop" and s.kind == K.DO_STMT:
                out += ["do {"] + self.emit(it[3]) + [self.at(it[2].extent.end.offset), "} " +
                        self.src.text(it[2].extent.end.offset, self.src.stmt_end(s))]
            elif kind == "loop":
                out += [self.src.text(a, it[2].extent.start.offset) + "{"] + self.emit(it[3])
                out.append("}")
            elif kind == "if":
                (then, tsub), rest = it[2][0], it[2][1:]
                out += [self.src.text(a, then.extent.start.offset) + "{"] + self.emit(tsub)
                out.append("}")
                if rest:
                    out += ["else {"] + self.emit(rest[0][1]) + ["}"]
        return out

    def text(self):
        m = self.macro
        out = [self.at(m[0]), "PHASED_KERNEL" + self.src.text(m[0] + len(m[2]), self.start) + "{"]
        for v in self.exclusive:
            c = self.vars[v]
            out += [self.at(c.extent.start.offset),
                    "EXCLUSIVE(%s, %s);" % (unqualified(c.type.spelling), c.spelling)]
        for tmp, scratch in self.temps:
            out.append("EXCLUSIVE(__typeof__((%s)[0]), %s);" % (scratch, tmp))
        out += self.emit(self.items)
        out += [self.at(self.end - 1), "}"]
        return "\n".join(out) + "\n"


def bare(e):
    """Expression e without its parentheses and implicit conversions."""
    while e.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(children(e)) == 1:
        e = children(e)[0]
    return e


def wide_int(t):
    t = t.get_canonical()
    return t.kind in (ci.TypeKind.INT, ci.TypeKind.UINT, ci.TypeKind.LONG, ci.TypeKind.ULONG,
                      ci.TypeKind.LONGLONG, ci.TypeKind.ULONGLONG)


def declarators(s):
    """The variables a declaration statement declares ([] for any other statement)."""
    return [v for v in children(s) if v.kind == K.VAR_DECL] if s.kind == K.DECL_STMT else []


def unqualified(t):
    t = t.strip()
    while t.startswith("const "):
        t = t[len("const "):]
    while t.endswith(" const"):
        t = t[:-len(" const")]
    return t


def cube_kernels(src):
    """(function, macro expansion or None) of each CUBE_KERNEL body defined in FILE."""
    out = []
    for c in src.tu.cursor.get_children():
        if c.kind != K.FUNCTION_DECL or not c.is_definition() or not c.spelling.endswith("_body_"):
            continue
        if not src.here(c):
            continue
        params = {p.spelling for p in c.get_arguments()}
        if "cubert_ux_" not in params or "cubert_form_tag_" in params:
            continue
        at = [m for m in src.macros if m[0] == c.location.offset]
        if at and at[0][2] == "CUBE_KERNEL_FIBERS":
            continue
        out.append((c, at[0] if at and at[0][2] == "CUBE_KERNEL" else None))
    return out


def transform(path, args, notes):
    """FILE's text with its CUBE_KERNELs phased, and the files it includes."""
    tu = ci.Index.create().parse(path, args=["-std=c11", "-x", "c"] + args,
                                 options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise Refused("libclang does not parse the file: %s" % errors[0], errors[0].location.line)
    src = Source(tu, path)
    deps = sorted({i.include.name for i in tu.get_includes()})
    pieces, pos = [], 0
    for fn, macro in cube_kernels(src):
        name = fn.spelling[:-len("_body_")]
        if macro is None:
            notes.append((fn.location.line, name, "it is defined inside a macro", fn.location.line))
            continue
        k = Kernel(src, fn, macro)
        try:
            k.analyse()
            text = k.text()
        except Refused as r:
            notes.append((src.line(macro[0]), name, r.what, r.line))
            continue
        pieces += [src.text(pos, macro[0]), "\n", text, '#line %d "%s"\n' % (
            src.line(k.end), path)]
        pos = k.end
    pieces.append(src.text(pos, len(src.data)))
    return '#line 1 "%s"\n' % path + "".join(pieces), deps


def digest(data):
    return hashlib.sha256(data).hexdigest()


def file_digest(path):
    with open(path, "rb") as f:
        return digest(f.read())


def cached(cache_dir, path, args):
    """The cache entry's file name and its content when still valid (FILE and every header it
    included unchanged), else None."""
    tool = b""
    for own in (__file__, ranges.__file__):
        with open(own, "rb") as f:
            tool += f.read()
    with open(path, "rb") as f:
        k = digest(tool + b"\0" + "\0".join([path] + args).encode() + b"\0" + f.read())
    entry = os.path.join(cache_dir, k[:2], k + ".json")
    try:
        # The text is compiled into a program: like cubert's own caches (lib/base/cache_file.c),
        # an entry is used only when it, its folder and the cache folder are the user's and
        # nobody else may write them.
        if not all(trusted(p) for p in (cache_dir, os.path.dirname(entry), entry)):
            return entry, None
        with open(entry) as f:
            data = json.load(f)
        if all(os.path.exists(d) and file_digest(d) == h for d, h in data["deps"]):
            return entry, data
    except (OSError, ValueError, KeyError):
        pass
    return entry, None


def trusted(path):
    st = os.stat(path)
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def store(entry, data):
    """Writes a cache entry (folders 0700, the file 0600); a cache that cannot be written only
    costs the next build the transform again."""
    try:
        os.makedirs(os.path.dirname(entry), mode=0o700, exist_ok=True)
        tmp = "%s.%d" % (entry, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, entry)
    except OSError:
        pass


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    # The build may run this before anything else of the target made the folder.
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--output", required=True)
    ap.add_argument("--depfile")
    ap.add_argument("--cache-dir")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("-D", dest="defines", action="append", default=[])
    a = ap.parse_args(argv)
    if ci is None:
        print("cubert_phase.py: python3-clang is missing", file=sys.stderr)
        return 2
    path = os.path.abspath(a.file)
    args = ["-I" + i for i in a.includes if i] + ["-D" + d for d in a.defines if d]
    entry, data = cached(a.cache_dir, path, args) if a.cache_dir else (None, None)
    if data is None:
        notes = []
        try:
            text, deps = transform(path, args, notes)
        except Refused as r:  # the whole file keeps the fiber form
            with open(path) as f:
                text, deps = '#line 1 "%s"\n' % path + f.read(), []
            notes = [(r.line, "(every one in the file)", r.what, r.line)]
            entry = None  # its headers are unknown: not cached
        data = {"text": text, "notes": notes, "deps": [[d, file_digest(d)] for d in deps]}
        if entry:
            store(entry, data)
    for line, name, what, at in data["notes"]:
        print("%s:%d: note: CUBE_KERNEL %s keeps the fiber form on the CPU server: %s (line %d)"
              % (path, line, name, what, at), file=sys.stderr)
    write_if_changed(a.output, data["text"])
    if a.depfile:
        deps = [path] + [d for d, _ in data["deps"]]
        write_if_changed(a.depfile, "%s: %s\n" % (a.output, " \\\n  ".join(
            d.replace(" ", "\\ ") for d in deps)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

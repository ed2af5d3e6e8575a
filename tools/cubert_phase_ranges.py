"""Per-cube versions of a phase for tools/cubert_phase.py (docs/kernels.md, "Natural kernels
are phased by the build").

A phase's integer index expressions are read from the parse as terms over the unit's
positions, uniform values and the cheap per-unit locals (inlined). Before the phase, the
generated code computes each term's range over the cube's units exactly, in 64 bits
(cube_cpu.h's cubert_span_*), and checks the facts a faster copy of the phase assumes:
- every LOAD/STORE index it can read is below its buffer's length: the copy accesses the
  buffer directly;
- each such index and each per-unit array subscript is computed in 64 bits without a wrap:
  the copy computes them in 64 bits from the positions, so the compiler sees consecutive units
  at consecutive addresses;
- a clamp (min, max, `c ? a : b`) between a per-unit value and a uniform one passes the
  per-unit value through: the copy keeps it alone;
- an `if` whose condition is a conjunction of bound tests between a per-unit value and a
  uniform one holds for every unit: the copy's condition is 1.
When every fact holds the copy runs, else the phase as written. In the copy, when nothing is
checked any more, statements of the form `if (x == L) ...` (x the unit's x or y position) are
split into phases of their own, in order, the x loop of an x test running over unit L alone.
"""
import ctypes

try:
    import clang.cindex as ci
except ImportError:
    ci = None

K = ci.CursorKind if ci else None
OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "<<": "shl", ">>": "shr",
       "&": "and"}
CMPS = ("<", "<=", ">", ">=")
# The unit's positions: the wide value and the range over the cube's units.
POS = {
    "cubert_ux_": ("0", "(int64_t)cubert_dx_ - 1"),
    "cubert_uy_": ("0", "(int64_t)cubert_dy_ - 1"),
    "cubert_uz_": ("0", "(int64_t)cubert_dz_ - 1"),
    "cubert_ul_": ("0", "(int64_t)cubert_dx_ * cubert_dy_ * cubert_dz_ - 1"),
    "cubert_ax_": ("(int64_t)cubert_cx_ * cubert_dx_",
                   "(int64_t)cubert_cx_ * cubert_dx_ + cubert_dx_ - 1"),
    "cubert_ay_": ("(int64_t)cubert_cy_ * cubert_dy_",
                   "(int64_t)cubert_cy_ * cubert_dy_ + cubert_dy_ - 1"),
    "cubert_az_": ("(int64_t)cubert_cz_ * cubert_dz_",
                   "(int64_t)cubert_cz_ * cubert_dz_ + cubert_dz_ - 1"),
}
# The phased body's parameters that are the same for every unit of the cube.
UNIFORM_PARAMS = ("cubert_cx_", "cubert_cy_", "cubert_cz_", "cubert_cl_", "cubert_dx_",
                  "cubert_dy_", "cubert_dz_")
SIGNED = ("INT", "LONG", "LONGLONG", "SHORT", "SCHAR", "CHAR_S")
UNSIGNED = ("UINT", "ULONG", "ULONGLONG", "USHORT", "UCHAR", "CHAR_U", "BOOL")
_files = {}


def int_range(t):
    """(lo, hi) of integer type t as C text, the unsigned 64-bit types capped at INT64_MAX
    (ranges are exact 64-bit signed values), or None for any other type."""
    t = t.get_canonical()
    size = t.get_size()
    if t.kind.name in UNSIGNED and size in (1, 2, 4, 8):
        return ("0", "INT64_MAX" if size == 8 else str((1 << (8 * size)) - 1))
    if t.kind.name in SIGNED and size in (1, 2, 4, 8):
        if size == 8:
            return ("INT64_MIN", "INT64_MAX")
        return (str(-(1 << (8 * size - 1))), str((1 << (8 * size - 1)) - 1))
    return None


def spelled(loc):
    """(file name, offset) where the token at loc is spelled (inside a macro's argument: the
    argument's own text, which libclang's expansion locations do not give)."""
    lib = ci.conf.lib
    if not getattr(lib, "cubert_spelling_ready", False):
        lib.clang_getSpellingLocation.argtypes = [
            ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
        lib.clang_getSpellingLocation.restype = None
        lib.cubert_spelling_ready = True
    fp, line, col, off = ctypes.c_void_p(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    lib.clang_getSpellingLocation(loc, ctypes.byref(fp), ctypes.byref(line), ctypes.byref(col),
                                  ctypes.byref(off))
    if not fp.value:
        return None, 0
    return ci.File(ctypes.cast(fp, ci.c_object_p)).name, off.value


def file_text(name):
    if name not in _files:
        with open(name, "rb") as fh:
            _files[name] = fh.read()
    return _files[name]


BINARY = ("<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "&", "|",
          "^", "<", ">")


def binary_op(n):
    """The operator of binary expression n: the text between its operands' expansion locations
    where they differ, else the token before its right operand where that is spelled (in a
    macro's argument), after n's own start."""
    a, b = kids(n)
    ea, sb = a.extent.end, b.extent.start
    if ea.file and sb.file and ea.file.name == sb.file.name and ea.offset < sb.offset:
        text = file_text(ea.file.name)[ea.offset:sb.offset].decode("utf-8", "replace").strip()
        return text if text in BINARY else None
    fn, on = spelled(n.extent.start)
    fb, ob = spelled(sb)
    if not fb or fb != fn or on >= ob:
        return None
    text = file_text(fb)[max(on, ob - 8):ob].decode("utf-8", "replace").rstrip()
    for op in BINARY:
        if text.endswith(op):
            return op
    return None


def literal(c):
    """The value of integer literal c (spelled in a macro's body too), by libclang's evaluator;
    None where it does not fit int64_t."""
    lib = ci.conf.lib
    if not getattr(lib, "cubert_eval_ready", False):
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getKind.restype = ctypes.c_int
        lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
        lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
        lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        lib.cubert_eval_ready = True
    r = lib.clang_Cursor_Evaluate(c)
    if not r:
        return None
    try:
        if lib.clang_EvalResult_getKind(r) != 1:  # CXEval_Int
            return None
        if lib.clang_EvalResult_isUnsignedInt(r):
            v = lib.clang_EvalResult_getAsUnsigned(r)
        else:
            v = lib.clang_EvalResult_getAsLongLong(r)
    finally:
        lib.clang_EvalResult_dispose(r)
    return v if -(1 << 63) <= v < (1 << 63) else None


def callee(c):
    """The name of the function call c calls (through a _Generic selection: the family's first
    candidate, as cube_cpu.h's min and max select by type)."""
    if c.spelling:
        return c.spelling
    for n in c.walk_preorder():
        if n.kind == K.DECL_REF_EXPR and n.referenced is not None and \
                n.referenced.kind == K.FUNCTION_DECL:
            return n.spelling
    return ""


def kids(c):
    return list(c.get_children())


def has_pos(t):
    return t[0] == "pos" or any(has_pos(x) for x in t[1:] if isinstance(x, tuple) and x and
                                isinstance(x[0], str) and x[0] in TERMS)


TERMS = ("lit", "uni", "pos", "op", "fit", "min", "max", "sel")


class Ranges:
    """The terms, facts and 64-bit texts of one kernel's phases (a cubert_phase.Kernel)."""

    def __init__(self, kernel):
        self.k = kernel

    # ---- terms ----
    def term(self, c):
        """c as a term, or None where it is not an integer expression of the supported kinds."""
        k = c.kind
        if k == K.PAREN_EXPR and len(kids(c)) == 1:
            return self.term(kids(c)[0])
        rng = int_range(c.type)
        if rng is None:
            return None
        if k == K.INTEGER_LITERAL:
            v = literal(c)
            return None if v is None else ("lit", v)
        if k in (K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR) and kids(c):
            inner = self.term(kids(c)[-1])
            return inner and ("fit", inner, rng)
        if k == K.DECL_REF_EXPR:
            return self.ref(c, rng)
        if k == K.ARRAY_SUBSCRIPT_EXPR and len(kids(c)) == 2:  # CUBE_DIM_*: the phased dims
            base, at = kids(c)
            while base.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(kids(base)) == 1:
                base = kids(base)[0]
            dim = literal(at) if base.kind == K.MEMBER_REF_EXPR and \
                base.spelling == "cube_dim" else None
            return ("uni", "cubert_d%s_" % "xyz"[dim], rng) if dim in (0, 1, 2) else None
        if k == K.BINARY_OPERATOR and len(kids(c)) == 2:
            a, b = kids(c)
            op = binary_op(c)
            if op not in OPS:
                return None
            ta, tb = self.term(a), self.term(b)
            return ta and tb and ("op", OPS[op], ta, tb, rng)
        if k == K.CALL_EXPR and callee(c).startswith(("cubert_min_", "cubert_max_")) and \
                len(kids(c)) == 3:
            ta, tb = self.term(kids(c)[1]), self.term(kids(c)[2])
            if not (ta and tb):
                return None
            return (callee(c)[len("cubert_"):len("cubert_min")], ta, tb, rng,
                    self.choose(ta, tb))
        if k == K.CONDITIONAL_OPERATOR and len(kids(c)) == 3:
            cond, a, b = kids(c)
            ta, tb = self.term(a), self.term(b)
            pick = self.choose(ta, tb) if ta and tb else None
            if pick is None:
                return None
            fact = self.cond(cond, pick == 0)
            return fact and ("sel", fact, ta if pick == 0 else tb, rng)
        return None

    def ref(self, c, rng):
        r = c.referenced
        if r is None:
            return None
        if r.kind == K.PARM_DECL:
            if r.spelling in POS:
                return ("pos", r.spelling)
            s = r.spelling
            if s in UNIFORM_PARAMS or s.endswith("_len_"):
                return ("uni", s, rng)
            return None
        v = (r.location.offset, r.spelling)
        if v in self.k.uniform and v in self.k.vars:
            return ("uni", r.spelling, rng)
        if v in self.k.cheaps:
            init = [x for x in kids(r) if x.kind.is_expression()]
            inner = init and self.term(init[-1])
            return inner and ("fit", inner, rng)
        return None

    @staticmethod
    def choose(ta, tb):
        """Which of a clamp's two values passes through: the per-unit one against a uniform."""
        if has_pos(ta) and not has_pos(tb):
            return 0
        if has_pos(tb) and not has_pos(ta):
            return 1
        return None

    def cond(self, c, want=True):
        """The fact (C text) that condition c is true (want) or false for every unit of the
        cube, from bound tests between a per-unit value and a uniform one; None otherwise."""
        while c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(kids(c)) == 1:
            c = kids(c)[0]
        if c.kind == K.BINARY_OPERATOR and len(kids(c)) == 2:
            a, b = kids(c)
            op = binary_op(c)
            if op == "&&" and want:
                fa, fb = self.cond(a), self.cond(b)
                return fa and fb and "(%s && %s)" % (fa, fb)
            if op in CMPS:
                ta, tb = self.term(a), self.term(b)
                if not (ta and tb) or has_pos(ta) == has_pos(tb):
                    return None
                if op in (">", ">="):
                    ta, tb, op = tb, ta, "<" if op == ">" else "<="
                sa, sb = self.span(ta), self.span(tb)
                if want:
                    return "cubert_span_%s_(%s, %s)" % ("lt" if op == "<" else "le", sa, sb)
                return "cubert_span_%s_(%s, %s)" % ("le" if op == "<" else "lt", sb, sa)
            return None
        t = self.term(c)
        if t is None or not has_pos(t):
            return None
        return "cubert_span_%s_(%s)" % ("nonzero" if want else "zero", self.span(t))

    # ---- texts ----
    def span(self, t):
        """C text of term t's range over the cube's units (a cubert_span_)."""
        kind = t[0]
        if kind == "lit":
            return "cubert_span_s_(%d)" % t[1]
        if kind == "uni":
            lo = t[2][0]
            return ("cubert_span_u_((uint64_t)%s)" if lo == "0" else
                    "cubert_span_s_((int64_t)%s)") % t[1]
        if kind == "pos":
            return "cubert_span_of_(%s, %s)" % POS[t[1]]
        if kind == "fit":
            return "cubert_span_fit_(%s, %s, %s)" % (self.span(t[1]), t[2][0], t[2][1])
        if kind == "op":
            return "cubert_span_fit_(cubert_span_%s_(%s, %s), %s, %s)" % (
                t[1], self.span(t[2]), self.span(t[3]), t[4][0], t[4][1])
        if kind in ("min", "max"):
            a, b, rng, pick = t[1:]
            if pick is None:
                return "cubert_span_%s_(%s, %s)" % (kind, self.span(a), self.span(b))
            return "cubert_span_fit_(%s, %s, %s)" % (self.span(a if pick == 0 else b), *rng)
        return "cubert_span_fit_(%s, %s, %s)" % (self.span(t[2]), *t[3])  # sel

    def facts(self, t, out):
        """The facts term t's 64-bit text assumes, added to out."""
        if t[0] in ("min", "max") and t[4] is not None:
            a, b = (t[1], t[2]) if t[4] == 0 else (t[2], t[1])
            lo, hi = (a, b) if t[0] == "min" else (b, a)
            out.append("cubert_span_le_(%s, %s)" % (self.span(lo), self.span(hi)))
        if t[0] == "sel":
            out.append(t[1])
        for x in t[1:]:
            if isinstance(x, tuple) and x and x[0] in TERMS:
                self.facts(x, out)

    def wide(self, t):
        """C text of term t computed in 64 bits (equal to the C value where the facts hold)."""
        kind = t[0]
        if kind == "lit":
            return "(int64_t)%d" % t[1]
        if kind == "uni":
            return "(int64_t)%s" % t[1]
        if kind == "pos":
            return "(int64_t)%s" % t[1]
        if kind == "fit":
            return self.wide(t[1])
        if kind == "op":
            return "(%s %s %s)" % (self.wide(t[2]), {v: o for o, v in OPS.items()}[t[1]],
                                   self.wide(t[3]))
        if kind in ("min", "max"):
            if t[4] is None:
                return "cubert_%s_i64_(%s, %s)" % (kind, self.wide(t[1]), self.wide(t[2]))
            return self.wide(t[1] if t[4] == 0 else t[2])
        return self.wide(t[2])  # sel

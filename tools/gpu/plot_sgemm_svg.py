#!/usr/bin/env python3
"""SGEMM GFLOP/s against N as an SVG, with no plotting library (the GPU machine has none).

Usage: tools/gpu/plot_sgemm_svg.py OUT.svg FILE.csv [FILE.csv ...] [--peak GFLOPS] [--title T]

Reads bench_matmul's CSV rows "device,impl,n,gflops_median,gflops_min,gflops_max" (and
tools/gpu/cublas_sgemm.py's, the same format); draws one line per impl (medians, with min-max
bars; the forms "-at", "-bt", "-batched" dashed), N on a log2 axis, and the FP32 peak as a
horizontal line when given.
"""
import csv
import math
import sys
from collections import defaultdict

COLORS = {"cubert": "#d62728", "cuBLAS": "#1f77b4", "CLBlast": "#2ca02c"}


def main(argv):
    args, peak, title = [], None, "SGEMM, f32 row-major, N x N x N"
    i = 1
    while i < len(argv):
        if argv[i] == "--peak":
            peak, i = float(argv[i + 1]), i + 2
        elif argv[i] == "--title":
            title, i = argv[i + 1], i + 2
        else:
            args.append(argv[i])
            i += 1
    out, paths = args[0], args[1:]
    series = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                series[row["impl"]].append((int(row["n"]), float(row["gflops_median"]),
                                            float(row["gflops_min"]), float(row["gflops_max"])))
    ns = sorted({p[0] for pts in series.values() for p in pts})
    ymax = max([p[3] for pts in series.values() for p in pts] + [peak or 0]) * 1.08
    W, H, L, R, T, B = 760, 480, 70, 170, 40, 50
    lx0, lx1 = math.log2(ns[0]), math.log2(ns[-1]) if len(ns) > 1 else math.log2(ns[0]) + 1
    X = lambda n: L + (math.log2(n) - lx0) / max(lx1 - lx0, 1e-9) * (W - L - R)
    Y = lambda g: H - B - g / ymax * (H - T - B)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    step = 10 ** math.floor(math.log10(ymax / 5))
    step *= 5 if ymax / step > 25 else 2 if ymax / step > 10 else 1
    g = 0.0
    while g <= ymax:
        o.append(f'<line x1="{L}" x2="{W - R}" y1="{Y(g):.1f}" y2="{Y(g):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{L - 6}" y="{Y(g) + 4:.1f}" text-anchor="end">{g:g}</text>')
        g += step
    for n in ns:
        o.append(f'<text x="{X(n):.1f}" y="{H - B + 18}" text-anchor="middle">{n}</text>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">N</text>')
    o.append(f'<text x="16" y="{(T + H - B) / 2}" transform="rotate(-90 16 {(T + H - B) / 2})" '
             f'text-anchor="middle">GFLOP/s</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" '
             f'stroke="black"/>')
    legend = []
    if peak:
        o.append(f'<line x1="{L}" x2="{W - R}" y1="{Y(peak):.1f}" y2="{Y(peak):.1f}" '
                 f'stroke="black" stroke-dasharray="2,3"/>')
        legend.append(("FP32 peak", "black", "2,3"))
    for impl in sorted(series):
        pts = sorted(series[impl])
        base = impl.split("-")[0]
        color = COLORS.get(base, "#7f7f7f")
        dash = "" if impl == base else {"at": "6,3", "bt": "2,2", "batched": "8,2,2,2"}.get(
            impl.split("-", 1)[1], "4,4")
        path = " ".join(f"{X(n):.1f},{Y(m):.1f}" for n, m, _, _ in pts)
        o.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
                 f'stroke-dasharray="{dash}"/>')
        for n, m, lo, hi in pts:
            o.append(f'<line x1="{X(n):.1f}" x2="{X(n):.1f}" y1="{Y(lo):.1f}" y2="{Y(hi):.1f}" '
                     f'stroke="{color}"/><circle cx="{X(n):.1f}" cy="{Y(m):.1f}" r="2.5" '
                     f'fill="{color}"/>')
        legend.append((impl, color, dash))
    for k, (name, color, dash) in enumerate(legend):
        y = T + 10 + 18 * k
        o.append(f'<line x1="{W - R + 10}" x2="{W - R + 40}" y1="{y}" y2="{y}" stroke="{color}" '
                 f'stroke-width="2" stroke-dasharray="{dash}"/>')
        o.append(f'<text x="{W - R + 46}" y="{y + 4}">{name}</text>')
    o.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(o) + "\n")
    for impl in sorted(series):
        print(impl, " ".join(f"{n}:{m:.0f}" for n, m, _, _ in sorted(series[impl])))


if __name__ == "__main__":
    main(sys.argv)

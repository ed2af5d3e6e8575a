#!/usr/bin/env python3
"""Plot SGEMM GFLOP/s against matrix size from bench_matmul's CSV files.

Usage: tools/plot_sgemm.py OUT.png FILE.csv [FILE.csv ...] [--title TEXT]

Each CSV holds rows "device,impl,n,gflops_median,gflops_min,gflops_max" (bench_matmul
--csv=PATH). One line per (device, impl) with the medians, and a band for min-max. Writes OUT.png
(e.g. docs/img/sgemm_cpu.png). Without matplotlib it prints the table and exits 0: plotting is
optional, the figures are in the CSV.
"""
import csv
import sys
from collections import defaultdict


def load(paths):
    series = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["device"], row["impl"])
                series[key].append((int(row["n"]), float(row["gflops_median"]),
                                    float(row["gflops_min"]), float(row["gflops_max"])))
    for points in series.values():
        points.sort()
    return series


def main(argv):
    title = "SGEMM, f32 row-major, N x N x N"
    args = list(argv[1:])
    if "--title" in args:
        i = args.index("--title")
        title = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, paths = args[0], args[1:]
    series = load(paths)
    for (device, impl), points in sorted(series.items()):
        print(f"{device} / {impl}: " + ", ".join(f"{n}: {m:.3g}" for n, m, _, _ in points))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot written", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (device, impl), points in sorted(series.items()):
        ns = [p[0] for p in points]
        ax.plot(ns, [p[1] for p in points], marker="o", label=f"{impl} ({device})")
        ax.fill_between(ns, [p[2] for p in points], [p[3] for p in points], alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N")
    ax.set_ylabel("GFLOP/s (median, band: min-max)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

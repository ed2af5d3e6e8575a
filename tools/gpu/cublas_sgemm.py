#!/usr/bin/env python3
"""cuBLAS SGEMM through PyTorch, the peer of bench_matmul on NVIDIA GPUs (issue 24).

Usage: python3 tools/gpu/cublas_sgemm.py SIZES CSV [REPS]
  SIZES  comma-separated N (N x N x N products), e.g. 1024,2048,4096,8192
  CSV    rows "device,impl,n,gflops_median,gflops_min,gflops_max" (bench_matmul's format)
  REPS   samples per size and form (default 5)

FP32 as cuBLAS computes it without tensor cores: torch.backends.cuda.matmul.allow_tf32 = False
(and cudnn's flag off too). Forms, as bench_matmul --forms: plain torch.mm(a, b); at: a.t() (a
transposed view); bt: b.t(); batched: torch.bmm of 4 N x N x N products. Each sample is about
0.2 s of back-to-back products timed with CUDA events (one warm-up product and one timing
product first); GFLOP/s = 2 N^3 (x 4 batched) / time. Prints a markdown table too.
"""
import statistics
import sys

import torch


def bench(fn, flop, reps):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    one = start.elapsed_time(stop) / 1e3
    ops = max(1, min(10000, int(0.2 / one))) if one > 0 else 1
    samples = []
    for _ in range(reps):
        start.record()
        for _ in range(ops):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(flop / (start.elapsed_time(stop) / 1e3 / ops) * 1e-9)
    return statistics.median(samples), min(samples), max(samples)


def main(argv):
    sizes = [int(s) for s in argv[1].split(",")]
    out = argv[2]
    reps = int(argv[3]) if len(argv) > 3 else 5
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
    props = torch.cuda.get_device_properties(dev)
    print(f"- cuBLAS through PyTorch {torch.__version__} (CUDA {torch.version.cuda}), {name}, "
          f"{props.multi_processor_count} SMs, allow_tf32 = "
          f"{torch.backends.cuda.matmul.allow_tf32}")
    print("\n| N | form | cuBLAS GFLOP/s | min–max |\n| --- | --- | --- | --- |")
    rows = []
    for n in sizes:
        g = torch.Generator(device=dev).manual_seed(n)
        a = torch.rand(n, n, device=dev, generator=g) - 0.5
        b = torch.rand(n, n, device=dev, generator=g) - 0.5
        c = torch.empty(n, n, device=dev)
        ref = (a.double() @ b.double()).float()
        torch.mm(a, b, out=c)
        err = (c - ref).abs().max().item()
        assert err < n * 2.0**-20, f"cuBLAS result off by {err}"
        forms = [("plain", lambda: torch.mm(a, b, out=c), 1),
                 ("at", lambda: torch.mm(a.t(), b, out=c), 1),
                 ("bt", lambda: torch.mm(a, b.t(), out=c), 1)]
        ab, bb = a.expand(4, n, n).contiguous(), b.expand(4, n, n).contiguous()
        cb = torch.empty(4, n, n, device=dev)
        forms.append(("batched", lambda: torch.bmm(ab, bb, out=cb), 4))
        for form, fn, mult in forms:
            med, lo, hi = bench(fn, 2.0 * n**3 * mult, reps)
            impl = "cuBLAS" if form == "plain" else f"cuBLAS-{form}"
            rows.append(f"{name},{impl},{n},{med:.4g},{lo:.4g},{hi:.4g}")
            print(f"| {n} | {form} | {med:.0f} | {lo:.0f}–{hi:.0f} |", flush=True)
        del ab, bb, cb
    with open(out, "w") as f:
        f.write("device,impl,n,gflops_median,gflops_min,gflops_max\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv)

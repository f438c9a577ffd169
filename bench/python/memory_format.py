#!/usr/bin/env python3
"""NCHW against channels_last with PyTorch: gpu-anatomy c11 memory-format's workloads, measured
with torch, so that the chapter's C++ figures have PyTorch's beside them (docs/cli.md, "c11
memory-format").

The workloads are the chapter's, each forward and backward (torch.autograd.grad of the output
against a fixed random gradient, for the input, every convolution weight and every batch-norm
weight and bias):

- a single 3x3 convolution, 64 -> 64 channels, padding 1, no bias;
- a ResNet-50 bottleneck block (1x1 256 -> 64, BN, ReLU, 3x3 64 -> 64, BN, ReLU, 1x1 64 -> 256,
  BN, + identity, ReLU), written with torch.nn.functional; batch norm in training mode without
  running statistics.

Precisions: fp32 (torch.backends.cudnn.allow_tf32 off), tf32 (on), fp16 and bf16 (every tensor in
that dtype). Layouts: contiguous (NCHW) and channels_last (NHWC: the input and the 4-d weights
converted with .contiguous(memory_format=torch.channels_last)). Each row is first checked as the
chapter checks it: on at least 99% of their elements, the two layouts' output and gradients agree
within twice the precision's product tolerance relative to the largest magnitude (a ReLU input
within rounding of zero may switch its gradient on in one layout and off in the other), or the
script exits 1. Times: CUDA events around each of --iters iterations after
--warmup, the median (a steady clock on the CPU), in milliseconds.

    python3 bench/python/memory_format.py [--device cuda|cpu] [--batch N] [--size N]
        [--precisions fp32,tf32,fp16,bf16] [--iters N] [--warmup N] [--cudnn-benchmark] [--json FILE]

scripts/plot-memory-format.py draws the JSON beside the chapter's report.
"""

import argparse
import json
import statistics
import sys
import time

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# gpu-anatomy's product tolerances (tools/checks.cpp), doubled: two computations, each may err.
TOLERANCE = {"fp32": 1e-2, "tf32": 1e-2, "fp16": 2e-2, "bf16": 1e-1}
MISMATCH_ALLOWED = 0.01
BN_EPS, BN_MOMENTUM = 1e-5, 0.1
SEED_001, SEED_002 = (1.2, 1.3), (1.1, 1.3)


def workloads(torch, device):
    """(key, description, in_channels, params, forward) for the chapter's two workloads."""
    F = torch.nn.functional

    def conv_weight(out, inp, k):
        return torch.randn(out, inp, k, k, device=device) / (inp * k * k) ** 0.5

    def bn(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True, momentum=BN_MOMENTUM, eps=BN_EPS)

    conv = ("conv3x3", "3x3 conv 64->64", 64, [conv_weight(64, 64, 3)],
            lambda x, p: F.conv2d(x, p[0], padding=1))
    params = []
    for out, inp, k in ((64, 256, 1), (64, 64, 3), (256, 64, 1)):
        params += [conv_weight(out, inp, k), torch.randn(out, device=device) * 0.1 + 1.0,
                   torch.randn(out, device=device) * 0.1]

    def block(x, p):
        y = F.relu(bn(F.conv2d(x, p[0]), p[1], p[2]))
        y = F.relu(bn(F.conv2d(y, p[3], padding=1), p[4], p[5]))
        y = bn(F.conv2d(y, p[6]), p[7], p[8])
        return F.relu(y + x)

    return [conv, ("bottleneck", "ResNet-50 bottleneck 256-64-256", 256, params, block)]


def make_step(torch, forward, x32, params32, grad32, dtype, memory_format):
    def convert(t):
        c = t.to(dtype)
        c = c.contiguous(memory_format=memory_format) if c.dim() == 4 else c.contiguous()
        return c.detach().requires_grad_()

    x = convert(x32)
    params = [convert(p) for p in params32]
    grad_out = grad32.to(dtype).contiguous(memory_format=memory_format)

    def step():
        out = forward(x, params)
        return [out, *torch.autograd.grad(out, [x, *params], grad_out)]

    return step


def agreement(got, want, tolerance):
    """(the fraction of elements differing by more than tolerance times want's largest magnitude,
    the largest difference so scaled)."""
    g, w = got.double().cpu(), want.double().cpu()
    scale = max(float(w.abs().max()), 1e-30)
    diff = (g - w).abs()
    return float((diff > tolerance * scale).double().mean()), float(diff.max()) / scale


def times_ms(torch, device, warmup, iters, fn):
    for _ in range(warmup):
        fn()
    if device == "cuda":
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for s, e in zip(starts, ends):
            s.record()
            fn()
            e.record()
        ends[-1].synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when torch sees one, else cpu")
    parser.add_argument("--batch", type=int, help="default 32 on CUDA, 2 on the CPU (the chapter's)")
    parser.add_argument("--size", type=int, default=56, help="height and width (56)")
    parser.add_argument("--precisions", help="comma-separated of fp32, tf32, fp16, bf16 (default: all on CUDA, "
                                             "fp32 on the CPU)")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cudnn-benchmark", action="store_true", help="torch.backends.cudnn.benchmark = True")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("memory_format.py: error: torch does not import here", file=sys.stderr)
        return 2
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        print("memory_format.py: error: --device cuda: torch sees no CUDA device", file=sys.stderr)
        return 2
    batch = args.batch if args.batch is not None else (32 if device == "cuda" else 2)
    names = (args.precisions or ("fp32,tf32,fp16,bf16" if device == "cuda" else "fp32")).split(",")
    for name, value in (("--batch", batch), ("--size", args.size), ("--iters", args.iters)):
        if value < 1:
            parser.error(f"{name}: {value} is not at least 1")
    if args.warmup < 0:
        parser.error(f"--warmup: {args.warmup} is negative")
    for n in names:
        if n not in PRECISIONS:
            parser.error(f"--precisions: '{n}' is not one of {', '.join(PRECISIONS)}")
        if device == "cpu" and n != "fp32":
            parser.error(f"--precisions: '{n}' needs a CUDA device: on the CPU the rows are fp32")
    names = list(dict.fromkeys(names))
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    saved = (torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.manual_seed(0)
    rows = []
    try:
        for key, description, channels, params32, forward in workloads(torch, device):
            for name in names:
                torch.backends.cudnn.allow_tf32 = name == "tf32"
                x32 = torch.randn(batch, channels, args.size, args.size, device=device)
                grad32 = torch.randn_like(x32)
                steps = [make_step(torch, forward, x32, params32, grad32, dtypes[name], f)
                         for f in (torch.contiguous_format, torch.channels_last)]
                a, b = steps[0](), steps[1]()
                checks = [agreement(g, w, TOLERANCE[name]) for g, w in zip(b, a)]
                mismatched, error = max(c[0] for c in checks), max(c[1] for c in checks)
                if not mismatched <= MISMATCH_ALLOWED:
                    print(f"memory_format.py: error: {description}, {name}: {100 * mismatched:.2f}% of a result's "
                          f"elements differ between the layouts by more than {TOLERANCE[name]} of its largest "
                          f"magnitude (at most {100 * MISMATCH_ALLOWED:g}% may)", file=sys.stderr)
                    return 1
                nchw = statistics.median(times_ms(torch, device, args.warmup, args.iters, steps[0]))
                nhwc = statistics.median(times_ms(torch, device, args.warmup, args.iters, steps[1]))
                s = nchw / nhwc
                rows.append({"workload": key, "description": description, "precision": name, "nchw_ms": nchw,
                             "nhwc_ms": nhwc, "speedup": s,
                             "seed_001": SEED_001[0] <= s <= SEED_001[1], "seed_002": SEED_002[0] <= s <= SEED_002[1],
                             "max_layout_error": error, "mismatched_fraction": mismatched,
                             "tolerance": TOLERANCE[name],
                             "nhwc_output_channels_last": b[0].is_contiguous(memory_format=torch.channels_last)})
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = saved

    where = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(f"torch {torch.__version__} on {where}: forward + backward, batch {batch}, {args.size}x{args.size}, "
          f"median of {args.iters} ({'device' if device == 'cuda' else 'host'} time, ms)")
    print(f"{'workload':32} {'precision':9} {'NCHW':>10} {'NHWC':>10} {'speed-up':>9}")
    for r in rows:
        print(f"{r['description']:32} {r['precision']:9} {r['nchw_ms']:10.3f} {r['nhwc_ms']:10.3f} "
              f"{r['speedup']:8.2f}x")
    if args.json:
        doc = {"library": "torch", "torch_version": torch.__version__, "device": device, "device_name": where,
               "options": {"batch": batch, "size": args.size, "precisions": ",".join(names), "iters": args.iters,
                           "warmup": args.warmup, "cudnn_benchmark": args.cudnn_benchmark},
               "rows": rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

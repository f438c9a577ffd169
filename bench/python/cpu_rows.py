#!/usr/bin/env python3
"""The CPU rows: anatomy beside PyTorch in one process, each engine with its own libraries.

bench/peer links libtorch into one executable with the engine, and there Debian's oneDNN and
libtorch's copy share symbols, so the engine's products fall back to OpenBLAS (Note [oneDNN
beside another oneDNN]). Python loads each extension on its own (RTLD_LOCAL), so here each engine
runs as its users run it. Every row writes into a reused output (`out=`), so page faults of fresh
memory are not what is timed; the inputs are the same memory for both engines (DLPack).

    python bench/python/cpu_rows.py [--threads N] [--reps R] [--quick] [--json FILE]

Rows: exp, sigmoid, gelu (erf and tanh forms), tanh, add, mul and sum over 64 MiB of fp32, and the
1024^3 fp32 product. Prints the median of --reps calls after two warm-up calls, in ms, and torch's
time over anatomy's (above 1: anatomy is faster). Without torch, anatomy's column alone.

Each engine's calls start after --settle seconds (default 0.2) of the process sleeping: torch's
OpenMP threads spin on their cores for milliseconds after each of its parallel regions (libgomp's
GOMP_SPINCOUNT, 300,000 pauses when OMP_WAIT_POLICY is unset), so calls made right after torch's
share every core with its spinning team; anatomy's pool spins 50 us. --settle 0 measures the
engines back to back. The header names each engine's CPU capability: ANATOMY_CPU_CAPABILITY=avx2
(and torch's ATEN_CPU_CAPABILITY) run the AVX2 copies on an AVX-512 host, to compare.
"""

import argparse
import json
import os
import time

import numpy as np

import anatomy
from timing import median_ms

try:
    import torch
except ImportError:  # the anatomy column alone
    torch = None


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def rows(n, mm_size):
    """(name, anatomy call, torch call or None, numpy reference of the result) per row."""
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32)
    y_np = rng.standard_normal(n, dtype=np.float32)
    a_np = rng.standard_normal((mm_size, mm_size), dtype=np.float32)
    b_np = rng.standard_normal((mm_size, mm_size), dtype=np.float32)
    ax, ay, aa, ab = (anatomy.tensor(v) for v in (x_np, y_np, a_np, b_np))
    aout, aprod = anatomy.empty([n]), anatomy.empty([mm_size, mm_size])
    aten = anatomy.ops.aten
    if torch is not None:
        tx, ty, ta, tb = (torch.from_dlpack(v) for v in (ax, ay, aa, ab))
        tout, tprod = torch.empty(n), torch.empty(mm_size, mm_size)
    table = [
        ("exp", lambda: aten.exp(ax, out=aout), lambda: torch.exp(tx, out=tout)),
        ("sigmoid", lambda: aten.sigmoid(ax, out=aout), lambda: torch.sigmoid(tx, out=tout)),
        ("gelu", lambda: aten.gelu(ax, out=aout), lambda: torch._C._nn.gelu(tx, out=tout)),
        ("gelu, tanh form", lambda: aten.gelu(ax, approximate="tanh", out=aout),
         lambda: torch._C._nn.gelu(tx, approximate="tanh", out=tout)),
        ("tanh", lambda: aten.tanh(ax, out=aout), lambda: torch.tanh(tx, out=tout)),
        ("add", lambda: aten.add(ax, ay, out=aout), lambda: torch.add(tx, ty, out=tout)),
        ("mul", lambda: aten.mul(ax, ay, out=aout), lambda: torch.mul(tx, ty, out=tout)),
        ("sum", lambda: aten.sum(ax), lambda: torch.sum(tx)),
        (f"mm {mm_size}^3", lambda: aten.mm(aa, ab, out=aprod), lambda: torch.mm(ta, tb, out=tprod)),
    ]
    return [(name, a, t if torch is not None else None) for name, a, t in table], (x_np, a_np, b_np, aprod)


def settle_seconds(text):
    value = float(text)
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be from 0 to 60 seconds, got {text}")
    return value


def settled_median_ms(f, reps, settle):
    """median_ms after `settle` seconds of sleep, in which the other engine's threads stop spinning."""
    time.sleep(settle)
    return median_ms(f, reps)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=positive_int, default=anatomy.get_num_threads(), help="threads of each engine")
    parser.add_argument("--reps", type=positive_int, default=7)
    parser.add_argument("--quick", action="store_true", help="1 MiB operands and a 128^3 product (a check, not a figure)")
    parser.add_argument("--settle", type=settle_seconds, default=0.2,
                        help="seconds to sleep before each engine's calls (other threads stop spinning)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    anatomy.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    n, mm_size = (1 << 18, 128) if args.quick else (1 << 24, 1024)
    table, (x_np, a_np, b_np, aprod) = rows(n, mm_size)
    engine = f"torch {torch.__version__}" if torch is not None else "torch not installed"
    print(f"anatomy beside {engine}: {args.threads} threads, fp32, {n * 4 >> 20} MiB operands, median of {args.reps}, "
          f"{args.settle:g} s settled before each engine")
    # Which copies each engine's loops take (the CPU's widest unless the environment caps it).
    torch_cap = torch.backends.cpu.get_cpu_capability() if torch is not None else "-"
    print(f"CPU capability: anatomy {os.environ.get('ANATOMY_CPU_CAPABILITY', 'the widest')}, torch {torch_cap}")
    print(f"{'row':18} {'anatomy ms':>11} {'torch ms':>10} {'torch / anatomy':>16}")
    results = []
    for name, a, t in table:
        a_ms = settled_median_ms(a, args.reps, args.settle)
        t_ms = settled_median_ms(t, args.reps, args.settle) if t is not None else None
        t_text = f"{t_ms:10.3f}" if t_ms is not None else f"{'-':>10}"
        ratio = f"{t_ms / a_ms:16.2f}" if t_ms is not None else f"{'-':>16}"
        print(f"{name:18} {a_ms:11.3f} {t_text} {ratio}")
        results.append({"row": name, "anatomy_ms": a_ms, "torch_ms": t_ms})
    # Results are checked, so that a fast wrong kernel cannot pass for a fast one.
    np.testing.assert_allclose(aprod.numpy(), a_np @ b_np, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(anatomy.ops.aten.exp(anatomy.tensor(x_np)).numpy(), np.exp(x_np), rtol=1e-5)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "reps": args.reps, "settle_s": args.settle, "elements": n,
                       "engine": engine, "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""anatomy's conv2d beside torch's on the CPU, in one process, on the same inputs (shared with
DLPack) and the same thread count: forward, batch 8, fp32, the convolution shapes of ResNet-50
that bench/peer/conv.cpp times (the CPU target: at least 0.9x torch's speed), NCHW and
channels_last. Prints the median of --reps calls of each, after two warm-up calls, and torch's
time over anatomy's (above 1: anatomy is faster). --threads sets both engines' thread counts
(anatomy's oneDNN follows anatomy.set_num_threads).

    PYTHONPATH=build/python python bench/python/conv_cpu.py --threads 2
"""

import argparse

import numpy as np
import torch

import anatomy
import anatomy.nn.functional as F
from timing import median_ms

# (C_in, C_out, H = W, kernel, stride): conv1, the 3x3s of the stages (the strided one of
# stage 2), the 1x1 expansions and reductions.
SHAPES = [(3, 64, 224, 7, 2), (64, 64, 56, 3, 1), (64, 256, 56, 1, 1), (256, 64, 56, 1, 1), (128, 128, 56, 3, 2),
          (256, 256, 14, 3, 1), (1024, 256, 14, 1, 1), (512, 512, 7, 3, 1), (512, 2048, 7, 1, 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="threads of each engine")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    anatomy.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads, batch {args.batch}, fp32")
    rng = np.random.default_rng(0)
    for c_in, c_out, hw, k, s in SHAPES:
        x = rng.standard_normal((args.batch, c_in, hw, hw), dtype=np.float32)
        w = (rng.standard_normal((c_out, c_in, k, k)) * 0.05).astype(np.float32)
        for channels_last in (False, True):
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)
            ax, aw = anatomy.from_dlpack(tx), anatomy.from_dlpack(tw)
            if channels_last:
                tx = tx.contiguous(memory_format=torch.channels_last)
                tw = tw.contiguous(memory_format=torch.channels_last)
                ax = ax.contiguous(memory_format=anatomy.channels_last)
                aw = aw.contiguous(memory_format=anatomy.channels_last)
            got = F.conv2d(ax, aw, None, s, k // 2)
            want = torch.nn.functional.conv2d(tx, tw, None, s, k // 2)
            np.testing.assert_allclose(np.from_dlpack(got), want.numpy(), rtol=1e-3, atol=1e-3)
            ta = median_ms(lambda: F.conv2d(ax, aw, None, s, k // 2), args.reps)
            tt = median_ms(lambda: torch.nn.functional.conv2d(tx, tw, None, s, k // 2), args.reps)
            layout = "NHWC" if channels_last else "NCHW"
            print(f"conv2d {c_in:>4}->{c_out:<4} {hw:>3}x{hw:<3} {k}x{k}/{s} {layout}: anatomy {ta:8.2f} ms  "
                  f"torch {tt:8.2f} ms  torch/anatomy {tt / ta:5.2f}")


if __name__ == "__main__":
    main()

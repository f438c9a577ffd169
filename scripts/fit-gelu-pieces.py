#!/usr/bin/env python3
"""Fits the polynomial pieces of the AVX-512 gelu (backends/cpu/gelu_pieces.h) and prints them.

The middle: p(a) = Phi(-a) = erfc(a / sqrt 2) / 2 on [0, 5.5] in 32 pieces of width 11/64, each a
polynomial of degree 6 in u = a - (the piece's centre). The tail: r(a) = a p(a) e^(a^2 / 2) on
[5.5, 13.5] in 16 pieces of width 1/2, degree 4 (gelu(-a) = -r(a) e^(-a^2 / 2)). Each is fitted
for relative error (Lawson's iteration on a weighted least-squares fit, which approaches the
minimax polynomial) over its piece widened by 1% (the piece's index is computed in fp32 and may
pick a neighbour at a boundary). Then the middle's fp32 coefficients are checked the way the
kernel evaluates them (Horner's rule in FMAs, then max(x, 0) - |x| p in one FMA) against x Phi(x)
in fp64, on a sample.

    python3 scripts/fit-gelu-pieces.py > coefficients.txt

Needs numpy only; the reference is the C library's erfc (math.erfc).
"""

import math

import numpy as np

from fit_pieces import fit_piece, fma32, print_table, ulp

PIECES = 32
WIDTH = 11.0 / 64.0  # exact in binary; 32 pieces cover [0, 5.5]
DEGREE = 6
TAIL_START, TAIL_PIECES, TAIL_WIDTH, TAIL_DEGREE = 5.5, 16, 0.5, 4

erfc = np.vectorize(math.erfc)


def p_of(a):
    return 0.5 * erfc(np.asarray(a, dtype=np.float64) / math.sqrt(2.0))


def r_of(a):
    a = np.asarray(a, dtype=np.float64)
    return a * p_of(a) * np.exp(a * a / 2)


def gelu32(x, table):
    a = np.minimum(np.abs(x), np.float32(5.5))
    k = np.minimum((a * np.float32(64.0 / 11.0)).astype(np.int32), PIECES - 1)
    u = a - (k.astype(np.float32) * np.float32(WIDTH) + np.float32(WIDTH / 2))
    p = table[DEGREE][k]
    for j in range(DEGREE - 1, -1, -1):
        p = fma32(p, u, table[j][k])
    return fma32(-np.abs(x), p, np.maximum(x, np.float32(0)))  # max(x, 0) - |x| p


def main():
    fits = [fit_piece(p_of, (i + 0.5) * WIDTH, WIDTH, DEGREE) for i in range(PIECES)]
    table = print_table("middle", fits)
    tail = [fit_piece(r_of, TAIL_START + (i + 0.5) * TAIL_WIDTH, TAIL_WIDTH, TAIL_DEGREE) for i in range(TAIL_PIECES)]
    print_table("tail", tail)
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-5.5, 5.5, 4_000_000), rng.standard_normal(4_000_000)]).astype(np.float32)
    x = x[np.abs(x) <= 5.5]
    want = x.astype(np.float64) * p_of(-x.astype(np.float64))  # x Phi(x)
    error = np.abs(gelu32(x, table).astype(np.float64) - want) / ulp(want)
    print(f"// the middle on 8M samples of [-5.5, 5.5]: {error.max():.2f} ulp (at x = {x[error.argmax()]:.7g})")


if __name__ == "__main__":
    main()

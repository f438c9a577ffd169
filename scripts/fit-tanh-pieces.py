#!/usr/bin/env python3
"""Fits the polynomial pieces of the AVX-512 tanh (backends/cpu/tanh_pieces.h) and prints them.

tanh(a) on [0.625, 9.625] in 32 pieces of width 9/32, each a polynomial of degree 5 in u = a -
(the piece's centre), fitted for relative error (scripts/fit_pieces.py). Below 0.625 the kernel
keeps vec::tanh's odd polynomial; past 9.625 tanh is 1 in fp32. Then the fp32 coefficients are
checked the way the kernel evaluates them (Horner's rule in FMAs) against tanh in fp64, on every
float of [0.625, 9.625].

    python3 scripts/fit-tanh-pieces.py > coefficients.txt

Needs numpy only.
"""

import numpy as np

from fit_pieces import fit_piece, fma32, print_table, ulp

START, PIECES, WIDTH, DEGREE = 0.625, 32, 9.0 / 32.0, 5  # start and width exact in binary


def tanh32(a, table):
    k = np.minimum(((a - np.float32(START)) * np.float32(1.0 / WIDTH)).astype(np.int32), PIECES - 1)
    u = a - (k.astype(np.float32) * np.float32(WIDTH) + np.float32(START + WIDTH / 2))
    p = table[DEGREE][k]
    for j in range(DEGREE - 1, -1, -1):
        p = fma32(p, u, table[j][k])
    return p


def main():
    fits = [fit_piece(np.tanh, START + (i + 0.5) * WIDTH, WIDTH, DEGREE) for i in range(PIECES)]
    table = print_table("tanh", fits)
    lo = np.array([START], dtype=np.float32).view(np.int32)[0]
    hi = np.array([START + PIECES * WIDTH], dtype=np.float32).view(np.int32)[0]
    a = np.arange(lo, hi, dtype=np.int32).view(np.float32)
    want = np.tanh(a.astype(np.float64))
    error = np.abs(tanh32(a, table).astype(np.float64) - want) / ulp(want)
    print(f"// every float of [{START}, {START + PIECES * WIDTH}): {error.max():.2f} ulp (at {a[error.argmax()]:.7g})")


if __name__ == "__main__":
    main()

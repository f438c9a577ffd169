"""What the polynomial-piece fits of the AVX-512 loops share (scripts/fit-gelu-pieces.py,
scripts/fit-tanh-pieces.py): a piece fitted for relative error, fp32 FMAs emulated in fp64, ulps,
and the tables as C++ initializers."""

import numpy as np


def fit_piece(function, centre, width, degree):
    """Coefficients of u^0 ... u^degree (u = x - centre) of the polynomial nearest `function` in
    relative error over the piece widened by 1% (the piece's index is computed in fp32 and may
    pick a neighbour at a boundary): Lawson's iteration on a weighted least-squares fit, which
    approaches the minimax polynomial. Returns the coefficients and the fit's largest error."""
    half = width / 2 * 1.01
    k = np.arange(600)
    u = half * np.cos(np.pi * (k + 0.5) / len(k))
    f = function(centre + u)
    powers = np.vander(u, degree + 1, increasing=True)
    weights = np.ones_like(u)
    for _ in range(200):
        scale = weights / f
        coefficients, *_ = np.linalg.lstsq(powers * scale[:, None], f * scale, rcond=None)
        error = np.abs(powers @ coefficients - f) / f
        weights = weights * error
        weights = np.maximum(weights / weights.sum(), 1e-12)  # no node's weight collapses to 0
    return coefficients, error.max()


def fma32(a, b, c):
    """One rounding of a * b + c: the product of two floats is exact in fp64."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def ulp(y):
    exponent = np.floor(np.log2(np.maximum(np.abs(y), 2.0**-126)))
    return 2.0 ** (exponent - 23)


def print_table(name, fits):
    """Prints the fits as the rows of a C++ table [degree + 1][piece]; returns it in fp32."""
    table = np.array([c for c, _ in fits], dtype=np.float32).T
    print(f"// {name}: fitted relative error at most {max(e for _, e in fits):.2e}")
    for j in range(len(table)):
        values = ", ".join(f"{v:.9e}f" for v in table[j])
        print(f"    {{{values}}},")
    return table

"""Timing shared by the side-by-side scripts of bench/python (imported from beside them)."""

import statistics
import time


def median_ms(f, reps):
    """The median of `reps` calls of f, in ms, after two warm-up calls."""
    f()
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3

#!/usr/bin/env python3
"""Host time of a DLPack exchange from Python: anatomy and PyTorch (or NumPy) handing one tensor
back and forth without a copy, over sizes.

    python bench/python/dlpack_exchange.py [--quick] [--json FILE] [--number N] [--repeats N]

For float32 tensors from 1 KiB to 1 GiB (powers of 4; --quick: to 1 MiB), on CUDA when both
anatomy and torch see a device, else on the CPU: the host time of `anatomy.from_dlpack(x)` with x
the peer's tensor, of `torch.from_dlpack(a)` with a an anatomy tensor (the import of x, so both
name the same memory), and of the round trip `torch.from_dlpack(anatomy.from_dlpack(x))`. The
peer is PyTorch when it imports, NumPy otherwise (`numpy.from_dlpack`, on the CPU). Each figure
is the median of `repeats` runs of `number` calls (overhead.py's `measure`; the runs go round the
sizes), in microseconds per call. Before a case is timed, the data pointer of its result is
checked against x's: a copy fails the run (exit status 1). The target: the round trip in at
most 2 us, constant in the size; the last line says whether this run's was (flat: the largest
median within 1.5x of the smallest).
"""

import json
import statistics
import sys

from overhead import measure, timing_arguments

LIMIT_US = 2.0
FLAT_RATIO = 1.5
SIZES = [1024 * 4**k for k in range(11)]  # 1 KiB .. 1 GiB
QUICK_SIZES = SIZES[:6]  # .. 1 MiB


def size_string(nbytes):
    """1024 -> "1 KiB", as gpu-anatomy prints sizes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size and nbytes % size == 0:
            return f"{nbytes // size} {unit}"
    return f"{nbytes} B"


def torch_peer(torch, anatomy):
    """The peer's name, version, device, and how it makes, imports and locates a tensor."""
    device = "cuda" if torch.cuda.is_available() and anatomy.cuda.is_available() else "cpu"
    return {"name": "torch", "version": torch.__version__, "device": device,
            "make": lambda n: torch.rand(n, dtype=torch.float32, device=device),
            "from_dlpack": torch.from_dlpack, "ptr": lambda x: x.data_ptr(),
            "sync": torch.cuda.synchronize if device == "cuda" else None}


def numpy_peer(np):
    rng = np.random.default_rng(0)
    return {"name": "numpy", "version": np.__version__, "device": "cpu",
            "make": lambda n: rng.random(n, dtype=np.float32),
            "from_dlpack": np.from_dlpack, "ptr": lambda x: x.__array_interface__["data"][0], "sync": None}


def cases(anatomy, peer):
    """{JSON key: (the statement timed, how to find its result's data pointer)}."""
    return {"to_anatomy_us": ("anatomy.from_dlpack(x)", lambda r: r.data_ptr()),
            "from_anatomy_us": ("peer_from_dlpack(a)", peer["ptr"]),
            "round_trip_us": ("peer_from_dlpack(anatomy.from_dlpack(x))", peer["ptr"])}


def prepare(anatomy, peer, nbytes):
    """The names the statements use at one size, each statement run once and checked to share x's
    memory (the very statement that is timed, outside the timing)."""
    x = peer["make"](nbytes // 4)
    env = {"anatomy": anatomy, "peer_from_dlpack": peer["from_dlpack"], "x": x, "a": anatomy.from_dlpack(x)}
    for stmt, ptr in cases(anatomy, peer).values():
        if ptr(eval(stmt, env)) != peer["ptr"](x):
            raise RuntimeError(f"{stmt} at {size_string(nbytes)}: the result is not x's memory (a copy was made)")
    return env


def exchange_rows(anatomy, peer, sizes, number, repeats):
    """A row per size: each case's median in us per call."""
    envs = [prepare(anatomy, peer, nbytes) for nbytes in sizes]
    samples = [{key: [] for key in cases(anatomy, peer)} for _ in sizes]
    # Rounds over the sizes, not one size after the other: a neighbour that takes the CPU for a
    # while then slows a run of every size instead of every run of one.
    for _ in range(repeats):
        for env, runs in zip(envs, samples):
            for key, (stmt, _) in cases(anatomy, peer).items():
                runs[key].append(measure(stmt, env, number, 1, peer["sync"]))
    return [{"bytes": nbytes, **{key: statistics.median(v) * 1e6 for key, v in runs.items()}, "zero_copy": True}
            for nbytes, runs in zip(sizes, samples)]


def verdict(rows):
    """The round trip's spread over the sizes, against the 2 us bound."""
    times = [r["round_trip_us"] for r in rows]
    lo, hi = min(times), max(times)
    return {"min_us": lo, "max_us": hi, "max_over_min": hi / lo, "flat": hi / lo <= FLAT_RATIO,
            "flat_ratio": FLAT_RATIO, "within_limit": hi <= LIMIT_US, "limit_us": LIMIT_US}


def main(argv=None):
    args = timing_arguments(__doc__, "sizes to 1 MiB, few calls and repeats (a smoke run)", (10000, 1000), (15, 5),
                            argv)
    number, repeats = args.number, args.repeats
    sizes = QUICK_SIZES if args.quick else SIZES

    import anatomy

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        peer = torch_peer(torch, anatomy)
    else:
        import numpy

        peer = numpy_peer(numpy)

    try:
        rows = exchange_rows(anatomy, peer, sizes, number, repeats)
    except RuntimeError as e:
        print(f"dlpack_exchange: error: {e}", file=sys.stderr)
        return 1
    summary = verdict(rows)

    name = peer["name"]
    print(f"DLPack exchange with {name} {peer['version']} on {peer['device']}: host time per call, "
          f"median of {repeats} runs of {number} calls (us)")
    labels = [f"anatomy.from_dlpack({name})", f"{name}.from_dlpack(anatomy)", "round trip"]
    header = f"{'size':>10}" + "".join(f"{label:>30}" for label in labels)
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{size_string(r['bytes']):>10}{r['to_anatomy_us']:>30.3f}{r['from_anatomy_us']:>30.3f}"
              f"{r['round_trip_us']:>30.3f}")
    print(f"round trip from {size_string(sizes[0])} to {size_string(sizes[-1])}: {summary['min_us']:.3f} to "
          f"{summary['max_us']:.3f} us, max/min {summary['max_over_min']:.2f}: "
          f"{'flat' if summary['flat'] else 'NOT flat'} (max/min <= {FLAT_RATIO}), "
          f"{'within' if summary['within_limit'] else 'ABOVE'} {LIMIT_US:g} us; every result shared x's memory")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peer": name, "peer_version": peer["version"], "device": peer["device"], "number": number,
                       "repeats": repeats, "rows": rows, "round_trip": summary}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

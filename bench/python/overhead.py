#!/usr/bin/env python3
"""Host time per call from Python: anatomy against PyTorch in the same process.

Each case times a statement on 1-element tensors, timeit-style: a warm-up, then `repeats` runs
of `number` calls each; the figure is the median run divided by `number`, in microseconds. On
CUDA the calls only queue work, so the host time is what is measured: the device is
synchronized before and after each timed run, never inside it.

    python bench/python/overhead.py [--quick] [--json FILE]

Cases: `a + b` (the Tensor method), `anatomy.ops.aten.add(a, b)` (the schema-bound call), each on
the CPU and, when a device is there, on CUDA; the same statements with torch when it imports
(`torch.ops.aten.add`), and the ratio anatomy / torch per row. The row "a + b, profiled" times
`a + b` on the CPU inside an active profiler (anatomy.profiler.profile against
torch.profiler.profile with CPU activity), a fresh one per run so that the events of one run
are all it holds (a tenth of the calls per run: every call is recorded); its difference from the
"a + b" row is each profiler's cost per operator.
"""

import argparse
import json
import statistics
import sys
import timeit


def measure(stmt, env, number, repeats, sync=None):
    """Median seconds per call of `stmt` over `repeats` runs of `number` calls."""
    timer = timeit.Timer(stmt, globals=env)
    timer.timeit(number=max(number // 10, 10))  # warm-up: caches, lazy lookups, allocator
    runs = []
    for _ in range(repeats):
        if sync:
            sync()
        runs.append(timer.timeit(number=number) / number)
        if sync:
            sync()
    return statistics.median(runs)


def measure_profiled(stmt, env, number, repeats, profiler):
    """measure() with a fresh `profiler()` context around each timed run."""
    timer = timeit.Timer(stmt, globals=env)
    with profiler():
        timer.timeit(number=max(number // 10, 10))
    runs = []
    for _ in range(repeats):
        with profiler():
            runs.append(timer.timeit(number=number) / number)
    return statistics.median(runs)


def anatomy_cases(device):
    import anatomy

    ops = anatomy.ops.aten
    a = ops.ones([1], device=device)
    b = ops.ones([1], device=device)
    env = {"a": a, "b": b, "anatomy": anatomy}
    sync = anatomy.cuda.synchronize if device == "cuda" else None
    cases = [("anatomy.ops.aten.add(a, b)", "anatomy.ops.aten.add(a, b)")]
    if hasattr(type(a), "__add__"):
        cases.insert(0, ("a + b", "a + b"))
    return env, sync, cases


def torch_cases(torch, device):
    a = torch.ones(1, device=device)
    b = torch.ones(1, device=device)
    env = {"a": a, "b": b, "torch": torch}
    sync = torch.cuda.synchronize if device == "cuda" else None
    return env, sync, {"a + b": "a + b", "anatomy.ops.aten.add(a, b)": "torch.ops.aten.add(a, b)"}


def timing_arguments(doc, quick_help, numbers, repeats, argv=None):
    """The options of the timing scripts: --quick, --json, --number and --repeats, the last two
    defaulting to numbers[quick] and repeats[quick] ((full, quick) pairs)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--number", type=int, default=None, help="calls per timed run")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs (the median is reported)")
    args = parser.parse_args(argv)
    args.number = args.number if args.number is not None else numbers[args.quick]
    args.repeats = args.repeats if args.repeats is not None else repeats[args.quick]
    if args.number < 1 or args.repeats < 1:
        parser.error("--number and --repeats must be at least 1")
    return args


def main(argv=None):
    args = timing_arguments(__doc__, "few calls and repeats (a smoke run)", (200000, 2000), (15, 3), argv)
    number, repeats = args.number, args.repeats

    import anatomy

    try:
        import torch
    except ImportError:
        torch = None

    devices = ["cpu"] + (["cuda"] if anatomy.cuda.is_available() else [])
    rows = []
    for device in devices:
        env, sync, cases = anatomy_cases(device)
        if torch is not None:
            tenv, tsync, tstmts = torch_cases(torch, device)
        for label, stmt in cases:
            row = {"device": device, "case": label, "anatomy_us": measure(stmt, env, number, repeats, sync) * 1e6}
            if torch is not None:
                row["torch_us"] = measure(tstmts[label], tenv, number, repeats, tsync) * 1e6
                row["ratio"] = row["anatomy_us"] / row["torch_us"]
            rows.append(row)

    # The profilers' cost per operator, on the CPU.
    import anatomy.profiler

    cpu_env = anatomy_cases("cpu")[0]
    row = {"device": "cpu", "case": "a + b, profiled",
           "anatomy_us": measure_profiled("a + b", cpu_env, max(number // 10, 10), repeats,
                                          anatomy.profiler.profile) * 1e6}
    if torch is not None:
        tcpu_env = torch_cases(torch, "cpu")[0]

        def torch_profile():
            return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])

        row["torch_us"] = measure_profiled("a + b", tcpu_env, max(number // 10, 10), repeats, torch_profile) * 1e6
        row["ratio"] = row["anatomy_us"] / row["torch_us"]
    rows.append(row)

    print(f"host time per call, median of {repeats} runs of {number} calls (us)")
    header = f"{'device':<7}{'case':<30}{'anatomy':>10}{'torch':>10}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for r in rows:
        torch_us = f"{r['torch_us']:>10.3f}" if "torch_us" in r else f"{'-':>10}"
        ratio = f"{r['ratio']:>8.2f}" if "ratio" in r else f"{'-':>8}"
        print(f"{r['device']:<7}{r['case']:<30}{r['anatomy_us']:>10.3f}{torch_us}{ratio}")
    if not any(r["case"] == "a + b" for r in rows):
        print("note: anatomy.Tensor has no __add__ in this build, so the a + b rows are left out")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"number": number, "repeats": repeats, "torch": torch.__version__ if torch else None,
                       "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

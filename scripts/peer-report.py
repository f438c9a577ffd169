#!/usr/bin/env python3
"""Pairs anatomy_peer_torch's rows into a markdown table: anatomy next to torch.

    build/bench/peer/anatomy_peer_torch --benchmark_format=json > peer.json
    scripts/peer-report.py peer.json > peer-report.md

Benchmarks named anatomy/NAME and torch/NAME form one row. The ratio is anatomy's time over
torch's (below 1: anatomy is faster). Bandwidth rows (those with bytes_per_second) also show each
side's percent of the memcpy baseline of the same run, side and device (memcpy_64mib_cpu for
*_cpu rows, memcpy_64mib_cuda for *_cuda rows). Rows with the fragmentation counters (the
allocation-trace replays: peak_reserved_MiB, peak_allocated_MiB, reserved_over_allocated) show
each side's peak reserved / peak allocated next to its time. With --benchmark_repetitions the median
aggregate is used; otherwise the mean of the runs. A row that was skipped shows its reason.
Python 3 standard library only.
"""

import argparse
import json
import sys

SIDES = ("anatomy", "torch")
TIME_SUFFIXES = ("/real_time", "/manual_time", "/process_time")
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
FRAGMENTATION_FIELDS = ("peak_reserved_MiB", "peak_allocated_MiB", "reserved_over_allocated")


def case_of(run_name):
    """('anatomy', 'add_tiny_cpu') for 'anatomy/add_tiny_cpu/real_time'; None for other rows."""
    name = run_name
    stripped = True
    while stripped:
        stripped = False
        for suffix in TIME_SUFFIXES:
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                stripped = True
    side, _, case = name.partition("/")
    if side not in SIDES or not case:
        return None
    return side, case


def collect(benchmarks):
    """{case: {side: figures}} in the order the cases first appear."""
    runs = {}  # (side, case) -> list of iteration rows
    medians = {}  # (side, case) -> median aggregate row
    errors = {}  # (side, case) -> error message
    order = []
    for b in benchmarks:
        key = case_of(b.get("run_name", b["name"]))
        if key is None:
            continue
        if key[1] not in order:
            order.append(key[1])
        if b.get("error_occurred"):
            errors[key] = b.get("error_message", "error")
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = b
            continue
        runs.setdefault(key, []).append(b)

    table = {}
    for case in order:
        for side in SIDES:
            key = (side, case)
            if key in medians:
                rows = [medians[key]]
            elif key in runs:
                rows = runs[key]
            elif key in errors:
                table.setdefault(case, {})[side] = {"error": errors[key]}
                continue
            else:
                continue
            table.setdefault(case, {})[side] = figures(rows)
    return order, table


def mean(values):
    return sum(values) / len(values)


def figures(rows):
    fig = {"time_ns": mean([r["real_time"] * NS_PER_UNIT[r.get("time_unit", "ns")] for r in rows])}
    for field in ("bytes_per_second", "GFLOP/s", "num_threads") + FRAGMENTATION_FIELDS:
        if all(field in r for r in rows):
            fig[field] = mean([r[field] for r in rows])
    return fig


def format_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def format_figure(fig):
    if fig is None:
        return "-"
    if "error" in fig:
        return "skipped: " + fig["error"].replace("|", "\\|")
    text = format_time(fig["time_ns"])
    extra = []
    if "bytes_per_second" in fig:
        extra.append(f"{fig['bytes_per_second'] / 2**30:.1f} GiB/s")
    if "GFLOP/s" in fig:
        extra.append(f"{fig['GFLOP/s']:.0f} GFLOP/s")
    if "num_threads" in fig:
        extra.append(f"{fig['num_threads']:.0f} threads")
    if all(field in fig for field in FRAGMENTATION_FIELDS):
        extra.append(
            f"peak reserved {fig['peak_reserved_MiB']:.0f} MiB / allocated {fig['peak_allocated_MiB']:.0f} MiB"
            f" = {fig['reserved_over_allocated']:.3f}"
        )
    if extra:
        text += " (" + ", ".join(extra) + ")"
    return text


def baseline_case(case):
    """The memcpy row a bandwidth row is measured against: the one for its device."""
    device = case.rsplit("_", 1)[-1]
    return f"memcpy_64mib_{device}"


def percent_of_memcpy(table, case, side):
    fig = table.get(case, {}).get(side)
    base = table.get(baseline_case(case), {}).get(side)
    if not fig or not base or "bytes_per_second" not in fig or "bytes_per_second" not in base:
        return "-"
    return f"{100 * fig['bytes_per_second'] / base['bytes_per_second']:.0f}%"


def ratio(table, case):
    a = table[case].get("anatomy")
    t = table[case].get("torch")
    if not a or not t or "time_ns" not in a or "time_ns" not in t:
        return "-"
    return f"{a['time_ns'] / t['time_ns']:.2f}"


def report(data):
    order, table = collect(data.get("benchmarks", []))
    context = data.get("context", {})
    lines = []
    if context:
        lines.append(
            f"anatomy_peer_torch on {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs, "
            f"{context.get('date', '?')}; ratio = anatomy time / torch time (below 1: anatomy is faster); "
            "% of memcpy = bytes/s over the same side's memcpy of the same device in this run."
        )
        lines.append("")
    lines.append("| benchmark | anatomy | torch | ratio | anatomy % of memcpy | torch % of memcpy |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for case in order:
        sides = table.get(case, {})
        lines.append(
            f"| {case} | {format_figure(sides.get('anatomy'))} | {format_figure(sides.get('torch'))} | "
            f"{ratio(table, case)} | {percent_of_memcpy(table, case, 'anatomy')} | "
            f"{percent_of_memcpy(table, case, 'torch')} |"
        )
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="Google Benchmark JSON from anatomy_peer_torch ('-' for standard input)")
    args = parser.parse_args()
    if args.json == "-":
        data = json.load(sys.stdin)
    else:
        with open(args.json, encoding="utf-8") as f:
            data = json.load(f)
    sys.stdout.write(report(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())

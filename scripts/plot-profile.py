#!/usr/bin/env python3
"""A timeline picture of a profile's Chrome trace (anatomy's Profile::export_chrome_trace,
docs/profiler.md), for docs and for people without a trace viewer at hand: a row per host thread
and per device stream, each operator a bar from its start to its end, nested operators stacked
under their parents, device spans in the colour of their operator.

usage: scripts/plot-profile.py TRACE.json OUT_BASENAME   (writes OUT_BASENAME.svg and .png)

`gpu-anatomy c10 profile --trace F` runs it with the project's virtual environment (.venv, whose
matplotlib scripts/python-requirements.txt pins and scripts/setup.sh installs); any python3 with
matplotlib runs it too.
"""
import json
import os
import sys
import zlib

DEPTHS_SHOWN = 4  # host rows show this many nesting levels


def colour(plt, name):
    return plt.get_cmap("tab20")(zlib.crc32(name.encode()) % 20)


def rows_of(events, processes, threads):
    """(label, levels, [(start, duration, name, level)]) per row: host threads first (DEPTHS_SHOWN
    levels of nesting), then device streams (one level: a stream runs one kernel at a time). Rows
    are labelled by the trace's process_name and thread_name events."""
    rows = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        key = (e["pid"], e["tid"])
        thread = threads.get(key, f"thread {e['tid']}")
        if e["pid"] == 0:
            label, levels = thread, DEPTHS_SHOWN
            level = min(e.get("args", {}).get("depth", 0), DEPTHS_SHOWN - 1)
        else:
            label, levels = f"{processes.get(e['pid'], 'device')} {thread}", 1
            level = 0
        rows.setdefault(key, (label, levels, []))[2].append((e["ts"], e["dur"], e["name"], level))
    return [rows[k] for k in sorted(rows)]


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            trace = json.load(f)
    except (OSError, ValueError) as err:
        print(f"plot-profile: error: {argv[1]}: {err}", file=sys.stderr)
        return 1
    events = trace.get("traceEvents", [])
    metadata = [e for e in events if e.get("ph") == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in metadata if e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in metadata if e.get("name") == "thread_name"}
    rows = rows_of(events, processes, threads)
    if not rows:
        print(f"plot-profile: error: {argv[1]}: no events", file=sys.stderr)
        return 1
    try:
        import matplotlib
    except ImportError:
        print(f"plot-profile: error: {sys.executable} has no matplotlib (scripts/setup.sh installs it into .venv)",
              file=sys.stderr)
        return 1
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(12, max(4.0, 1 + 1.2 * len(rows))))
    legend = {}
    for r, (label, levels, bars) in enumerate(rows):
        height = 0.8 / levels  # a row's levels share 0.8 around its tick
        for start, duration, name, level in bars:
            y = r - 0.4 + level * height  # callers on top (the axis is inverted), callees below
            patch = ax.broken_barh([(start, max(duration, 1e-3))], (y, height * 0.9), facecolors=colour(plt, name))
            legend.setdefault(name, patch)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time since the profile started (us)")
    ax.set_title("anatomy profile: operators on host threads (nested below their callers) and device streams")
    top = sorted(legend, key=lambda n: -sum(d for row in rows for s, d, m, lv in row[2] if m == n))[:12]
    ax.legend([legend[n] for n in top], top, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(argv[2]) or ".", exist_ok=True)
    for ext in ("svg", "png"):
        fig.savefig(f"{argv[2]}.{ext}", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

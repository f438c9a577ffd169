#!/usr/bin/env python3
"""Figures from gpu-anatomy's JSON reports (docs/cli.md): one figure per experiment that timed
something. Measurements over sizes (named "n=64", "cpu n=64", "round trip bytes=1024", ...) become
curves, time against n (or the tensor's bytes) on log scales with the p10-p90 band; the others,
one panel per group of measurements (matmul, layer_norm, loop, ...), a bar per measurement at its
median with a p10-p90 whisker, and PyTorch's bar beside ours where the run had a peer. Written as SVG and PNG into the output folder, named
<chapter>-<experiment>.

usage: scripts/plot-report.py REPORT.json [OUT_DIR]   (a report, or gpu-anatomy suite's document)

Runs with Debian's interpreter and python3-matplotlib (scripts/setup.sh installs it).
"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def reports_in(doc):
    return doc["reports"] if doc.get("schema") == "gpu-anatomy-suite/1" else [doc]


SIZED = re.compile(r"^(.*?)\s*(n|bytes)=(\d+)$")


def curves(groups):
    """({panel: {series: [(n, median, p10, p90)]}}, "n" or "bytes") when every measurement is over
    a size, else (None, None). Groups of one series each (c02: a group per precision) share one
    panel."""
    if not all(SIZED.match(m["name"]) for ms in groups.values() for m in ms):
        return None, None
    panels, axes = {}, set()
    single = all(len({SIZED.match(m["name"]).group(1) for m in ms}) == 1 for ms in groups.values())
    for group, ms in groups.items():
        for m in ms:
            prefix, axis, n = SIZED.match(m["name"]).groups()
            axes.add(axis)
            panel, series = ("", group) if single else (group, prefix)
            panels.setdefault(panel, {}).setdefault(series, []).append((int(n), m["median"], m["p10"], m["p90"]))
    return panels, ("bytes" if axes == {"bytes"} else "n")


def bytes_label(value, _pos=None):
    """1024 -> "1 KiB", as gpu-anatomy prints sizes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"


def draw_curves(panels, axis):
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.6 * len(panels)), squeeze=False)
    for ax, (panel, series) in zip(axes[:, 0], panels.items()):
        for name, points in series.items():
            points.sort()
            ns = [p[0] for p in points]
            ax.plot(ns, [p[1] for p in points], marker="o", label=name)
            ax.fill_between(ns, [p[2] for p in points], [p[3] for p in points], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        if axis == "bytes":
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(bytes_label))
        ax.set_xlabel("tensor size" if axis == "bytes" else "n", fontsize=9)
        ax.set_ylabel(f"{panel + ': ' if panel else ''}ms (median, p10-p90)", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    return fig


def plot(report, out_dir):
    """Writes the report's figure; returns the files written (none when nothing was timed)."""
    groups = {}
    for m in report["measurements"]:
        groups.setdefault(m["group"], []).append(m)
    if not groups:
        return []
    panels, axis = curves(groups)
    fig = draw_curves(panels, axis) if panels else draw_bars(groups)
    opts = report.get("options", {})
    dtype = f", {opts['dtype']}" if "dtype" in opts else ""
    fig.suptitle(f"{report['chapter']} {report['experiment']} on {report['device']} ({report['device_name']}{dtype})",
                 fontsize=10)
    fig.tight_layout()
    base = os.path.join(out_dir, f"{report['chapter']}-{report['experiment']}")
    written = []
    for ext in ("svg", "png"):
        fig.savefig(f"{base}.{ext}", dpi=110)
        written.append(f"{base}.{ext}")
    plt.close(fig)
    return written


def draw_bars(groups):
    fig, axes = plt.subplots(len(groups), 1, figsize=(8, 1.2 + 0.45 * sum(len(g) + 1 for g in groups.values())),
                             squeeze=False)
    for ax, (group, ms) in zip(axes[:, 0], groups.items()):
        names = [m["name"] for m in ms]
        ys = range(len(ms))
        has_peer = any("peer" in m for m in ms)
        height = 0.38 if has_peer else 0.7
        med = [m["median"] for m in ms]
        err = [[m["median"] - m["p10"] for m in ms], [m["p90"] - m["median"] for m in ms]]
        ax.barh([y - (height / 2 if has_peer else 0) for y in ys], med, height, xerr=err, color="#3b6ea5",
                label="anatomy", capsize=3)
        if has_peer:
            pm = [m["peer"]["median"] if "peer" in m else 0 for m in ms]
            perr = [[m["peer"]["median"] - m["peer"]["p10"] if "peer" in m else 0 for m in ms],
                    [m["peer"]["p90"] - m["peer"]["median"] if "peer" in m else 0 for m in ms]]
            ax.barh([y + height / 2 for y in ys], pm, height, xerr=perr, color="#c8702a", label="PyTorch", capsize=3)
            ax.legend(loc="lower right", fontsize=8)
        ax.set_yticks(list(ys), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"{group}: ms (median, p10-p90)", fontsize=9)
    return fig


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    out_dir = sys.argv[2] if len(sys.argv) == 3 else "."
    try:
        with open(sys.argv[1]) as f:
            doc = json.load(f)
        os.makedirs(out_dir, exist_ok=True)
        written = [p for r in reports_in(doc) for p in plot(r, out_dir)]
    except (OSError, ValueError, KeyError) as e:
        print(f"plot-report: error: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

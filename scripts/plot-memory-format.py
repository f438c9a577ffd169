#!/usr/bin/env python3
"""The NHWC/NCHW speed-up of gpu-anatomy c11 memory-format, drawn: a panel per workload (the 3x3
convolution, the ResNet-50 bottleneck), a bar per precision at the speed-up (NCHW time over
channels_last time; above 1, channels_last is faster), PyTorch's bar beside it when the JSON of
bench/python/memory_format.py is given, a line at 1 and the seeds' claims as bands (seed 002:
1.1-1.3x, seed 001: 20-30%).

usage: scripts/plot-memory-format.py REPORT.json OUT_BASENAME [TORCH.json]
       (REPORT.json: the chapter's --json, or the suite's document holding it;
        writes OUT_BASENAME.svg and OUT_BASENAME.png)

Runs with Debian's interpreter and python3-matplotlib (scripts/setup.sh installs it).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

WORKLOADS = (("conv3x3", "3x3 conv 64->64"), ("bottleneck", "ResNet-50 bottleneck 256-64-256"))
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


class PlotError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        raise PlotError(f"{path}: {err}") from err


def chapter_rows(doc, path):
    """The rows of the c11 report in doc (a report, or the suite's document of reports)."""
    reports = doc.get("reports", [doc]) if isinstance(doc, dict) else []
    for r in reports:
        if r.get("chapter") == "c11" and r.get("experiment") == "memory-format":
            rows = r.get("results", {}).get("rows", [])
            if not rows:
                raise PlotError(f"{path}: the c11 memory-format report has no rows")
            return rows, r.get("device", "?"), r.get("options", {})
    raise PlotError(f"{path}: no c11 memory-format report in it")


def torch_rows(path):
    doc = load(path)
    if not isinstance(doc, dict) or doc.get("library") != "torch" or not doc.get("rows"):
        raise PlotError(f"{path}: not the JSON of bench/python/memory_format.py (no torch rows)")
    return doc["rows"], doc.get("torch_version", "?")


def speedups(rows, workload):
    return {r["precision"]: r["speedup"] for r in rows if r["workload"] == workload}


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: scripts/plot-memory-format.py REPORT.json OUT_BASENAME [TORCH.json]", file=sys.stderr)
        return 2
    try:
        rows, device, options = chapter_rows(load(argv[1]), argv[1])
        peer, version = torch_rows(argv[3]) if len(argv) == 4 else (None, None)
    except PlotError as err:
        print(f"plot-memory-format: error: {err}", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(WORKLOADS), figsize=(12, 4.5), sharey=True)
    width = 0.38 if peer else 0.6
    for ax, (key, title) in zip(axes, WORKLOADS):
        ours = speedups(rows, key)
        theirs = speedups(peer, key) if peer else {}
        precisions = [p for p in PRECISIONS if p in ours or p in theirs]
        xs = range(len(precisions))
        ax.axhspan(1.1, 1.3, color="tab:green", alpha=0.12, label="seed 002: 1.1-1.3x")
        ax.axhspan(1.2, 1.3, color="tab:green", alpha=0.18, label="seed 001: 20-30%")
        ax.axhline(1.0, color="black", linewidth=0.8)
        shift = width / 2 if peer else 0
        series = [(ours, -shift, "anatomy", "tab:blue")]
        if peer:
            series.append((theirs, shift, f"torch {version}", "tab:orange"))
        for values, offset, label, colour in series:
            # A precision one side did not run has no bar and no label.
            heights = [values.get(p, float("nan")) for p in precisions]
            bars = ax.bar([x + offset for x in xs], heights, width, label=label, color=colour)
            ax.bar_label(bars, labels=["" if h != h else f"{h:.2f}x" for h in heights], fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(precisions)
        ax.set_title(title)
        ax.set_xlabel("precision")
    axes[0].set_ylabel("speed-up of channels_last (NCHW time / NHWC time)")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.suptitle(f"c11 memory-format on {device}: forward + backward, batch {options.get('batch', '?')}, "
                 f"{options.get('size', '?')}x{options.get('size', '?')}")
    fig.tight_layout()
    os.makedirs(os.path.dirname(argv[2]) or ".", exist_ok=True)
    for ext in ("svg", "png"):
        fig.savefig(f"{argv[2]}.{ext}", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

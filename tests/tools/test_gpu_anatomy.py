#!/usr/bin/env python3
"""Tests of the gpu-anatomy command: every experiment at tiny sizes on the CPU (the blocks of
text it must print, positive finite figures, a JSON report that validates against
docs/gpu-anatomy.schema.json), and every bad input (its one-line message and exit status, and no
file left behind).

The group "gpu" runs suite --quick and c01 all --quick on cuda:0 (a GPU test: it prints
[anatomy-skip] where there is no CUDA device). The group "peer" checks --peer torch on the CPU:
PyTorch's figure beside every measurement in a build against libtorch, one line and exit status 2
in a build without; "peer-gpu" the same on cuda:0 (skipped without a GPU or without libtorch).

usage: test_gpu_anatomy.py GPU_ANATOMY SCHEMA {outputs,errors,suite,gpu,peer,peer-gpu}
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL, SCHEMA_PATH, GROUP = sys.argv[1], sys.argv[2], sys.argv[3]
with open(SCHEMA_PATH) as f:
    SCHEMA = json.load(f)
failures = []


def run(*args, env=None):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=300,
                       env=None if env is None else {**os.environ, **env})
    err = p.stderr
    if p.returncode < 0:
        err += backtrace(args)
    return p.returncode, p.stdout, err


def backtrace(args):
    """The stack of a run that a signal ended, from the same run under a debugger, so that a crash
    on a machine where it cannot be rerun by hand (the GPU machines) arrives with its cause:
    cuda-gdb there (it has no gdb), gdb elsewhere; nothing when neither is installed."""
    debugger = shutil.which("cuda-gdb") or shutil.which("gdb")
    if debugger is None:
        return "\n(no cuda-gdb or gdb here for a backtrace)"
    p = subprocess.run([debugger, "-batch", "-ex", "set pagination off", "-ex", "run", "-ex", "bt 40",
                        "--args", TOOL, *args], capture_output=True, text=True, timeout=600)
    lines = p.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if "received signal" in line), max(0, len(lines) - 60))
    return f"\n---- the same run under {os.path.basename(debugger)}:\n" + "\n".join(lines[start:start + 60])


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def validate(doc, what):
    """Checks doc against the schema where jsonschema is installed (CI installs it; the GPU machine
    may lack it, and there the schema check is left to the CPU tests)."""
    try:
        import jsonschema
    except ImportError:
        check(GROUP in ("gpu", "peer-gpu"), "jsonschema is not installed (scripts/setup.sh installs it)")
        return
    try:
        jsonschema.validate(doc, SCHEMA)
    except jsonschema.ValidationError as e:
        check(False, f"{what}: the JSON does not validate: {e.message}")


def report(args, path):
    """Runs an experiment with --json path; returns (stdout, the validated document)."""
    rc, out, err = run(*args, "--json", path)
    if not check(rc == 0, f"{args}: exit {rc}, stderr: {err.strip()}"):
        return out, None
    with open(path) as f:
        doc = json.load(f)
    validate(doc, args)
    for m in doc["measurements"]:
        for key in ("median", "p10", "p90"):
            check(math.isfinite(m[key]) and m[key] > 0, f"{args}: {m['name']} {key} = {m[key]}")
        check(m["p10"] <= m["median"] <= m["p90"], f"{args}: {m['name']} p10 <= median <= p90")
    check(not os.path.exists(path + ".partial"), f"{args}: a .partial file was left behind")
    return out, doc


VARIANTS = ["contiguous", "transposed_view", "sliced_offset_view", "as_strided_view", "transposed_contig_copy"]


def outputs(tmp):
    for dtype, name in [("fp32", "float32"), ("fp16", "float16"), ("bf16", "bfloat16"), ("fp64", "float64"),
                        ("int8", "int8")]:
        args = ["c01", "contiguity-bench", "--device", "cpu", "--dtype", dtype, "--m", "12", "--n", "10", "--k",
                "6", "--iters", "3", "--warmup", "1", "--quiet"]
        out, doc = report(args, os.path.join(tmp, f"c01-{dtype}.json"))
        for v in VARIANTS:
            check(f"[A variant: {v}]\n" in out, f"{dtype}: the layout block of {v}")
        # Seed 004's layout block, line for line, for the sliced view: (m, n-1) at offset 1.
        size = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int8": 1}[dtype]
        block = ("[A variant: sliced_offset_view]\n  shape          : (12, 9)\n"
                 f"  dtype          : {name}\n  device         : cpu\n  is_contiguous  : no\n"
                 "  strides        : (10, 1)\n  storage_offset : 1\n"
                 f"  offset_bytes   : {size}  (mod 128 = {size})\n")
        check(block in out, f"{dtype}: the sliced_offset_view block reads as seed 004's:\n{out}")
        check("=== Matmul timing (A @ B) ===" in out, f"{dtype}: the matmul block")
        timings = re.findall(r"^(\w+) +([0-9.]+) ms/iter   \(p10-p90 ([0-9.]+)-([0-9.]+)\)$", out, re.M)
        floating = dtype != "int8"
        check(len(timings) == (10 if floating else 5), f"{dtype}: {len(timings)} timing lines")
        check(all(0 < float(lo) <= float(t) <= float(hi) for _, t, lo, hi in timings),
              f"{dtype}: every time is positive, inside its spread")
        check(("=== LayerNorm-ish timing ===" in out) == floating, f"{dtype}: the LayerNorm block iff floating")
        check("Notes:\n  - " in out, f"{dtype}: the notes")
        if doc:
            check(doc["chapter"] == "c01" and doc["experiment"] == "contiguity-bench", f"{dtype}: names")
            check(len(doc["measurements"]) == len(timings), f"{dtype}: a measurement per timing line")
            check([l["name"] for l in doc["results"]["layouts"]] == VARIANTS, f"{dtype}: the layouts in order")
            check(doc["options"]["m"] == 12 and doc["options"]["dtype"] == dtype, f"{dtype}: the options")
    out, doc = report(["c01", "sync-points", "--device", "cpu", "--dtype", "fp32", "--size", "16", "--iters", "3",
                       "--warmup", "1"], os.path.join(tmp, "sync.json"))
    for block in ("=== Queued vs synchronized", "=== Calls that wait for the device", "=== The same calls under the "
                  "sync-debug mode ===\non the CPU nothing is queued", "Notes:\n  - "):
        check(block in out, f"sync-points: {block!r} in:\n{out}")
    rows = re.findall(r"^(.+?) +([0-9.]+) ms/(iter|call)   \(p10-p90", out, re.M)
    check(len(rows) == 5 and all(float(t) > 0 for _, t, _ in rows), f"sync-points: five positive rows:\n{out}")
    if doc:
        check(len(doc["measurements"]) == 5, "sync-points: five measurements")
    dot, svg = os.path.join(tmp, "graph.dot"), os.path.join(tmp, "graph.svg")
    out, doc = report(["c01", "autograd-inspect", "--device", "cpu", "--dtype", "fp32", "--batch", "2", "--seq", "3",
                       "--dmodel", "8", "--nhead", "2", "--dot", dot, "--svg", svg], os.path.join(tmp, "ag.json"))
    for name in ("MeanBackward0", "NativeLayerNormBackward0", "AddmmBackward0", "GeluBackward0", "SoftmaxBackward0",
                 "AccumulateGrad (leaf [24, 8] fp32)", "=== Parameter gradients ===", "=== Graph structure ==="):
        check(name in out, f"autograd-inspect: {name!r} in the output")
    grads = re.findall(r"^(\S+) +(\S+) +(\S+) +(\S+) +(\S+) +(\S+)$", out.split("=== Parameter gradients ===")[1]
                       .split("===")[0], re.M)  # the header has seven words ("max |g|"): no match
    check(len(grads) == 12 and all(math.isfinite(float(v)) for g in grads for v in g[2:]),
          f"autograd-inspect: twelve finite gradient rows: {grads}")
    check(os.path.getsize(dot) > 0 and open(dot).read().startswith("digraph"), "autograd-inspect: --dot")
    check(open(svg).read().lstrip().startswith("<?xml") or "<svg" in open(svg).read(), "autograd-inspect: --svg")
    if doc:
        check(doc["results"]["node_counts"]["AccumulateGrad"] == 12, "autograd-inspect: twelve AccumulateGrad nodes")
        check(doc["results"]["graph_held_bytes"] > 0, "autograd-inspect: the graph holds memory")
    # n = 512: int8 sums outgrow int8 (the product is int32), which the exactness check must allow.
    out, doc = report(["c02", "precision", "--device", "cpu", "--sizes", "16,512", "--iters", "2"],
                      os.path.join(tmp, "c02.json"))
    rows = re.findall(r"^(fp64|fp32|fp16|bf16|int8) +(\d+) +([0-9.]+) +([0-9.]+) +([0-9.e+-]+)$", out, re.M)
    check(len(rows) == 10, f"c02: ten rows (five precisions, two sizes) on the CPU:\n{out}")
    # A 16^3 product's rate prints as 0.000 TFLOP/s once a loaded machine takes 16 us for it: the
    # rates are checked at n = 512, the times at both sizes.
    check(all(float(r[2]) > 0 and (r[1] != "512" or float(r[3]) > 0) for r in rows), "c02: positive times and rates")
    check(all(float(r[4]) == 0 for r in rows if r[0] in ("int8", "fp64")), "c02: int8 and fp64 exact on the CPU")
    out, doc = report(["c07", "cpu-vs-gpu", "--device", "cpu", "--sizes", "8,16", "--iters", "2"],
                      os.path.join(tmp, "c07.json"))
    rows = re.findall(r"^ +(\d+) +([0-9.]+) +- +- +- +-$", out, re.M)
    check(len(rows) == 4 and all(float(t) > 0 for _, t in rows), f"c07: four CPU rows:\n{out}")
    if doc:
        check(len(doc["measurements"]) == 4, "c07: four measurements")
    out, doc = report(["c03", "fragmentation", "--conf", "", "--conf", "max_split_size_mb:64"],
                      os.path.join(tmp, "c03f.json"))
    rows = re.findall(r"^(\(the defaults\)|max_split_size_mb:64) .* ([0-9.]+) +\d+ +\d+$", out, re.M)
    check(len(rows) == 2 and all(float(r) >= 1 for _, r in rows), f"c03 fragmentation: two settings:\n{out}")
    out, doc = report(["c03", "lifecycle", "--device", "cpu", "--mib", "8"], os.path.join(tmp, "c03l.json"))
    if doc:
        mib = 1 << 20
        steps = [(r["allocated_bytes"], r["reserved_bytes"]) for r in doc["results"]["steps"]]
        # The CUDA allocator's policy: x's 8 MiB takes a 20 MiB segment (1-10 MiB requests) and y
        # the rest of it, the 1000 B tensor a 1024 B block of a 2 MiB small-pool segment, x's block
        # is cached for x2, and empty_cache gives everything back.
        check(steps == [(0, 0), (8 * mib, 20 * mib), (16 * mib, 20 * mib), (16 * mib + 1024, 22 * mib),
                        (8 * mib + 1024, 22 * mib), (16 * mib + 1024, 22 * mib), (0, 22 * mib), (0, 0)],
              f"c03 lifecycle: the steps {steps}\n{out}")
        check("served from x's cached block" in out, f"c03 lifecycle: the reuse note:\n{out}")
    out, doc = report(["c03", "oom", "--device-mib", "1024", "--fraction", "0.5", "--block-mib", "128"],
                      os.path.join(tmp, "c03o.json"))
    check("handed out before one was refused: 4 " in out and "the same request succeeds" in out,
          f"c03 oom: four blocks, then a recovery:\n{out}")
    if doc:
        check("out of memory" in doc["results"]["message"] and doc["results"]["recovered"], "c03 oom: the JSON")
    out, doc = report(["c04", "transfers", "--device", "cpu", "--sizes", "4096,65536", "--iters", "2"],
                      os.path.join(tmp, "c04.json"))
    rows = re.findall(r"^ +(\d+ KiB) +([0-9.]+)$", out, re.M)
    check(len(rows) == 2 and all(float(r) > 0 for _, r in rows), f"c04: two host copy rows:\n{out}")
    out, doc = report(["c05", "streams", "--device", "cpu", "--dtype", "fp32", "--size", "16", "--iters", "2"],
                      os.path.join(tmp, "c05.json"))
    check(re.search(r"^one stream +[0-9.]+ ms$", out, re.M) and "no CUDA device" in out, f"c05 on the CPU:\n{out}")
    out, doc = report(["c06", "overhead", "--device", "cpu", "--iters", "3", "--batch", "50"],
                      os.path.join(tmp, "c06.json"))
    check("-> CPU (add, backends/cpu/binary_cpu.cpp)" in out, f"c06 overhead: the trace of a + b:\n{out}")
    rows = re.findall(r"^(cpu.*?) +(\d+) ns/call", out, re.M)
    check(len(rows) == 4 and all(int(t) > 0 for _, t in rows), f"c06 overhead: four CPU paths:\n{out}")
    out, doc = report(["c06", "custom-backend"], os.path.join(tmp, "c06b.json"))
    for needle in ("-> PrivateUse1 (demo_empty, tools/c06_custom_backend.cpp)", "matches (a view on demo, then a copy)",
                   "NotImplementedError: aten::add.Tensor: no kernel for PrivateUse1"):
        check(needle in out, f"c06 custom-backend: {needle!r} in:\n{out}")
    out, doc = report(["c01", "layout", "--device", "cpu"], os.path.join(tmp, "layout.json"))
    rows = [l for l in out.splitlines() if l.endswith("matches") or l.endswith("DIFFERS")]
    check(len(rows) == 10 and all(l.endswith("matches") for l in rows), f"layout: ten rows that match:\n{out}")
    if doc:
        check(len(doc["results"]["views"]) == 10, "layout: ten views in the JSON")
    dlpack(tmp)
    graphs(tmp)
    profile(tmp)
    memory_format(tmp)
    out, doc = report(["c00", "device-info"], os.path.join(tmp, "device.json"))
    check("cpu: " in out, "device-info: the CPU line")
    if doc:
        check(doc["results"]["cpu"]["logical_cores"] >= 1, "device-info: the CPU's cores")
    rc, out, _ = run("--help")
    check(rc == 0 and all(c in out for c in ("c00", "c01", "c02", "c03", "c06", "c07", "c08", "c09", "c10", "c11",
                                                       "suite")),
          "--help lists the chapters")
    rc, out, _ = run("c01", "--help")
    check(rc == 0 and all(e in out for e in ("contiguity-bench", "sync-points", "autograd-inspect", "layout")),
          "c01 --help lists the experiments")


def dlpack(tmp):
    """c08 dlpack --quick: a row per size from 1 KiB to 1 MiB, every figure positive, the line
    that judges the round trip, and the JSON's rows agreeing with the table."""
    out, doc = report(["c08", "dlpack", "--device", "cpu", "--quick", "--iters", "3", "--batch", "10"],
                      os.path.join(tmp, "c08.json"))
    rows = re.findall(r"^ +(\d+ [KM]iB) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$", out, re.M)
    check([r[0] for r in rows] == ["1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"],
          f"c08 dlpack: the quick sizes:\n{out}")
    check(all(float(v) > 0 for r in rows for v in r[1:]), "c08 dlpack: positive figures")
    verdict = re.search(r"^round trip from 1 KiB to 1 MiB: ([0-9.]+) to ([0-9.]+) us, max/min ([0-9.]+): "
                        r"(flat|NOT flat) \(max/min <= 1.5\), (within|ABOVE) 2 us$", out, re.M)
    check(verdict is not None, f"c08 dlpack: the round trip's verdict:\n{out}")
    check("no copy at any of the 6 sizes" in out, "c08 dlpack: the zero-copy note")
    if doc and verdict:
        check(doc["options"]["sizes"] == [1024 * 4**k for k in range(6)] and doc["options"]["quick"],
              "c08 dlpack: the options")
        check(len(doc["measurements"]) == 4 * 6, "c08 dlpack: export, import, round trip and clone per size")
        check([r["bytes"] for r in doc["results"]["rows"]] == doc["options"]["sizes"], "c08 dlpack: a row per size")
        rt = doc["results"]["round_trip"]
        check(rt["flat"] == (verdict.group(4) == "flat") and rt["within_limit"] == (verdict.group(5) == "within"),
              "c08 dlpack: the JSON's verdict is the printed one")
        check(math.isclose(rt["max_over_min"], rt["max_us"] / rt["min_us"]), "c08 dlpack: max/min")
    # Sizes of the caller's choice, not multiples of 4 KiB.
    out, doc = report(["c08", "dlpack", "--device", "cpu", "--sizes", "4,1000", "--iters", "2", "--batch", "3"],
                      os.path.join(tmp, "c08s.json"))
    if doc:
        check([r["bytes"] for r in doc["results"]["rows"]] == [4, 1000], "c08 dlpack --sizes: the rows")


def graphs(tmp):
    """c09 graphs on the CPU: the reason it needs a CUDA device, exit 0, a report with nothing
    measured; the same without --device where the build or the machine has no GPU."""
    out, doc = report(["c09", "graphs", "--device", "cpu", "--iters", "3"], os.path.join(tmp, "c09.json"))
    check(re.search(r"^c09 graphs needs a CUDA device \(.+\): .*run it with --device cuda:0 on a GPU machine$", out,
                    re.M) is not None, f"c09 graphs on the CPU: the reason:\n{out}")
    check("Notes:\n  - nothing measured" in out, f"c09 graphs on the CPU: the note:\n{out}")
    check("eager/replay" not in out, "c09 graphs on the CPU: no table")
    if doc:
        check(doc["measurements"] == [] and doc["results"]["rows"] == [], "c09 graphs on the CPU: nothing measured")
        check(doc["options"]["iters"] == 3, "c09 graphs: the options")
    if "no CUDA device" in run("c00", "device-info")[1]:
        rc, out, err = run("c09", "graphs")
        check(rc == 0 and "needs a CUDA device" in out and "running on cpu" in err,
              f"c09 graphs without --device and without a GPU: exit {rc}:\n{out}{err}")


def picture_problem(path):
    """What is wrong with a picture file (None when it is a non-empty SVG or PNG of positive size)."""
    if not os.path.exists(path) or os.path.getsize(path) < 1000:
        return "missing or under 1000 bytes"
    if path.endswith(".svg"):
        import xml.etree.ElementTree as ET
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            return f"not XML: {e}"
        if root.tag != "{http://www.w3.org/2000/svg}svg":
            return f"the root element is {root.tag}"
        if not any(el.tag.endswith("path") for el in root.iter()):
            return "no path drawn"
        return None
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return "no PNG signature and header"
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return None if width > 0 and height > 0 else f"{width} x {height} pixels"


def profile(tmp):
    """c10 profile --quick on the CPU: the table with the forward's and backward's operators, the
    overhead note, the Chrome trace (valid, with both ranges) and the timeline picture it draws
    beside the trace (an SVG and a PNG)."""
    trace = os.path.join(tmp, "c10-trace.json")
    out, doc = report(["c10", "profile", "--device", "cpu", "--quick", "--iters", "2", "--trace", trace],
                      os.path.join(tmp, "c10.json"))
    # The two ranges hold every operator, so they lead the table by CPU time whatever the timings.
    for needle in ("Self CPU time total", "\nbackward ", "\nforward ", "aten::", "us per operator", "in the backward",
                   f"its timeline to {tmp}/c10-trace.svg and {tmp}/c10-trace.png"):
        check(needle in out, f"c10 profile: {needle!r} in:\n{out}")
    if doc:
        ops = doc["results"]["operators"]
        check(ops["forward"] > 10 and ops["backward"] > 10, f"c10 profile: the operators {ops}")
        check(len(doc["measurements"]) == 2, "c10 profile: the step with and without a profile")
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    ranges = {e["name"] for e in events if e.get("cat") == "user_range"}
    check(ranges == {"forward", "backward"}, f"c10 profile: the trace's ranges {ranges}")
    for ext in ("svg", "png"):
        problem = picture_problem(os.path.join(tmp, f"c10-trace.{ext}"))
        check(problem is None, f"c10 profile: the timeline's {ext}: {problem}")
    # --no-picture: the trace alone.
    alone = os.path.join(tmp, "alone", "trace.json")
    os.makedirs(os.path.dirname(alone))
    rc, out, err = run("c10", "profile", "--device", "cpu", "--quick", "--iters", "1", "--trace", alone,
                       "--no-picture")
    check(rc == 0 and os.listdir(os.path.dirname(alone)) == ["trace.json"],
          f"c10 profile --no-picture: exit {rc}, {os.listdir(os.path.dirname(alone))}: {err}")
    script = os.path.join(os.path.dirname(SCHEMA_PATH), "..", "scripts", "plot-profile.py")
    bad_trace = subprocess.run([sys.executable, script, os.path.join(tmp, "missing.json"), os.path.join(tmp, "x")],
                               capture_output=True, text=True, timeout=60)
    check(bad_trace.returncode == 1 and "plot-profile: error" in bad_trace.stderr, "plot-profile: a missing file")


def memory_format(tmp):
    """c11 memory-format --quick on the CPU: a row per workload in fp32, both layouts timed, the
    layouts' results checked against each other, the JSON's rows agreeing with the table; then
    scripts/plot-memory-format.py draws it."""
    path = os.path.join(tmp, "c11.json")
    out, doc = report(["c11", "memory-format", "--device", "cpu", "--quick", "--iters", "2", "--warmup", "1"], path)
    check("=== Memory formats on cpu: forward + backward, batch 2, 16x16, host time per iteration (ms) ===" in out,
          f"c11 memory-format: the table's title:\n{out}")
    rows = re.findall(r"^(3x3 conv 64->64|ResNet-50 bottleneck 256-64-256) +(fp32) +([0-9.]+) +([0-9.]+) +"
                      r"([0-9.]+)x   (.+)$", out, re.M)
    check([r[0] for r in rows] == ["3x3 conv 64->64", "ResNet-50 bottleneck 256-64-256"],
          f"c11 memory-format: a row per workload:\n{out}")
    check(all(float(v) > 0 for r in rows for v in r[2:5]), "c11 memory-format: positive figures")
    for needle in ("neither supports nor refutes", "python3 bench/python/memory_format.py --device cpu --batch 2 "
                   "--size 16 --precisions fp32 --iters 2 --warmup 1", "checked before timing"):
        check(needle in out, f"c11 memory-format: {needle!r} in:\n{out}")
    if doc and rows:
        got = doc["results"]["rows"]
        check([(r["workload"], r["precision"]) for r in got] == [("conv3x3", "fp32"), ("bottleneck", "fp32")],
              f"c11 memory-format: the JSON's rows {got}")
        for r, printed in zip(got, rows):
            check(math.isclose(r["speedup"], r["nchw_ms"] / r["nhwc_ms"]), "c11 memory-format: the speed-up")
            check(f"{r['speedup']:.2f}" == printed[4], "c11 memory-format: the JSON's speed-up is the printed one")
            check(r["mismatched_fraction"] <= 0.01 and r["max_layout_error"] < 1,
                  f"c11 memory-format: the layouts agree: {r}")
            check(r["nhwc_output_channels_last"] and r["nhwc_grad_input_channels_last"],
                  f"c11 memory-format: channels_last propagates through {r['workload']}")
        check(len(doc["measurements"]) == 4, "c11 memory-format: NCHW and NHWC per row")
        check(doc["options"]["batch"] == 2 and doc["options"]["size"] == 16 and doc["options"]["quick"],
              "c11 memory-format: the options")
    script = os.path.join(os.path.dirname(SCHEMA_PATH), "..", "scripts", "plot-memory-format.py")
    picture = os.path.join(tmp, "c11-speedup")
    p = subprocess.run([sys.executable, script, path, picture], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"plot-memory-format: exit {p.returncode}: {p.stderr}")
    for ext in ("svg", "png"):
        check(os.path.exists(f"{picture}.{ext}") and os.path.getsize(f"{picture}.{ext}") > 1000,
              f"plot-memory-format: {ext}")
    not_c11 = os.path.join(tmp, "c10.json")
    p = subprocess.run([sys.executable, script, not_c11, picture], capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "plot-memory-format: error" in p.stderr and "no c11 memory-format report" in p.stderr,
          f"plot-memory-format: another chapter's report: {p.stderr}")


def suite(tmp):
    """suite --quick on the CPU: every report in one valid document, then the plots of it."""
    path = os.path.join(tmp, "suite.json")
    rc, out, err = run("suite", "--quick", "--device", "cpu", "--json", path, "--quiet")
    if not check(rc == 0, f"suite: exit {rc}: {err.strip()}"):
        return
    with open(path) as f:
        doc = json.load(f)
    validate(doc, "suite")
    names = [(r["chapter"], r["experiment"]) for r in doc["reports"]]
    check(names == [("c00", "device-info"), ("c01", "layout"), ("c01", "contiguity-bench"), ("c01", "sync-points"),
                    ("c01", "autograd-inspect"), ("c02", "precision"), ("c03", "lifecycle"), ("c03", "fragmentation"), ("c03", "oom"), ("c04", "transfers"), ("c05", "streams"), ("c06", "overhead"),
                    ("c06", "custom-backend"),
                    ("c07", "cpu-vs-gpu"), ("c08", "dlpack"), ("c09", "graphs"), ("c10", "profile"),
                    ("c11", "memory-format")],
          f"suite: the reports {names}")
    check(doc["failed"] == [] and doc["quick"] is True, "suite: nothing failed")
    check(out.count("##### gpu-anatomy ") == 18, "suite: a header before each experiment's output")
    plots = os.path.join(tmp, "plots")
    script = os.path.join(os.path.dirname(SCHEMA_PATH), "..", "scripts", "plot-report.py")
    p = subprocess.run([sys.executable, script, path, plots], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"plot-report: exit {p.returncode}: {p.stderr}")
    for name in ("c01-contiguity-bench", "c01-sync-points", "c02-precision", "c07-cpu-vs-gpu", "c08-dlpack"):
        for ext in ("svg", "png"):
            f = os.path.join(plots, f"{name}.{ext}")
            check(os.path.exists(f) and os.path.getsize(f) > 1000, f"plot-report: {f}")
    path = os.path.join(tmp, "c01.json")
    rc, out, err = run("c01", "all", "--quick", "--device", "cpu", "--json", path, "--quiet")
    if check(rc == 0, f"c01 all: exit {rc}: {err.strip()}"):
        with open(path) as f:
            doc = json.load(f)
        validate(doc, "c01 all")
        check([r["experiment"] for r in doc["reports"]] == ["layout", "contiguity-bench", "sync-points",
                                                             "autograd-inspect"], "c01 all: chapter 01's four")
    bad = subprocess.run([sys.executable, script, os.path.join(tmp, "missing.json")], capture_output=True, text=True)
    check(bad.returncode == 1 and "plot-report: error" in bad.stderr, "plot-report: a missing file is one error line")


def gpu(tmp):
    """suite --quick and c01 all --quick on cuda:0, where there is one."""
    if "no CUDA device" in run("c00", "device-info")[1]:
        print("[anatomy-skip] no CUDA device")
        return
    for args, count in ((["suite", "--quick"], 18), (["c01", "all", "--quick"], 4)):
        path = os.path.join(tmp, "gpu.json")
        rc, out, err = run(*args, "--device", "cuda:0", "--json", path, "--quiet")
        if not check(rc == 0, f"{args} on cuda:0: exit {rc}: {err.strip()}\n{out[-3000:]}"):
            continue
        with open(path) as f:
            doc = json.load(f)
        check(len(doc["reports"]) == count and doc["failed"] == [], f"{args} on cuda:0: {count} reports")
        check(all(r["device"] in ("cuda:0", "cpu") for r in doc["reports"]), f"{args}: the devices")
        validate(doc, f"{args} on cuda:0")


def built_peer(tmp):
    """The libtorch this tool was built against ("torch 2.11.0"), or None."""
    path = os.path.join(tmp, "c00.json")
    out, doc = report(["c00", "device-info"], path)
    return doc["results"]["build"]["peer"] if doc else None


# Tiny runs of every experiment that takes --peer.
PEER_RUNS = [["c01", "contiguity-bench", "--m", "64", "--n", "64", "--k", "64", "--iters", "3", "--dtype", "fp32"],
             ["c02", "precision", "--sizes", "64", "--iters", "3"],
             ["c04", "transfers", "--sizes", "4096,65536", "--iters", "3"],
             ["c05", "streams", "--size", "64", "--iters", "3", "--dtype", "fp32"],
             ["c06", "overhead", "--iters", "3", "--batch", "100"],
             ["c07", "cpu-vs-gpu", "--sizes", "64,96", "--iters", "3"],
             ["c08", "dlpack", "--sizes", "1024,1048576", "--iters", "3", "--batch", "20"],
             ["c09", "graphs", "--iters", "3", "--warmup", "1"],
             ["c10", "profile", "--quick", "--iters", "2", "--warmup", "1"],
             ["c11", "memory-format", "--quick", "--iters", "2", "--warmup", "1"]]


def peer_on(tmp, device, engine):
    for args in PEER_RUNS:
        args = [*args, "--device", device, "--peer", "torch"]
        out, doc = report(args, os.path.join(tmp, "peer.json"))
        if not doc:
            continue
        check(doc["options"].get("peer") == "torch", f"{args}: options.peer")
        for m in doc["measurements"]:
            # Without a torch figure: c06's dispatch trace (torch has none); c04's overlap and c05's
            # one-matmul timings (ours alone); c08's export, import and clone (the round trip is
            # compared).
            if (m["name"] == "cpu, dispatch trace on" or m["group"] in ("copy and matmul", "one matmul")
                    or m["name"].startswith(("export ", "import ", "clone "))):
                check("peer" not in m, f"{args}: {m['name']} has no torch figure")
                continue
            p = m.get("peer")
            if check(p is not None, f"{args}: {m['group']} {m['name']} has torch's figure"):
                check(p["engine"] == engine, f"{args}: engine {p['engine']!r}")
                check(all(math.isfinite(p[k]) and p[k] > 0 for k in ("median", "p10", "p90")), f"{args}: {p}")
        check(engine in out, f"{args}: the output names {engine}")


def peer(tmp):
    engine = built_peer(tmp)
    rc, out, err = run("c01", "contiguity-bench", "--device", "cpu", "--peer", "numpy")
    check(rc == 2 and "'numpy' is not a peer" in err, f"--peer numpy: exit {rc}: {err.strip()}")
    if not engine:
        for args in (["c01", "contiguity-bench"], ["c02", "precision"], ["c04", "transfers"], ["c05", "streams"], ["c06", "overhead"],
                     ["c07", "cpu-vs-gpu"], ["c08", "dlpack"], ["c11", "memory-format"],
                     ["suite", "--quick"]):
            rc, out, err = run(*args, "--device", "cpu", "--peer", "torch")
            check(rc == 2 and err.count("\n") == 1 and "built without libtorch" in err,
                  f"{args} --peer torch without libtorch: exit {rc}: {err.strip()}")
        print("built without libtorch: --peer torch refuses, as it should")
        return
    check(engine.startswith("torch "), f"c00: build.peer = {engine!r}")
    peer_on(tmp, "cpu", engine)
    # The suite passes --peer to the experiments whose command line takes it.
    path = os.path.join(tmp, "suite-peer.json")
    rc, out, err = run("suite", "--quick", "--device", "cpu", "--peer", "torch", "--json", path, "--quiet")
    if check(rc == 0, f"suite --peer torch: exit {rc}: {err.strip()}"):
        with open(path) as f:
            reports = {r["experiment"]: r for r in json.load(f)["reports"]}
        for name in ("contiguity-bench", "precision", "cpu-vs-gpu", "memory-format"):
            ms = reports[name]["measurements"]
            check(ms and all("peer" in m for m in ms), f"suite --peer torch: {name} has torch's figures")
    peer_module_missing(tmp)


def peer_module_missing(tmp):
    """libtorch lives in the module beside the tool, loaded only for --peer: the tool alone has
    no libtorch among its libraries, and a copy of it without the module refuses --peer torch
    with one line (exit 2) and reports no peer, while the rest works."""
    ldd = subprocess.run(["ldd", TOOL], capture_output=True, text=True)
    check(ldd.returncode == 0 and "libtorch" not in ldd.stdout, f"the tool links libtorch: {ldd.stdout}")
    alone = os.path.join(tmp, "alone")
    os.makedirs(alone, exist_ok=True)
    copy = os.path.join(alone, "gpu-anatomy")
    shutil.copy2(TOOL, copy)
    p = subprocess.run([copy, "c01", "contiguity-bench", "--device", "cpu", "--m", "8", "--n", "8", "--k", "8",
                        "--iters", "1", "--peer", "torch"], capture_output=True, text=True)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "is not there" in p.stderr,
          f"--peer torch without the module: exit {p.returncode}: {p.stderr.strip()}")
    p = subprocess.run([copy, "c00", "device-info"], capture_output=True, text=True)
    check(p.returncode == 0 and "--peer torch off" in p.stdout, f"c00 without the module: {p.stdout[-300:]}")


def peer_gpu(tmp):
    if "no CUDA device" in run("c00", "device-info")[1]:
        print("[anatomy-skip] no CUDA device")
        return
    engine = built_peer(tmp)
    if not engine:
        print("[anatomy-skip] built without libtorch")
        return
    peer_on(tmp, "cuda:0", engine)
    path = os.path.join(tmp, "suite-peer.json")
    rc, out, err = run("suite", "--quick", "--device", "cuda:0", "--peer", "torch", "--json", path, "--quiet")
    check(rc == 0, f"suite --peer torch on cuda:0: exit {rc}: {err.strip()}\n{out[-3000:]}")


def errors(tmp):
    def bad(args, status, *needles, env=None):
        rc, out, err = run(*args, env=env)
        line = err.strip()
        check(rc == status, f"{args}: exit {rc}, expected {status} ({line})")
        check(line.count("\n") == 0 and line.startswith("gpu-anatomy: "), f"{args}: one line: {line!r}")
        for n in needles:
            check(n in line, f"{args}: {n!r} in {line!r}")

    bad([], 2, "chapter")
    bad(["c1", "layout"], 2, "unknown chapter 'c1'", "did you mean 'c01'?")
    bad(["c01"], 2, "no experiment given", "contiguity-bench")
    bad(["c01", "layuot"], 2, "unknown experiment 'layuot'", "did you mean 'layout'?")
    bad(["c01", "layout", "--devcie", "cpu"], 2, "unknown option '--devcie'", "did you mean '--device'?")
    bad(["c01", "contiguity-bench", "--device", "gpu0"], 2, "'gpu0' is not a device")
    bad(["c01", "contiguity-bench", "--m", "0", "--device", "cpu"], 2, "--m", "at least 1", "0")
    bad(["c01", "contiguity-bench", "--k", "-3", "--device", "cpu"], 2, "--k", "-3")
    bad(["c01", "contiguity-bench", "--n", "1", "--device", "cpu"], 2, "--n", "at least 2")
    bad(["c01", "contiguity-bench", "--dtype", "fp8", "--device", "cpu"], 2, "--dtype", "fp8")
    bad(["c01", "contiguity-bench", "--iters", "0", "--device", "cpu"], 2, "--iters")
    bad(["c01", "contiguity-bench", "--m", "abc"], 2, "--m")
    bad(["c01", "autograd-inspect", "--device", "cpu", "--dmodel", "10", "--nhead", "3"], 2, "--dmodel 10",
        "--nhead 3")
    bad(["c01", "autograd-inspect", "--device", "cpu", "--seq", "0"], 2, "--seq", "at least 1")
    bad(["c01", "sync-points", "--device", "cpu", "--size", "-1"], 2, "--size")
    bad(["suite", "--quik"], 2, "unknown option '--quik'", "did you mean '--quick'?")
    bad(["c02", "precision", "--device", "cpu", "--sizes", "64,x"], 2, "--sizes", "'64,x'")
    bad(["c07", "cpu-vs-gpu", "--device", "cpu", "--sizes", "64,0"], 2, "--sizes", "at least 1")
    bad(["c07", "cpu-vs-gpu", "--device", "cpu", "--sizes", ""], 2, "--sizes")
    bad(["c06", "overhead", "--device", "cpu", "--batch", "0"], 2, "--batch", "at least 1")
    bad(["c04", "transfers", "--device", "cpu", "--sizes", "4097"], 2, "--sizes", "4097 bytes")
    bad(["c05", "streams", "--device", "cpu", "--chain", "0"], 2, "--chain", "at least 1")
    bad(["c08", "dlpack", "--device", "cpu", "--sizes", "1024,x"], 2, "--sizes", "'1024,x'")
    bad(["c08", "dlpack", "--device", "cpu", "--sizes", "0"], 2, "--sizes", "at least 1")
    bad(["c08", "dlpack", "--device", "cpu", "--sizes", "1023"], 2, "--sizes", "1023 bytes")
    bad(["c08", "dlpack", "--device", "cpu", "--sizes", ""], 2, "--sizes")
    bad(["c08", "dlpack", "--device", "cpu", "--batch", "0"], 2, "--batch", "at least 1")
    bad(["c08", "dlpack", "--device", "cpu", "--batch", "2000000000"], 2, "--batch", "at most 1000000")
    bad(["c08", "dlpack", "--device", "cpu", "--iters", "0"], 2, "--iters")
    bad(["c08", "dlpak"], 2, "unknown experiment 'dlpak'", "did you mean 'dlpack'?")
    bad(["c09", "graph"], 2, "unknown experiment 'graph'", "did you mean 'graphs'?")
    bad(["c10", "profile", "--device", "cpu", "--rows", "0"], 2, "--rows", "at least 1")
    # No interpreter with matplotlib for the picture: one line before anything runs, no trace left.
    trace = os.path.join(tmp, "c10-unwritten.json")
    missing = os.path.join(tmp, "no-such-python")
    bad(["c10", "profile", "--device", "cpu", "--quick", "--trace", trace], 2, "c10 profile", missing,
        "--no-picture", env={"ANATOMY_PLOT_PYTHON": missing})
    bare = os.path.join(tmp, "bare-venv")  # a real interpreter without matplotlib
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True, timeout=120)
    bare_python = os.path.join(bare, "bin", "python")
    bad(["c10", "profile", "--device", "cpu", "--quick", "--trace", trace], 2, "needs matplotlib", bare_python,
        "scripts/setup.sh", env={"ANATOMY_PLOT_PYTHON": bare_python})
    check(not any(n.startswith("c10-unwritten") for n in os.listdir(tmp)), "no trace or picture after a refusal")
    bad(["c09", "graphs", "--device", "cpu", "--iters", "0"], 2, "--iters")
    bad(["c09", "graphs", "--device", "cpu", "--sizes", "4"], 2, "unknown option '--sizes'")
    bad(["c11", "memory-fromat"], 2, "unknown experiment 'memory-fromat'", "did you mean 'memory-format'?")
    bad(["c11", "memory-format", "--device", "cpu", "--bacth", "4"], 2, "unknown option '--bacth'",
        "did you mean '--batch'?")
    bad(["c11", "memory-format", "--device", "cpu", "--batch", "0"], 2, "--batch", "at least 1")
    bad(["c11", "memory-format", "--device", "cpu", "--size", "-2"], 2, "--size", "-2")
    bad(["c11", "memory-format", "--device", "cpu", "--precisions", "fp32,fp8"], 2, "--precisions", "'fp8'")
    bad(["c11", "memory-format", "--device", "cpu", "--precisions", "bf16"], 2, "--precisions", "'bf16'",
        "needs a CUDA device")
    bad(["c11", "memory-format", "--device", "cpu", "--precisions", ","], 2, "--precisions")
    bad(["c11", "memory-format", "--device", "cpu", "--iters", "0"], 2, "--iters")
    bad(["c03", "fragmentation", "--conf", "expandable_segment:True"], 2, "--conf", "expandable_segment")
    bad(["c03", "oom", "--fraction", "1.5"], 2, "--fraction", "1.5")
    # More than the machine has: the allocator's message, exit 3.
    bad(["c01", "contiguity-bench", "--device", "cpu", "--m", "10000000", "--n", "10000000", "--k", "2"], 3,
        "out of memory")
    # A CUDA device that is not there: none at all, or an index past the last one (listing them).
    if "no CUDA device" in run("c00", "device-info")[1]:
        bad(["c01", "layout", "--device", "cuda:0"], 2, "--device cuda:0", "no CUDA device")
        bad(["c01", "layout", "--device", "cuda:7"], 2, "--device cuda:7", "no CUDA device")
        bad(["c08", "dlpack", "--device", "cuda:0", "--quick"], 2, "--device cuda:0", "no CUDA device")
        bad(["c09", "graphs", "--device", "cuda:0"], 2, "--device cuda:0", "no CUDA device")
    else:
        bad(["c01", "layout", "--device", "cuda:99"], 2, "--device cuda:99", "cuda:0 (")
    target = os.path.join(tmp, "missing-folder", "out.json")
    bad(["c01", "layout", "--device", "cpu", "--json", target], 2, "--json", "cannot write")
    check(not os.path.exists(target) and not os.path.exists(target + ".partial"), "no file after a failed --json")


with tempfile.TemporaryDirectory() as tmp:
    {"outputs": outputs, "errors": errors, "suite": suite, "gpu": gpu, "peer": peer, "peer-gpu": peer_gpu}[GROUP](tmp)
for f in failures:
    print("FAILED:", f)
print(f"{GROUP}: {'ok' if not failures else f'{len(failures)} failure(s)'}")
sys.exit(1 if failures else 0)

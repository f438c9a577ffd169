#!/usr/bin/env python3
"""CUDA graphs from Python: anatomy.cuda.CUDAGraph against torch.cuda.CUDAGraph in one process.

The workloads are gpu-anatomy c09's (docs/cuda-graphs.md), so that its C++ figures have
PyTorch's beside them:

- a chain of 100 dependent adds on a one-element tensor, eager and as the replay of its graph,
  for anatomy and torch, device time per add (CUDA events around 20 runs of the chain);
- torch's training step of c09's MLP (10 linear layers 16 wide with relu between them, batch 8,
  SGD with momentum 0.9), eager and as the replay of the whole step captured (forward, backward
  and optimizer step in one graph, as PyTorch's documentation captures a whole network), and
  the cost of that capture and instantiation.

Each figure is the median of `repeats` timed runs after a warm-up, in microseconds.

    python bench/python/graphs.py [--quick] [--json FILE]
"""

import argparse
import json
import statistics
import sys
import time

ADDS = 100
MLP_LAYERS, MLP_WIDTH, MLP_BATCH = 10, 16, 8


def timed_us(run, events, synchronize, per, repeats, runs_per_sample=20):
    """Median device microseconds per `per` units of work: `run()` `runs_per_sample` times
    between two events, `repeats` samples, after two warm-up samples."""
    samples = []
    for i in range(repeats + 2):
        start, end = events()
        start.record()
        for _ in range(runs_per_sample):
            run()
        end.record()
        end.synchronize()
        if i >= 2:
            samples.append(start.elapsed_time(end) * 1e3 / (runs_per_sample * per))
    synchronize()
    return statistics.median(samples)


def adds_rows(name, cuda, new_tensor, repeats):
    x = new_tensor()

    def chain():
        y = x
        for _ in range(ADDS):
            y = y + 1.0
        return y

    def events():
        return cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)

    stream = cuda.graph_capture_stream() if name == "anatomy" else cuda.Stream()
    with cuda.stream(stream):
        chain()
    cuda.synchronize()
    g = cuda.CUDAGraph()
    t0 = time.perf_counter()
    with cuda.graph(g, stream=stream):
        out = chain()
    capture_ms = (time.perf_counter() - t0) * 1e3
    x.fill_(2.0)
    g.replay()
    cuda.synchronize()
    value = float(out.cpu().tolist()[0])
    if value != 2.0 + ADDS:
        raise SystemExit(f"{name}: the replayed chain gave {value}, expected {2.0 + ADDS}")
    eager = timed_us(chain, events, cuda.synchronize, ADDS, repeats)
    replay = timed_us(g.replay, events, cuda.synchronize, ADDS, repeats)
    return {"library": name, "workload": f"{ADDS} dependent adds", "per": "add", "eager_us": eager,
            "replay_us": replay, "speedup": eager / replay, "capture_ms": capture_ms}


def torch_mlp_row(torch, repeats):
    torch.manual_seed(0)
    layers = []
    for i in range(MLP_LAYERS):
        layers.append(torch.nn.Linear(MLP_WIDTH, MLP_WIDTH))
        if i + 1 < MLP_LAYERS:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(MLP_BATCH, MLP_WIDTH, device="cuda")
    target = torch.randn(MLP_BATCH, MLP_WIDTH, device="cuda")

    def step():
        opt.zero_grad(set_to_none=False)
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    t0 = time.perf_counter()
    with torch.cuda.graph(g):
        step()
    capture_ms = (time.perf_counter() - t0) * 1e3

    def events():
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    eager = timed_us(step, events, torch.cuda.synchronize, 1, repeats)
    replay = timed_us(g.replay, events, torch.cuda.synchronize, 1, repeats)
    return {"library": "torch", "workload": f"MLP training step ({MLP_LAYERS} layers {MLP_WIDTH} wide, batch {MLP_BATCH}, SGD)",
            "per": "step", "eager_us": eager, "replay_us": replay, "speedup": eager / replay, "capture_ms": capture_ms}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    repeats = 3 if args.quick else 15

    import anatomy

    if not anatomy.cuda.is_available():
        print("no CUDA device: CUDA graphs need one", file=sys.stderr)
        return 0
    rows = [adds_rows("anatomy", anatomy.cuda, lambda: anatomy.ops.aten.zeros([1], device="cuda"), repeats)]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        rows.append(adds_rows("torch", torch.cuda, lambda: torch.zeros(1, device="cuda"), repeats))
        rows.append(torch_mlp_row(torch, repeats))
    print(f"{'library':8} {'workload':58} {'eager us':>9} {'replay us':>9} {'speedup':>7} {'capture ms':>10}")
    for r in rows:
        print(f"{r['library']:8} {r['workload']:58} {r['eager_us']:9.3f} {r['replay_us']:9.3f} "
              f"{r['speedup']:7.2f} {r['capture_ms']:10.3f}   (per {r['per']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Tests of the resnet example (examples/resnet/) at CI sizes on the CPU.

    loss     a short run's loss starts near ln(10) and falls well below it; the eval accuracy on
             fresh images is far above chance; the speed line is printed
    options  --channels-last, --optimizer adamw and --autocast bf16 train too
    errors   every bad flag: exit status 2 and one line on stderr naming it

usage: test_resnet.py RESNET {loss,options,errors}   (or PYTHON RESNET_PY for the Python twin)
"""
import math
import re
import subprocess
import sys

COMMAND, GROUP = sys.argv[1:-1], sys.argv[-1]
# 3x16x16 images, one block a stage, 16 images a step: a few seconds on 2 cores.
TINY = ["--image-size", "16", "--batch", "16", "--log-every", "1", "--seed", "3"]
LINE = re.compile(r"^step (\d+)/(\d+)  loss ([0-9.]+)$", re.M)
failures = []


def run(*args):
    p = subprocess.run([*COMMAND, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def train(*args):
    rc, out, err = run(*TINY, *args)
    check(rc == 0, f"{args}: exit {rc}, stderr: {err.strip()}")
    return {int(m.group(1)): float(m.group(3)) for m in LINE.finditer(out)}, out


def falls(label, steps, *args, below):
    got, out = train("--steps", str(steps), *args)
    if not check(sorted(got) == list(range(1, steps + 1)), f"{label}: expected steps 1..{steps}, got {sorted(got)}"):
        return out
    # An untrained classifier is about uniform over the 10 classes.
    check(abs(got[1] - math.log(10)) < 0.7, f"{label}: step 1's loss {got[1]:.4f} is not near ln(10)")
    last = sum(got[s] for s in range(steps - 4, steps + 1)) / 5
    check(last < below, f"{label}: the mean loss of the last 5 steps is {last:.4f}, not below {below}")
    return out


def test_loss():
    out = falls("loss", 30, below=0.5 * math.log(10))
    check(re.search(r"^trained 30 steps in [0-9.]+ s: [0-9.]+ steps/s$", out, re.M) is not None,
          "loss: no 'trained ... steps/s' line")
    m = re.search(r"^eval: accuracy ([0-9.]+) on \d+ fresh images$", out, re.M)
    if check(m is not None, "loss: no 'eval: accuracy' line"):
        check(float(m.group(1)) > 0.5, f"loss: eval accuracy {m.group(1)} is not above 0.5 (chance is 0.1)")


def test_options():
    falls("channels-last", 30, "--channels-last", below=0.5 * math.log(10))
    falls("adamw", 30, "--optimizer", "adamw", below=0.5 * math.log(10))
    falls("autocast", 30, "--autocast", "bf16", below=0.6 * math.log(10))


def test_errors():
    for args, says in [(["--steps", "0"], "--steps"), (["--batch", "-1"], "--batch"), (["--image-size", "2"], "--image-size"),
                       (["--lr", "-1"], "--lr"), (["--optimizer", "lamb"], "--optimizer"), (["--autocast", "fp8"], "--autocast"),
                       (["--device", "tpu"], "--device"), (["--device", "cuda:7"], "--device"), (["--noise", "nan"], "--noise"),
                       (["--steps", "many"], "--steps"), (["--bogus"], "bogus")]:
        rc, out, err = run(*args)
        check(rc == 2, f"errors: {args}: exit {rc}, not 2")
        lines = err.strip().splitlines()
        check(len(lines) == 1 and says in lines[0], f"errors: {args}: stderr {err.strip()!r} is not one line naming {says}")
    rc, out, _ = run("--help")
    check(rc == 0 and "--channels-last" in out, "errors: --help does not list --channels-last")


{"loss": test_loss, "options": test_options, "errors": test_errors}[GROUP]()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)

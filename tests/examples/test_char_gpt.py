#!/usr/bin/env python3
"""Tests of the char-gpt example (examples/char_gpt/) at tiny sizes on the CPU, and of the default
model on a CUDA device.

    loss     the loss of a tiny run falls well below the text's unigram entropy, which no model
             that ignores the context can beat, but not near 0, which only a model that sees the
             future reaches; its first step starts near ln(vocabulary)
    resume   N steps in one run give the same losses, bit for bit, as K steps, --save, and
             --resume for the rest (with and without activation checkpointing and dropout)
    errors   every bad flag, file and checkpoint: exit status 2 and one line on stderr
    sample   --sample N prints N characters after the prompt; greedy and tempered sampling are
             repeatable from the seed
    gpu      on cuda:0 (reported as skipped where there is none): the default model trains below a
             stated loss in fp32 and under bf16 autocast, resume is bit for bit in both, sampling
             is repeatable, --breakdown prints the host's and the device's time per phase

usage: test_char_gpt.py CHAR_GPT {loss,resume,errors,sample,gpu}
"""
import collections
import math
import os
import re
import subprocess
import sys
import tempfile

TOOL, GROUP = sys.argv[1], sys.argv[2]
TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "char_gpt", "gpl-3.0.txt")
# A model small enough for a few seconds on 2 cores.
TINY = ["--layers", "2", "--d-model", "32", "--heads", "4", "--seq", "16", "--batch", "4", "--warmup", "3"]
# The default model's run on a GPU: steps, and the mean loss of its last 20 that it must beat.
GPU_STEPS, GPU_LOSS = 400, 1.7
LINE = re.compile(r"^step (\d+)/(\d+)  loss ([0-9.]+) \[([0-9a-f]{8})\]", re.M)
failures = []


def run(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("latin-1"), p.stderr.decode("latin-1")


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def losses(out):
    """{step: (loss, its fp32 bits as hex)} of every log line."""
    return {int(m.group(1)): (float(m.group(3)), m.group(4)) for m in LINE.finditer(out)}


def train(*args):
    rc, out, err = run(*args)
    check(rc == 0, f"{args}: exit {rc}, stderr: {err.strip()}")
    return out


def test_loss():
    data = open(TEXT, "rb").read()
    counts = collections.Counter(data)
    unigram = -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())
    out = train("--steps", "200", "--batch", "16", "--seq", "32", "--layers", "2", "--d-model", "64", "--heads", "4",
                "--warmup", "20", "--lr", "3e-3", "--log-every", "1")
    got = losses(out)
    if not check(sorted(got) == list(range(1, 201)), f"loss: expected steps 1..200 logged, got {len(got)}"):
        return
    # An untrained model predicts about uniformly: the cross-entropy starts near ln(vocabulary).
    check(abs(got[1][0] - math.log(len(counts))) < 0.3,
          f"loss: step 1's loss {got[1][0]} is not near ln({len(counts)}) = {math.log(len(counts)):.3f}")
    # The unigram entropy (3.17 nats for the shipped text) is the best a model that ignores the
    # context can do; a working one gets about 2.5 here (the bigram entropy is 2.42).
    last = sum(got[s][0] for s in range(181, 201)) / 20
    check(last < unigram - 0.3,
          f"loss: the mean loss of steps 181..200 is {last:.4f}, not below the unigram entropy {unigram:.4f} - 0.3")
    # A model that sees the character it predicts (a causal mask that leaks) gets near 0 instead.
    check(last > 1.5, f"loss: the mean loss of steps 181..200 is {last:.4f}: does the model see the future?")
    check(re.search(r"^trained 200 steps in [0-9.]+ s: [0-9.]+ steps/s$", out, re.M) is not None,
          "loss: no 'trained ... steps/s' line")


def test_resume():
    with tempfile.TemporaryDirectory() as tmp:
        for extra in ([], ["--checkpointing"], ["--dropout", "0"]):
            ck = os.path.join(tmp, "ck.safetensors")
            whole = losses(train(*TINY, *extra, "--steps", "12", "--log-every", "1"))
            first = losses(train(*TINY, *extra, "--steps", "12", "--stop-after", "5", "--log-every", "1", "--save", ck))
            check(os.path.exists(ck) and os.path.exists(ck + ".train.safetensors"), f"resume {extra}: no checkpoint files")
            # The checkpoint records the options: --resume alone continues the run.
            rest = losses(train("--resume", ck, *extra[:1] if extra == ["--checkpointing"] else [], "--log-every", "1"))
            check(sorted(whole) == list(range(1, 13)), f"resume {extra}: the whole run logged steps {sorted(whole)}")
            check(sorted(first) == list(range(1, 6)), f"resume {extra}: the first part logged steps {sorted(first)}")
            check(sorted(rest) == list(range(6, 13)), f"resume {extra}: the resumed part logged steps {sorted(rest)}")
            split = {**first, **rest}
            for step in sorted(whole):
                check(split.get(step, (None, None))[1] == whole[step][1],
                      f"resume {extra}: step {step}'s loss bits {split.get(step)} differ from the whole run's {whole[step]}")
            # The losses must move, or equal bits would prove nothing.
            check(len({bits for _, bits in whole.values()}) == 12, f"resume {extra}: repeated losses {whole}")
        # Recomputing each layer in backward (dropout masks drawn again alike) changes no bit.
        plain = losses(train(*TINY, "--steps", "8", "--log-every", "1"))
        ckpt = losses(train(*TINY, "--steps", "8", "--log-every", "1", "--checkpointing"))
        check(plain == ckpt, f"resume: --checkpointing changed the losses: {plain} vs {ckpt}")
        # Training on past the recorded --steps extends the schedule.
        more = losses(train("--resume", os.path.join(tmp, "ck.safetensors"), "--steps", "15", "--log-every", "1"))
        check(sorted(more) == list(range(6, 16)), f"resume: --steps 15 logged steps {sorted(more)}")


def test_errors():
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck.safetensors")
        train(*TINY, "--steps", "4", "--save", ck)
        other = os.path.join(tmp, "other.txt")
        with open(other, "w") as f:
            f.write("abcabcabcabcabcabcabcabcabcabc")
        short = os.path.join(tmp, "short.txt")
        with open(short, "w") as f:
            f.write("abc")
        bad_ck = os.path.join(tmp, "bad.safetensors")
        with open(bad_ck, "wb") as f:
            f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
        with open(bad_ck + ".train.safetensors", "wb") as f:
            f.write(b"")
        cases = [
            (["--frobnicate"], "--frobnicate"),
            (["--steps"], "--steps"),
            (["--steps", "many"], "many"),
            (["--steps", "1e3"], "1e3"),
            (["--steps", "99999999999999999999"], "--steps"),
            (["--steps", "0"], "--steps must be positive"),
            (["--batch", "-2"], "--batch must be positive"),
            (["--seq", "0"], "--seq must be positive"),
            (["--layers", "0"], "--layers must be positive"),
            (["--d-model", "-1"], "--d-model must be positive"),
            (["--heads", "0"], "--heads must be positive"),
            (["--log-every", "0"], "--log-every must be positive"),
            (["--heads", "3"], "not divisible by --heads 3"),
            (["--lr", "0"], "--lr must be positive"),
            (["--lr", "nan"], "--lr must be finite"),
            (["--lr", "1e999"], "--lr must be finite"),
            (["--dropout", "1"], "--dropout"),
            (["--clip", "-1"], "--clip"),
            (["--temperature", "-0.5"], "--temperature"),
            (["--warmup", "10", "--steps", "10"], "--warmup 10 must be less than --steps 10"),
            (["--stop-after", "20", "--steps", "10", "--warmup", "1"], "--stop-after 20"),
            (["--sample", "-1"], "--sample"),
            (["--seed", "-1"], "--seed"),
            (["--lr", "1", "--lr", "2"], "--lr"),
            (["stray"], "stray"),
            (["--autocast", "bf16"], "CUDA only"),
            (["--sync-debug", "warn"], "--sync-debug warn runs on CUDA only"),
            (["--sync-debug", "loud"], "--sync-debug"),
            (["--autocast", "fp16", "--device", "cuda:0"], "--autocast"),
            (["--device", "tpu"], "--device 'tpu'"),
            (["--device", "meta"], "cpu or cuda"),
            (["--prompt", ""], "--prompt"),
            (["--prompt", "\u00e9"], "0xc3"),
            (["--data", os.path.join(tmp, "absent.txt")], "absent.txt"),
            (["--data", tmp], "not a readable file"),
            (["--data", short, "--seq", "8"], "--seq 8 needs a text of at least 9"),
            (["--resume", os.path.join(tmp, "absent.safetensors")], "absent.safetensors"),
            (["--resume", TEXT], ".train.safetensors"),
            (["--resume", bad_ck], "--resume"),
            (["--resume", ck, "--layers", "3"], "--layers 3 differs from the checkpoint's 2"),
            (["--resume", ck, "--data", other], "vocabulary"),
            (["--resume", ck, "--steps", "3", "--warmup", "2"], "--warmup 2 differs"),
            (["--resume", ck, "--stop-after", "2"], "past the last step 2"),
        ]
        # Where a CUDA device is present, --device cuda:0 trains; elsewhere it is refused.
        if run("--device", "cuda:0", *TINY, "--steps", "4")[0] != 0:
            cases.append((["--device", "cuda:0"], "--device cuda:0"))
        for args, needle in cases:
            rc, out, err = run(*args)
            lines = err.strip().splitlines()
            check(rc == 2, f"errors {args}: exit {rc}, expected 2 (stderr: {err.strip()})")
            check(len(lines) == 1 and lines[0].startswith("char-gpt: error: ") and needle in lines[0],
                  f"errors {args}: expected one line 'char-gpt: error: ...{needle}...', got {err.strip()!r}")
            check("step " not in out, f"errors {args}: trained before refusing: {out!r}")
        # --help is not an error.
        rc, out, _ = run("--help")
        check(rc == 0 and "--autocast" in out and "--resume" in out, f"errors: --help exit {rc}: {out!r}")


def sample_of(out):
    m = re.search(r"^--- sample: the prompt, then (\d+) characters ---\n(.*)\n--- end of sample ---\n\Z", out,
                  re.M | re.S)
    return (int(m.group(1)), m.group(2)) if m else (None, None)


def test_sample():
    for args in (["--temperature", "0"], ["--temperature", "0.8"]):
        out = train(*TINY, "--steps", "20", "--sample", "57", "--prompt", "The ", *args)
        n, text = sample_of(out)
        if not check(text is not None, f"sample {args}: no sample block in {out!r}"):
            continue
        check(n == 57, f"sample {args}: announces {n} characters")
        check(text.startswith("The ") and len(text) == len("The ") + 57,
              f"sample {args}: expected the prompt and 57 characters, got {len(text)}: {text!r}")
        alphabet = set(open(TEXT, "rb").read().decode("latin-1"))
        check(set(text) <= alphabet, f"sample {args}: characters outside the text's: {set(text) - alphabet}")
        again = sample_of(train(*TINY, "--steps", "20", "--sample", "57", "--prompt", "The ", *args))[1]
        check(again == text, f"sample {args}: a second run with the same seed sampled {again!r}, not {text!r}")
    # Without --prompt the sample starts from the text's first character; --sample 0 prints none.
    n, text = sample_of(train(*TINY, "--steps", "4", "--sample", "5"))
    check(n == 5 and text is not None and len(text) == 6, f"sample: the default prompt's sample is {text!r}")
    check("--- sample" not in train(*TINY, "--steps", "4"), "sample: a sample without --sample")


def test_gpu():
    rc, _, err = run("--device", "cuda:0", *TINY, "--steps", "4")
    if rc == 2 and "char-gpt: error: --device cuda:0: " in err:
        print(f"[anatomy-skip] no CUDA device: {err.strip()}")
        return
    if not check(rc == 0, f"gpu: a tiny run on cuda:0 exited {rc}: {err.strip()}"):
        return
    for precision in ([], ["--autocast", "bf16"]):
        cuda = ["--device", "cuda:0", *precision]
        # The default model (4 layers, d_model 256, 128 characters of context, batch 32).
        out = train(*cuda, "--steps", str(GPU_STEPS), "--log-every", "1", "--breakdown", "--sample", "200",
                    "--temperature", "0.8", "--prompt", "The ")
        got = losses(out)
        if not check(sorted(got) == list(range(1, GPU_STEPS + 1)), f"gpu {precision}: logged {len(got)} steps"):
            continue
        last = sum(got[s][0] for s in range(GPU_STEPS - 19, GPU_STEPS + 1)) / 20
        print(f"gpu {precision}: mean loss of the last 20 of {GPU_STEPS} steps {last:.4f}")
        check(last < GPU_LOSS, f"gpu {precision}: the mean loss of the last 20 steps is {last:.4f}, not below {GPU_LOSS}")
        check(last > 0.5, f"gpu {precision}: the mean loss of the last 20 steps is {last:.4f}: does the model see the future?")
        n, text = sample_of(out)
        check(n == 200 and text is not None and text.startswith("The ") and len(text) == 204,
              f"gpu {precision}: the sample is {text!r}")
        table = re.search(r"^breakdown of steps 21\.\.(\d+) \(ms per step, mean of (\d+)\):\n  phase +host +device\n"
                          r"((?:  \w+ +[0-9.]+ +[0-9.]+\n){6})", out, re.M)
        if check(table is not None, f"gpu {precision}: no breakdown table with a device column in {out[-800:]!r}"):
            check(table.group(1) == str(GPU_STEPS) and table.group(2) == str(GPU_STEPS - 20),
                  f"gpu {precision}: the breakdown covers {table.group(1)}, {table.group(2)} steps")
            rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in table.group(3).splitlines()}
            check(list(rows) == ["batch", "forward", "backward", "clip", "optimizer", "step"],
                  f"gpu {precision}: breakdown rows {list(rows)}")
            # The device time of the phases adds up to the step's, and no phase takes none.
            check(all(v[1] > 0 for v in rows.values()), f"gpu {precision}: a phase without device time: {rows}")
        # Save and resume on the device: the same loss bits as one run (dropout on).
        with tempfile.TemporaryDirectory() as tmp:
            ck = os.path.join(tmp, "ck.safetensors")
            small = [*cuda, "--steps", "12", "--warmup", "3", "--log-every", "1", "--layers", "2", "--d-model", "64", "--seq", "32"]
            whole = losses(train(*small))
            first = losses(train(*small, "--stop-after", "5", "--save", ck))
            rest = losses(train("--resume", ck, *cuda, "--log-every", "1"))
            check(sorted(whole) == list(range(1, 13)) and sorted({**first, **rest}) == list(range(1, 13)),
                  f"gpu {precision}: resume logged {sorted(first)} then {sorted(rest)}")
            for step in sorted(whole):
                got_bits = {**first, **rest}.get(step, (None, None))[1]
                check(got_bits == whole[step][1],
                      f"gpu {precision}: resume: step {step}'s loss bits {got_bits} differ from the whole run's {whole[step]}")
            again = losses(train(*small))
            check(again == whole, f"gpu {precision}: a second run's losses differ: {again} vs {whole}")


{"loss": test_loss, "resume": test_resume, "errors": test_errors, "sample": test_sample, "gpu": test_gpu}[GROUP]()
for f in failures:
    print("FAIL:", f)
print(f"{GROUP}: {'failed' if failures else 'passed'}")
sys.exit(1 if failures else 0)

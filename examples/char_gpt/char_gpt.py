#!/usr/bin/env python3
"""char_gpt.py: the char-gpt example (model.cpp, train.cpp) from Python, on anatomy.nn and
anatomy.optim: token and position embeddings, pre-norm TransformerEncoderLayers under a causal
mask, a final LayerNorm and a head; AdamW in two groups (no weight decay on biases and norms), a
cosine schedule with linear warm-up, gradient clipping; activation checkpointing per layer
(--checkpointing) and bf16 autocast on CUDA (--autocast bf16) as options. Same defaults as the C++
char-gpt, and the same computation in the same order: with the same flags it prints the same
losses, to the bit, and the same sample. It prints the loss and steps/s, and optionally a greedy or
sampled continuation.

--save PATH writes the C++ example's checkpoint (checkpoint.h): PATH, the model's state_dict with
the options, the vocabulary and the step in its metadata, and PATH.train.safetensors, AdamW's
state in the engine's flat layout ("state.<n>.exp_avg", "param_groups.<g>.lr", ...), the step and
the generators' seeds and offsets, both through anatomy.safetensors. --resume PATH continues from
such a pair, written here or by the C++ char-gpt, bit for bit.

    PYTHONPATH=build/python python examples/char_gpt/char_gpt.py --steps 300 --layers 2 \\
        --d-model 64 --heads 4 --seq 64 --batch 16 --warmup 20 --lr 3e-3 --sample 200
"""

import argparse
import math
import os
import struct
import sys
import time

import anatomy
from anatomy import nn, optim, safetensors
from anatomy.utils.checkpoint import checkpoint

DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpl-3.0.txt")
MIN_LR_RATIO = 0.1  # the rate decays to a tenth of --lr at --steps, as the C++ example's


class TextData:
    """The text's bytes, its vocabulary (the distinct bytes, sorted) and random windows."""

    def __init__(self, text):
        self.text = text
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.ids = anatomy.tensor([self.index[c] for c in text], dtype=anatomy.int64)

    def encode(self, s):
        return [self.index[c] for c in s]

    def sample(self, batch, seq, device):
        """inputs and targets [batch, seq]: windows at random starts, the targets one character on."""
        n = len(self.text)
        starts = anatomy.randint(0, n - seq, (batch, 1), dtype=anatomy.int64)
        window = starts + anatomy.arange(seq + 1, dtype=anatomy.int64)
        chars = self.ids.index_select(0, window.flatten()).view(batch, seq + 1).to(device)
        return chars.narrow(1, 0, seq), chars.narrow(1, 1, seq)


class CharGpt(nn.Module):
    def __init__(self, vocab, seq, layers, d_model, heads, dropout, checkpointing=False):
        super().__init__()
        self.seq = seq
        self.checkpointing = checkpointing
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(seq, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout, "gelu", 1e-5, batch_first=True,
                                       norm_first=True) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        # N(0, 1) embedding rows would dwarf the layers' outputs in the residual stream (GPT-2's 0.02).
        nn.init.normal_(self.tok_emb.weight, 0.0, 0.02)
        nn.init.normal_(self.pos_emb.weight, 0.0, 0.02)

    def forward(self, tokens):
        t = tokens.shape[1]
        if t > self.seq:
            raise ValueError(f"CharGpt: a context of {t} characters exceeds --seq {self.seq}")
        positions = anatomy.arange(t, dtype=anatomy.int64, device=tokens.device)
        x = self.drop(self.tok_emb(tokens) + self.pos_emb(positions))
        for block in self.blocks:
            if self.checkpointing:
                # Only the layer's input is kept; backward runs the layer again (the same dropout
                # masks, under this forward's autocast state).
                x = checkpoint(lambda h, layer=block: layer(h, is_causal=True), x)
            else:
                x = block(x, is_causal=True)
        return self.head(self.ln_f(x))


class CosineWithWarmup(optim.lr_scheduler.LRScheduler):
    """Linear warm-up, then a cosine down to MIN_LR_RATIO of each group's rate, computed as the
    C++ example's optim::CosineWithWarmup computes it (the same roundings, so the two runs agree
    to the bit)."""

    def __init__(self, optimizer, warmup, total):
        self.warmup, self.total = warmup, total
        super().__init__(optimizer)

    def get_lr(self):
        step = self.last_epoch
        if step < self.warmup:
            return [base * step / self.warmup for base in self.base_lrs]
        progress = min(1.0, (step - self.warmup) / (self.total - self.warmup))
        return [base * MIN_LR_RATIO + (base - base * MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * progress))
                for base in self.base_lrs]


def make_optimizer(model, args):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                        {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.99))


def train(model, optimizer, schedule, data, args, device, first, last):
    """Steps first..last of the schedule of args.steps."""
    # Clipped in the optimizer's order, as the C++ example clips: the joint norm's sum runs in it.
    params = [p for group in optimizer.param_groups for p in group["params"]]
    model.train()
    losses = []
    bf16 = args.autocast == "bf16"
    start = time.perf_counter()
    for step in range(first, last + 1):
        lr = optimizer.param_groups[0]["lr"]
        optimizer.zero_grad()
        inputs, targets = data.sample(args.batch, args.seq, device)
        with anatomy.autocast("cuda", anatomy.bfloat16, enabled=bf16):
            logits = model(inputs)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten()).float()
        loss.backward()  # outside the autocast region, as PyTorch advises
        grad_norm = nn.utils.clip_grad_norm_(params, args.clip) if args.clip > 0 else None
        optimizer.step()
        schedule.step()
        if step % args.log_every == 0 or step == last:
            value = loss.item()
            losses.append((step, value))
            # The loss's fp32 bits too, as the C++ char-gpt prints them, so that runs compare exactly.
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            line = f"step {step}/{args.steps}  loss {value:.6f} [{bits:08x}]  lr {lr:.4e}"
            if grad_norm is not None:
                line += f"  grad-norm {grad_norm.item():.4f}"
            print(line, flush=True)
    seconds = time.perf_counter() - start
    count = last - first + 1
    if count > 0:
        print(f"trained {count} steps in {seconds:.2f} s: {count / seconds:.2f} steps/s", flush=True)
    return losses


# ---- the checkpoint: the C++ example's two files (checkpoint.h), so either program resumes the other's ----

# The options that fix the model and its trajectory, recorded in the model file's metadata as the
# C++ char-gpt records them (flag -> value as text). A flag given with --resume must match.
RECORDED = [("--steps", "steps", int), ("--batch", "batch", int), ("--seq", "seq", int), ("--layers", "layers", int),
            ("--d-model", "d_model", int), ("--heads", "heads", int), ("--warmup", "warmup", int),
            ("--dropout", "dropout", float), ("--lr", "lr", float), ("--weight-decay", "weight_decay", float),
            ("--clip", "clip", float)]
# AdamW's options in the engine's state_dict ("param_groups.<g>.<name>", 0-d float64 tensors).
ADAMW_OPTIONS = ("lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "capturable", "foreach")


def recorded_text(value):
    """A value as the C++ example records it: fmt's shortest form ("0.001", "1e-05", "0" for 0.0)."""
    if isinstance(value, int):
        return str(value)
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def train_state_path(path):
    return path + ".train.safetensors"


def one_int64(value):
    """A uint64 as the bits of a one-element int64 tensor (safetensors' I64), as the C++ example."""
    return anatomy.tensor([struct.unpack("<q", struct.pack("<Q", value))[0]], dtype=anatomy.int64)


def uint64_of(tensors, key, path):
    t = tensors.get(key)
    if t is None or t.numel() != 1 or t.dtype != anatomy.int64:
        raise ValueError(f"{path}: expected a one-element int64 tensor '{key}'")
    return struct.unpack("<Q", struct.pack("<q", int(t.item())))[0]


def generators(device):
    """(key, get_rng_state, set_rng_state) of the generators the run draws from: the CPU's
    (batches, initialization, sampling) and on CUDA the device's (dropout)."""
    out = [("cpu", anatomy.get_rng_state, anatomy.set_rng_state)]
    if device.type == "cuda":
        out.append(("cuda", anatomy.cuda.get_rng_state, anatomy.cuda.set_rng_state))
    return out


def save_checkpoint(path, model, optimizer, args, data, step, device):
    train = {"train.step": one_int64(step)}
    state = optimizer.state_dict()
    for n, values in state["state"].items():
        train[f"state.{n}.step"] = values["step"].to(anatomy.int64)  # the engine's count: 0-d int64
        train[f"state.{n}.exp_avg"] = values["exp_avg"]
        train[f"state.{n}.exp_avg_sq"] = values["exp_avg_sq"]
    for g, group in enumerate(state["param_groups"]):
        # The engine's AdamW with foreach is this one's step: one multi-tensor update per group.
        options = {"lr": group["lr"], "beta1": group["betas"][0], "beta2": group["betas"][1], "eps": group["eps"],
                   "weight_decay": group["weight_decay"], "amsgrad": 0.0, "capturable": float(group["capturable"]),
                   "foreach": 1.0}
        for name in ADAMW_OPTIONS:
            train[f"param_groups.{g}.{name}"] = anatomy.tensor(float(options[name]), dtype=anatomy.float64)
    for key, get_state, _ in generators(device):
        seed, offset = struct.unpack("<QQ", bytes(get_state().tolist()))
        train[f"rng.{key}.seed"], train[f"rng.{key}.offset"] = one_int64(seed), one_int64(offset)
    metadata = {flag: recorded_text(getattr(args, dest)) for flag, dest, _ in RECORDED}
    metadata.update({"format": "pt", "vocab": "".join(f"{ord(c):02x}" for c in data.chars), "step": str(step)})
    # The training state first: the model file, written last, names the step of a complete pair.
    safetensors.save_file(train, train_state_path(path))
    safetensors.save_file(dict(model.state_dict()), path, metadata=metadata)


def read_checkpoint_header(path):
    """(recorded options, vocabulary, step) of a checkpoint's model file."""
    _, metadata = safetensors.load_file_with_metadata(path)
    if "vocab" not in metadata or "step" not in metadata:
        raise ValueError(f"{path}: not a char-gpt checkpoint (its metadata has no vocab or step)")
    try:
        vocab = "".join(chr(b) for b in bytes.fromhex(metadata["vocab"]))
        step = int(metadata["step"])
    except ValueError:
        raise ValueError(f"{path}: the vocabulary or the step is not readable") from None
    return {k: v for k, v in metadata.items() if k.startswith("--")}, vocab, step


def load_checkpoint(path, model, optimizer, schedule, step, device):
    """Loads the model, AdamW's state, the generators and the schedule's step; everything is read
    and checked before anything changes."""
    tensors = safetensors.load_file(path)
    train_path = train_state_path(path)
    train = safetensors.load_file(train_path)
    saved_step = uint64_of(train, "train.step", train_path)
    if saved_step != step:
        raise ValueError(f"{path} is at step {step} but {train_path} at step {saved_step}: they are not from one save")
    rng = []
    for key, _, set_state in generators(device):
        # A generator the file lacks (CUDA's, for a checkpoint saved on the CPU) keeps its seeding.
        if key != "cpu" and f"rng.{key}.seed" not in train:
            continue
        seed, offset = uint64_of(train, f"rng.{key}.seed", train_path), uint64_of(train, f"rng.{key}.offset", train_path)
        rng.append((set_state, anatomy.tensor(list(struct.pack("<QQ", seed, offset)), dtype=anatomy.uint8)))
    current = optimizer.state_dict()
    expected = {f"param_groups.{g}.{name}" for g in range(len(current["param_groups"])) for name in ADAMW_OPTIONS}
    state = {}
    for key, t in train.items():
        parts = key.split(".")
        if key in expected or key == "train.step" or parts[0] == "rng":
            continue
        if len(parts) != 3 or parts[0] != "state" or not parts[1].isdigit() or parts[2] not in (
                "step", "exp_avg", "exp_avg_sq"):
            raise ValueError(f"{train_path}: unexpected key '{key}' for AdamW")
        state.setdefault(int(parts[1]), {})[parts[2]] = t.to(anatomy.float32) if parts[2] == "step" else t
    missing = sorted(expected - set(train))
    if missing:
        raise ValueError(f"{train_path}: missing key(s) {', '.join(missing)}")
    groups = []
    for g, group in enumerate(current["param_groups"]):
        option = {name: float(train[f"param_groups.{g}.{name}"].item()) for name in ADAMW_OPTIONS}
        if option["amsgrad"] or option["capturable"]:
            raise ValueError(f"{train_path}: group {g} uses amsgrad or capturable, which this run does not")
        groups.append({**group, "lr": option["lr"], "betas": (option["beta1"], option["beta2"]), "eps": option["eps"],
                       "weight_decay": option["weight_decay"]})
    model.load_state_dict(tensors)
    optimizer.load_state_dict({"state": state, "param_groups": groups})
    for set_state, value in rng:
        set_state(value)
    schedule.last_epoch = step - 1
    schedule.step()  # the rates of the step the run resumes at


def generate(model, data, prompt, count, temperature, device):
    """count characters after prompt, greedy (temperature 0) or drawn from the softmax."""
    model.eval()
    context = data.encode(prompt)
    out = []
    with anatomy.no_grad():
        for _ in range(count):
            window = context[-model.seq:]
            tokens = anatomy.tensor([window], dtype=anatomy.int64, device=device)
            logits = model(tokens)[0, -1].float().cpu()
            if temperature == 0:
                nxt = int(logits.argmax().item())
            else:
                probs = (logits / temperature).softmax(0).tolist()
                u, total, nxt = anatomy.rand([], dtype=anatomy.float64).item(), 0.0, len(probs) - 1
                for i, p in enumerate(probs):
                    total += p
                    if u < total:
                        nxt = i
                        break
            context.append(nxt)
            out.append(data.chars[nxt])
    model.train()
    return "".join(out)


def _number(kind, check, what):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not (math.isfinite(value) and check(value)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    return parse


def parse_args(argv):
    positive = _number(int, lambda v: v > 0, "positive")
    not_negative_int = _number(int, lambda v: v >= 0, "not negative")
    not_negative = _number(float, lambda v: v >= 0, "not negative")
    p = argparse.ArgumentParser(description="trains a character-level GPT on a text file with anatomy.nn",
                                allow_abbrev=False)
    p.add_argument("--device", default="cpu", help="cpu or cuda:N")
    p.add_argument("--steps", type=positive, default=2000, help="optimizer steps: the schedule's length")
    p.add_argument("--batch", type=positive, default=32, help="windows per step")
    p.add_argument("--seq", type=positive, default=128, help="characters per window (the context)")
    p.add_argument("--layers", type=positive, default=4, help="transformer layers")
    p.add_argument("--d-model", type=positive, default=256, help="the model's width")
    p.add_argument("--heads", type=positive, default=8, help="attention heads (dividing --d-model)")
    p.add_argument("--dropout", type=_number(float, lambda v: 0 <= v < 1, "in [0, 1)"), default=0.1)
    p.add_argument("--lr", type=_number(float, lambda v: v > 0, "positive"), default=1e-3, help="peak learning rate")
    p.add_argument("--weight-decay", type=not_negative, default=0.1, help="AdamW's decay (not on biases, norms)")
    p.add_argument("--warmup", type=not_negative_int, default=100, help="linear warm-up steps before the cosine")
    p.add_argument("--clip", type=not_negative, default=1.0, help="gradient norm clipping (0: none)")
    p.add_argument("--data", default=DEFAULT_DATA, help="the training text (default: the shipped GPL-3 text)")
    p.add_argument("--sample", type=not_negative_int, default=0, help="characters to generate after training")
    p.add_argument("--prompt", default=None, help="the sample's start (default: the text's first character)")
    p.add_argument("--temperature", type=not_negative, default=0.0, help="sampling temperature (0: greedy)")
    p.add_argument("--seed", type=not_negative_int, default=1337, help="the generator's seed")
    p.add_argument("--log-every", type=positive, default=100, help="print the loss every this many steps")
    p.add_argument("--stop-after", type=not_negative_int, default=0,
                   help="stop after this step (0: at --steps), to resume later on the same schedule")
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing per layer")
    p.add_argument("--autocast", choices=["bf16"], default=None, help="bf16: autocast on CUDA")
    p.add_argument("--save", default=None, help="write a checkpoint here at the end (and <path>.train.safetensors)")
    p.add_argument("--resume", default=None, help="continue from a checkpoint written by --save (or the C++ char-gpt)")
    args = p.parse_args(argv)
    args.resumed_step = 0
    if args.resume is not None:
        adopt_recorded_options(p, args, argv)
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} is not divisible by --heads {args.heads}")
    if args.warmup >= args.steps:
        p.error(f"--warmup {args.warmup} must be less than --steps {args.steps}")
    if args.stop_after > args.steps:
        p.error(f"--stop-after {args.stop_after} is past --steps {args.steps}")
    try:
        device = anatomy.device(args.device)
    except Exception as e:  # noqa: BLE001 (any refusal of the name is a usage error)
        p.error(f"--device '{args.device}' is not a device (cpu, cuda:0, ...): {e}")
    if device.type == "cuda" and not anatomy.cuda.is_available():
        p.error(f"--device {args.device}: no CUDA device")
    if args.autocast is not None and device.type != "cuda":
        p.error(f"--autocast {args.autocast} runs on CUDA only; on the CPU the model trains in fp32")
    try:
        with open(args.data, "rb") as f:
            text = f.read().decode("latin-1")  # one character per byte, as the C++ example's
    except OSError as e:
        p.error(f"--data: {e}")
    if len(text) <= args.seq:
        p.error(f"--data: the text's {len(text)} characters are too few for windows of --seq {args.seq} + 1")
    if args.prompt is not None and (not args.prompt or any(c not in set(text) for c in args.prompt)):
        p.error("--prompt must be non-empty characters that occur in the text")
    if args.resume is not None and list(args.vocab) != sorted(set(text)):
        p.error(f"--resume: the checkpoint's vocabulary ({len(args.vocab)} characters) is not that of "
                f"'{args.data}' ({len(set(text))})")
    last = args.stop_after or args.steps
    if args.resumed_step > last:
        p.error(f"--resume: the checkpoint is at step {args.resumed_step}, past the last step {last}")
    return args, device, text, p


def adopt_recorded_options(p, args, argv):
    """A flag not given takes the checkpoint's value; one given must have it (--steps excepted)."""
    for path in (args.resume, train_state_path(args.resume)):
        if not os.path.isfile(path):
            p.error(f"--resume: no checkpoint file '{path}'")
    try:
        recorded, args.vocab, args.resumed_step = read_checkpoint_header(args.resume)
    except ValueError as e:
        p.error(f"--resume: {e}")
    given = {a.split("=", 1)[0] for a in argv if a.startswith("--")}
    for flag, dest, kind in RECORDED:
        if flag not in recorded:
            p.error(f"--resume: the checkpoint does not record {flag}")
        if flag not in given:
            try:
                setattr(args, dest, kind(recorded[flag]))
            except ValueError:
                p.error(f"--resume: the checkpoint's {flag} '{recorded[flag]}' is not a number")
        elif recorded_text(getattr(args, dest)) != recorded[flag] and flag != "--steps":
            p.error(f"--resume: {flag} {recorded_text(getattr(args, dest))} differs from the checkpoint's "
                    f"{recorded[flag]} (leave it out to continue)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args, device, text, parser = parse_args(argv)
    anatomy.manual_seed(args.seed)
    data = TextData(text)
    model = CharGpt(len(data.chars), args.seq, args.layers, args.d_model, args.heads, args.dropout,
                    args.checkpointing).to(device)
    optimizer = make_optimizer(model, args)
    schedule = CosineWithWarmup(optimizer, args.warmup, args.steps)
    if args.resume is not None:
        try:
            load_checkpoint(args.resume, model, optimizer, schedule, args.resumed_step, device)
        except (ValueError, RuntimeError, TypeError) as e:
            parser.error(f"--resume: {e}")
    n_params = sum(p.numel() for p in model.parameters())
    print(f"char_gpt.py: {len(text)} characters, vocabulary {len(data.chars)}, {n_params} parameters on {device}, "
          f"from step {args.resumed_step}")
    last = args.stop_after or args.steps
    losses = train(model, optimizer, schedule, data, args, device, args.resumed_step + 1, last)
    if args.save is not None:
        save_checkpoint(args.save, model, optimizer, args, data, last, device)
        print(f"saved {args.save} and {train_state_path(args.save)} at step {last}")
    if args.sample > 0:
        prompt = args.prompt if args.prompt is not None else text[0]
        sample = generate(model, data, prompt, args.sample, args.temperature, device)
        print(f"--- sample: the prompt, then {args.sample} characters ---\n{prompt}{sample}\n--- end of sample ---")
    return losses


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""char_gpt.py: the char-gpt example (model.cpp, train.cpp) from Python, on anatomy.nn and
anatomy.optim: token and position embeddings, pre-norm TransformerEncoderLayers under a causal
mask, a final LayerNorm and a head; AdamW in two groups (no weight decay on biases and norms), a
cosine schedule with linear warm-up, gradient clipping. Same defaults as the C++ char-gpt, and the
same computation in the same order: with the same flags it prints the same losses, to the bit, and
the same sample. It prints the loss and steps/s, and optionally a greedy or sampled continuation.

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
from anatomy import nn, optim

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
    def __init__(self, vocab, seq, layers, d_model, heads, dropout):
        super().__init__()
        self.seq = seq
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


def train(model, data, args, device):
    optimizer = make_optimizer(model, args)
    schedule = CosineWithWarmup(optimizer, args.warmup, args.steps)
    # Clipped in the optimizer's order, as the C++ example clips: the joint norm's sum runs in it.
    params = [p for group in optimizer.param_groups for p in group["params"]]
    model.train()
    losses = []
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        lr = optimizer.param_groups[0]["lr"]
        optimizer.zero_grad()
        inputs, targets = data.sample(args.batch, args.seq, device)
        logits = model(inputs)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(params, args.clip) if args.clip > 0 else None
        optimizer.step()
        schedule.step()
        if step % args.log_every == 0 or step == args.steps:
            value = loss.item()
            losses.append((step, value))
            # The loss's fp32 bits too, as the C++ char-gpt prints them, so that runs compare exactly.
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            line = f"step {step}/{args.steps}  loss {value:.6f} [{bits:08x}]  lr {lr:.4e}"
            if grad_norm is not None:
                line += f"  grad-norm {grad_norm.item():.4f}"
            print(line, flush=True)
    seconds = time.perf_counter() - start
    print(f"trained {args.steps} steps in {seconds:.2f} s: {args.steps / seconds:.2f} steps/s", flush=True)
    return losses


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
    p = argparse.ArgumentParser(description="trains a character-level GPT on a text file with anatomy.nn")
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
    args = p.parse_args(argv)
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} is not divisible by --heads {args.heads}")
    if args.warmup >= args.steps:
        p.error(f"--warmup {args.warmup} must be less than --steps {args.steps}")
    try:
        device = anatomy.device(args.device)
    except Exception as e:  # noqa: BLE001 (any refusal of the name is a usage error)
        p.error(f"--device '{args.device}' is not a device (cpu, cuda:0, ...): {e}")
    if device.type == "cuda" and not anatomy.cuda.is_available():
        p.error(f"--device {args.device}: no CUDA device")
    try:
        with open(args.data, "rb") as f:
            text = f.read().decode("latin-1")  # one character per byte, as the C++ example's
    except OSError as e:
        p.error(f"--data: {e}")
    if len(text) <= args.seq:
        p.error(f"--data: the text's {len(text)} characters are too few for windows of --seq {args.seq} + 1")
    if args.prompt is not None and (not args.prompt or any(c not in set(text) for c in args.prompt)):
        p.error("--prompt must be non-empty characters that occur in the text")
    return args, device, text


def main(argv=None):
    args, device, text = parse_args(sys.argv[1:] if argv is None else argv)
    anatomy.manual_seed(args.seed)
    data = TextData(text)
    model = CharGpt(len(data.chars), args.seq, args.layers, args.d_model, args.heads, args.dropout).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"char_gpt.py: {len(text)} characters, vocabulary {len(data.chars)}, {n_params} parameters on {device}")
    losses = train(model, data, args, device)
    if args.sample > 0:
        prompt = args.prompt if args.prompt is not None else text[0]
        sample = generate(model, data, prompt, args.sample, args.temperature, device)
        print(f"--- sample: the prompt, then {args.sample} characters ---\n{prompt}{sample}\n--- end of sample ---")
    return losses


if __name__ == "__main__":
    main()

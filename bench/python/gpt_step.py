#!/usr/bin/env python3
"""PyTorch's figure for examples/char_gpt's training step: the same model (token and position
embeddings, dropout, pre-norm TransformerEncoderLayers with GELU under a causal mask, a final
LayerNorm and a linear head), the same batch of random windows of the shipped text, AdamW in two
groups (no decay on parameters of fewer than 2 dims), the warm-up-then-cosine schedule and
gradient clipping, on CUDA, eager, in fp32 and under bf16 autocast. Prints steps per second
(host and device: the device is synchronized at the end of the timed steps), to set beside
char-gpt's own "steps/s" line from the same machine (docs/perf.md). With --breakdown, also the
host's and the device's milliseconds per step in each phase of the timed steps, as char-gpt's
--breakdown prints them (CUDA events at the phase boundaries, read after the last step).

    python bench/python/gpt_step.py [--steps N] [--batch B] [--seq T] [--layers L] [--d-model D] [--breakdown]
"""

import argparse
import math
import pathlib
import time

import torch

TEXT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "char_gpt" / "gpl-3.0.txt"


PHASES = ("batch", "forward", "backward", "clip", "optimizer")


class StepPhases:
    """The host's time in each phase (the clock at the boundaries) and the device's (timing events
    recorded at the same boundaries, not read until table(): no synchronization inside a step)."""

    def __init__(self, steps):
        self.host = [0.0] * len(PHASES)
        self.events = [[torch.cuda.Event(enable_timing=True) for _ in range(len(PHASES) + 1)] for _ in range(steps)]
        self.steps = 0

    def begin_step(self):
        self.mark, self.last = 0, time.perf_counter()
        self.events[self.steps][0].record()
        self.steps += 1

    def end_phase(self):
        now = time.perf_counter()
        self.host[self.mark] += now - self.last
        self.last = now
        self.mark += 1
        self.events[self.steps - 1][self.mark].record()

    def table(self, title):
        torch.cuda.synchronize()
        device = [sum(e[p].elapsed_time(e[p + 1]) for e in self.events[:self.steps]) for p in range(len(PHASES))]
        lines = [f"{title} (ms per step, mean of {self.steps}):", f"  {'phase':<10} {'host':>9} {'device':>9}"]
        for name, h, d in zip(PHASES + ("step",), self.host + [sum(self.host)], device + [sum(device)]):
            lines.append(f"  {name:<10} {1e3 * h / self.steps:>9.3f} {d / self.steps:>9.3f}")
        return "\n".join(lines)


class CharGpt(torch.nn.Module):
    def __init__(self, vocab, seq, d_model, heads, layers, dropout):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(vocab, d_model)
        self.pos_emb = torch.nn.Embedding(seq, d_model)
        self.drop = torch.nn.Dropout(dropout)
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout, activation="gelu",
                                             batch_first=True, norm_first=True)
            for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(d_model)
        self.head = torch.nn.Linear(d_model, vocab)
        torch.nn.init.normal_(self.tok_emb.weight, 0.0, 0.02)
        torch.nn.init.normal_(self.pos_emb.weight, 0.0, 0.02)

    def forward(self, tokens):
        t = tokens.size(1)
        x = self.drop(self.tok_emb(tokens) + self.pos_emb(torch.arange(t, device=tokens.device)))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(t, device=tokens.device)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.ln_f(x))


def run(args, autocast):
    torch.manual_seed(1337)
    data = TEXT.read_bytes()
    vocab_chars = sorted(set(data))
    index = {c: i for i, c in enumerate(vocab_chars)}
    ids = torch.tensor([index[c] for c in data], dtype=torch.int64, device="cuda")
    model = CharGpt(len(vocab_chars), args.seq, args.d_model, args.heads, args.layers, 0.1).cuda()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    warmup, total = 100, max(args.steps, 101)

    def lr_lambda(step):
        if step < warmup:
            return step / warmup
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)

    def step(phases=None):
        done = phases.end_phase if phases else lambda: None
        if phases:
            phases.begin_step()
        starts = torch.randint(0, ids.numel() - args.seq - 1, (args.batch,), device="cuda")
        offsets = starts[:, None] + torch.arange(args.seq + 1, device="cuda")[None, :]
        window = ids[offsets]
        opt.zero_grad(set_to_none=True)
        done()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            logits = model(window[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), window[:, 1:].flatten())
        done()
        loss.backward()
        done()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        done()
        opt.step()
        sched.step()
        done()
        return loss

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    phases = StepPhases(args.steps) if args.breakdown else None
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step(phases)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    print(f"torch {torch.__version__} eager{' + bf16 autocast' if autocast else ''}: {args.steps} steps in "
          f"{seconds:.2f} s: {args.steps / seconds:.2f} steps/s ({1e3 * seconds / args.steps:.2f} ms/step), "
          f"last loss {loss.item():.4f}")
    if phases:
        print(phases.table(f"breakdown of steps 21..{20 + args.steps}"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--breakdown", action="store_true", help="the host's and the device's time in each phase")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device")
        return
    run(args, autocast=False)
    run(args, autocast=True)


if __name__ == "__main__":
    main()

"""anatomy.nn and anatomy.optim on CUDA (the GPU machine): the layers against NumPy, a module
moved with to('cuda'), AdamW's fused step, the char-level GPT's loss falling; and, where torch
imports, against torch.nn and torch.optim on the same weights and inputs."""

import importlib.util
import math
import pathlib
import re
import subprocess

import numpy as np
import pytest

import anatomy
from anatomy import nn, optim
from anatomy.nn import functional as F
import nn_reference as ref
from nn_reference import arr, tensor

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _seed():
    anatomy.manual_seed(0)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_module_to_cuda_and_layers_against_numpy():
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    sd = {k: arr(v) for k, v in layer.state_dict().items()}
    layer.to("cuda")
    assert all(p.is_cuda and p.is_leaf and p.requires_grad for p in layer.parameters())
    x = anatomy.randn(2, 6, 16)
    out = layer(x.to("cuda"), is_causal=True)
    expect = ref.encoder_layer(arr(x), sd, 4, ref.gelu, True, ref.causal_mask(6))
    np.testing.assert_allclose(arr(out), expect, rtol=1e-4, atol=1e-4)
    out.sum().backward()
    assert all(p.grad is not None and p.grad.is_cuda for p in layer.parameters())
    back = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, norm_first=True)
    back.load_state_dict(layer.state_dict())  # CUDA values into CPU parameters
    np.testing.assert_array_equal(arr(back.linear1.weight), arr(layer.linear1.weight))


def test_losses_on_cuda():
    logits = np.random.default_rng(1).normal(size=(6, 5))
    target = np.array([0, 4, -100, 2, 2, 1])
    got = F.cross_entropy(tensor(logits, device="cuda"), anatomy.tensor(target.tolist(), device="cuda"),
                          label_smoothing=0.1)
    np.testing.assert_allclose(arr(got), ref.cross_entropy(logits, target, label_smoothing=0.1), rtol=1e-5)
    a, b = tensor(logits, device="cuda"), tensor(logits[::-1].copy(), device="cuda")
    np.testing.assert_allclose(arr(F.smooth_l1_loss(a, b, beta=0.5)),
                               ref.smooth_l1(logits - logits[::-1], 0.5).mean(), rtol=1e-5)


def test_adamw_and_clip_on_cuda():
    p0 = np.array([1.0, -2.0, 0.5])
    grads = [np.array([0.1, -0.3, 2.0]), np.array([-0.5, 0.2, 1.0])]
    kw = {"lr": 0.1, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.05}
    p = nn.Parameter(tensor(p0, device="cuda"))
    opt = optim.AdamW([p], **kw)
    for g in grads:
        p.grad = tensor(g, device="cuda")
        nn.utils.clip_grad_norm_([p], 100.0)
        opt.step()
    np.testing.assert_allclose(arr(p), ref.adamw_steps(p0, grads, **kw), rtol=1e-5, atol=1e-6)


def test_char_gpt_trains_on_cuda():
    spec = importlib.util.spec_from_file_location("char_gpt", ROOT / "examples" / "char_gpt" / "char_gpt.py")
    char_gpt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(char_gpt)
    losses = char_gpt.main(["--device", "cuda:0", "--steps", "120", "--layers", "2", "--d-model", "32", "--heads",
                            "2", "--seq", "32", "--batch", "16", "--warmup", "10", "--lr", "3e-3", "--log-every",
                            "10", "--dropout", "0"])
    assert sum(v for _, v in losses[-3:]) / 3 < 3.0


def _load_char_gpt():
    spec = importlib.util.spec_from_file_location("char_gpt", ROOT / "examples" / "char_gpt" / "char_gpt.py")
    char_gpt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(char_gpt)
    return char_gpt


_LINE = re.compile(r"^step (\d+)/\d+  loss [0-9.]+ \[([0-9a-f]{8})\]", re.M)
_SMALL = ["--device", "cuda:0", "--layers", "2", "--d-model", "64", "--heads", "4", "--seq", "32", "--batch", "8",
          "--warmup", "3", "--steps", "12", "--log-every", "1"]


@pytest.mark.parametrize("extra", [[], ["--autocast", "bf16"], ["--autocast", "bf16", "--checkpointing"]])
def test_char_gpt_resumes_bit_for_bit_on_cuda(tmp_path, capsys, extra):
    # Dropout on: the CUDA generator's seed and offset go through the checkpoint too.
    char_gpt = _load_char_gpt()

    def bits(*args):
        char_gpt.main([*args])
        return {int(m.group(1)): m.group(2) for m in _LINE.finditer(capsys.readouterr().out)}

    ck = str(tmp_path / "ck.safetensors")
    whole = bits(*_SMALL, *extra)
    first = bits(*_SMALL, *extra, "--stop-after", "5", "--save", ck)
    rest = bits("--resume", ck, "--device", "cuda:0", "--log-every", "1", *extra)
    assert sorted(whole) == list(range(1, 13)) and {**first, **rest} == whole
    assert len(set(whole.values())) == 12
    # The C++ char-gpt of the same build tree: the same bits, and it resumes this checkpoint.
    binary = pathlib.Path(anatomy._C.__file__).parents[2] / "examples" / "char_gpt" / "char-gpt"
    if binary.exists():
        run = subprocess.run([str(binary), "--resume", ck, "--device", "cuda:0", "--log-every", "1", *extra],
                             capture_output=True, text=True, timeout=300, check=True)
        assert {int(m.group(1)): m.group(2) for m in _LINE.finditer(run.stdout)} == rest


# ---- against PyTorch ----

def _from_torch(t, device="cpu"):
    return anatomy.tensor(t.detach().cpu().double().numpy().tolist(), dtype=anatomy.float32, device=device)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_layer_matches_torch(torch, device, norm_first):
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True,
                                              norm_first=norm_first)
    ours = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True,
                                      norm_first=norm_first).to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: _from_torch(v) for k, v in theirs.state_dict().items()})
    x = torch.randn(2, 6, 16, requires_grad=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    want = theirs(x, src_mask=mask, is_causal=True)
    xa = _from_torch(x, device).requires_grad_()
    got = ours(xa, is_causal=True)
    np.testing.assert_allclose(arr(got), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    want.pow(2).sum().backward()
    got.pow(2).sum().backward()
    np.testing.assert_allclose(arr(xa.grad), x.grad.numpy(), rtol=1e-3, atol=1e-4)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(arr(dict(ours.named_parameters())[name].grad), p.grad.numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=name)


def test_losses_match_torch(torch):
    torch.manual_seed(0)
    x, y = torch.randn(8, 5), torch.randn(8, 5)
    t = torch.tensor([0, 4, -100, 2, 2, 1, 3, 3])
    w = torch.rand(5) + 0.5
    xa, ya, ta, wa = _from_torch(x), _from_torch(y), anatomy.tensor(t.tolist()), _from_torch(w)
    for reduction in ("none", "mean", "sum"):
        pairs = [
            (F.cross_entropy(xa, ta, weight=wa, label_smoothing=0.1, reduction=reduction),
             torch.nn.functional.cross_entropy(x, t, weight=w, label_smoothing=0.1, reduction=reduction)),
            (F.nll_loss(F.log_softmax(xa, 1), ta, reduction=reduction),
             torch.nn.functional.nll_loss(x.log_softmax(1), t, reduction=reduction)),
            (F.mse_loss(xa, ya, reduction=reduction), torch.nn.functional.mse_loss(x, y, reduction=reduction)),
            (F.l1_loss(xa, ya, reduction=reduction), torch.nn.functional.l1_loss(x, y, reduction=reduction)),
            (F.smooth_l1_loss(xa, ya, reduction=reduction, beta=0.7),
             torch.nn.functional.smooth_l1_loss(x, y, reduction=reduction, beta=0.7)),
            (F.binary_cross_entropy_with_logits(xa, (ya > 0).float(), pos_weight=wa, reduction=reduction),
             torch.nn.functional.binary_cross_entropy_with_logits(x, (y > 0).float(), pos_weight=w,
                                                                  reduction=reduction)),
        ]
        for ours, theirs in pairs:
            np.testing.assert_allclose(arr(ours), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["AdamW", "SGD"])
def test_optimizers_match_torch(torch, name):
    torch.manual_seed(0)
    p_t = torch.nn.Parameter(torch.randn(4, 3))
    p_a = nn.Parameter(_from_torch(p_t))
    kw = ({"lr": 0.05, "betas": (0.9, 0.99), "weight_decay": 0.1} if name == "AdamW"
          else {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01})
    opt_t, opt_a = getattr(torch.optim, name)([p_t], **kw), getattr(optim, name)([p_a], **kw)
    sched_t = torch.optim.lr_scheduler.LambdaLR(opt_t, lambda e: 1 / (1 + e))
    sched_a = optim.lr_scheduler.LambdaLR(opt_a, lambda e: 1 / (1 + e))
    for _ in range(5):
        g = torch.randn(4, 3)
        p_t.grad, p_a.grad = g.clone(), _from_torch(g)
        torch.nn.utils.clip_grad_norm_([p_t], 1.0)
        nn.utils.clip_grad_norm_([p_a], 1.0)
        opt_t.step()
        opt_a.step()
        sched_t.step()
        sched_a.step()
    np.testing.assert_allclose(arr(p_a), p_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert sched_a.get_last_lr() == pytest.approx(sched_t.get_last_lr())


def test_repr_and_init_bounds_match_torch(torch):
    ours = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Dropout(0.1), nn.LayerNorm(4), nn.Embedding(5, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.Dropout(0.1),
                                 torch.nn.LayerNorm(4), torch.nn.Embedding(5, 2))
    assert repr(ours) == repr(theirs)
    lin_a, lin_t = nn.Linear(300, 200), torch.nn.Linear(300, 200)
    assert abs(arr(lin_a.weight).std() - lin_t.weight.detach().std().item()) < 0.002
    bound = 1 / math.sqrt(300)  # both biases from U(-bound, bound)
    for top in (np.abs(arr(lin_a.bias)).max(), lin_t.bias.detach().abs().max().item()):
        assert 0.95 * bound < top <= bound

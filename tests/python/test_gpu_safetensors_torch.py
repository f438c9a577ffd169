"""The safetensors exchange with PyTorch, on the GPU machine where torch and the safetensors
package are installed (docs/nn.md, "Checkpoints"):

- a torch.nn model (Embedding, pre-norm TransformerEncoderLayers under a causal mask, LayerNorm, a
  Linear head) saved with safetensors.torch.save_file loads into the anatomy.nn model of the same
  modules with load_state_dict (strict) and gives the same outputs on the same tokens, on the CPU
  and on CUDA;
- the other way: the anatomy.nn model's state_dict saved with anatomy.safetensors loads into the
  torch model (strict) and gives the same outputs;
- a checkpoint the C++ char-gpt writes with Module::save loads into the torch twin of its model
  (bench/python/gpt_step.py's CharGpt) with no missing or unexpected key and gives the logits that
  the same model in anatomy.nn (examples/char_gpt/char_gpt.py, the C++ computation to the bit)
  gives.

The CPU exchange with the format's reference writer and reader, without torch, is
test_safetensors_reference.py."""

import importlib.util
import pathlib
import subprocess

import numpy as np
import pytest

import anatomy
from anatomy import nn, safetensors

torch = pytest.importorskip("torch")
st_torch = pytest.importorskip("safetensors.torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
VOCAB, D_MODEL, HEADS, LAYERS, FF, SEQ = 50, 32, 4, 2, 64, 12
# fp32 on both sides (anatomy's TF32 switch is off by default, as torch's): the differences are
# the order of the sums.
TOLERANCE = {"cpu": dict(rtol=1e-4, atol=1e-5), "cuda": dict(rtol=1e-3, atol=1e-4)}
# torch's TransformerEncoderLayer in eval mode without grad takes its fused "fast path" kernels,
# which on CUDA left 20 of 1,800 logits up to 3.4e-4 from anatomy's (H100); the reference is its
# plain path, the modules' own code.
torch.backends.mha.set_fastpath_enabled(False)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D_MODEL)
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.1, activation="gelu", batch_first=True,
                                             norm_first=True) for _ in range(LAYERS))
        self.norm = torch.nn.LayerNorm(D_MODEL)
        self.head = torch.nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        x = self.emb(tokens)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=tokens.device)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


class AnatomyNet(nn.Module):
    """TorchNet in anatomy.nn: the same modules under the same names."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.1, activation="gelu", batch_first=True,
                                       norm_first=True) for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        x = self.emb(tokens)
        for block in self.blocks:
            x = block(x, is_causal=True)
        return self.head(self.norm(x))


def tokens(seed, batch=3, seq=SEQ, vocab=VOCAB):
    return torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(seed))


def anatomy_outputs(model, toks, device):
    with anatomy.no_grad():
        out = model(anatomy.tensor(toks.tolist(), dtype=anatomy.int64, device=device))
    return np.asarray(out.cpu().numpy())


def torch_outputs(model, toks, device):
    with torch.no_grad():
        return model(toks.to(device)).cpu().numpy()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_torch_model_saved_by_safetensors_torch_runs_in_anatomy_nn(tmp_path, device):
    torch.manual_seed(0)
    theirs = TorchNet().eval()
    # Non-default values everywhere, so that a tensor loaded under the wrong key shows.
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    path = tmp_path / "torch.safetensors"
    st_torch.save_file(theirs.state_dict(), str(path))
    ours = AnatomyNet().eval()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    result = ours.load_state_dict(safetensors.load_file(path, device=device))
    assert result.missing_keys == [] and result.unexpected_keys == []
    ours.to(device)
    for seed in range(3):
        toks = tokens(seed)
        np.testing.assert_allclose(anatomy_outputs(ours, toks, device), torch_outputs(theirs.to(device), toks, device),
                                   **TOLERANCE[device])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_anatomy_nn_model_saved_by_anatomy_runs_in_torch(tmp_path, device):
    anatomy.manual_seed(0)
    ours = AnatomyNet().to(device).eval()
    with anatomy.no_grad():
        for p in ours.parameters():
            p.add_(anatomy.randn(*p.shape, device=device) * 0.1)
    path = tmp_path / "anatomy.safetensors"
    safetensors.save_file(dict(ours.state_dict()), path)
    theirs = TorchNet().eval()
    result = theirs.load_state_dict(st_torch.load_file(str(path)), strict=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    theirs.to(device)
    for seed in range(3):
        toks = tokens(seed)
        np.testing.assert_allclose(torch_outputs(theirs, toks, device), anatomy_outputs(ours, toks, device),
                                   **TOLERANCE[device])


def test_char_gpt_checkpoint_of_module_save_loads_into_the_torch_twin(tmp_path):
    binary = pathlib.Path(anatomy._C.__file__).parents[2] / "examples" / "char_gpt" / "char-gpt"
    if not binary.exists():
        pytest.skip(f"the C++ example is not built ({binary})")
    ck = tmp_path / "ck.safetensors"
    layers, d_model, heads, seq = 2, 32, 4, 16
    subprocess.run([str(binary), "--layers", str(layers), "--d-model", str(d_model), "--heads", str(heads), "--seq",
                    str(seq), "--batch", "4", "--warmup", "3", "--steps", "6", "--save", str(ck)],
                   check=True, capture_output=True, timeout=300)
    state = st_torch.load_file(str(ck))
    vocab = state["head.weight"].shape[0]
    twin = load_module(ROOT / "bench" / "python" / "gpt_step.py", "gpt_step").CharGpt(vocab, seq, d_model, heads,
                                                                                      layers, 0.1)
    result = twin.load_state_dict(state, strict=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    twin.eval()
    # The same file in anatomy.nn's CharGpt, which computes what the C++ model computes.
    char_gpt = load_module(ROOT / "examples" / "char_gpt" / "char_gpt.py", "char_gpt")
    ours = char_gpt.CharGpt(vocab, seq, layers, d_model, heads, 0.1)
    ours.load_state_dict(safetensors.load_file(ck))
    ours.eval()
    for seed in range(3):
        toks = tokens(seed, batch=2, seq=seq, vocab=vocab)
        np.testing.assert_allclose(torch_outputs(twin, toks, "cpu"), anatomy_outputs(ours, toks, "cpu"),
                                   **TOLERANCE["cpu"])


def test_every_dtype_both_ways_with_safetensors_torch(tmp_path):
    names = ["bool", "uint8", "int8", "float16", "bfloat16", "int32", "float32", "float64", "int64"]
    g = torch.Generator().manual_seed(3)
    theirs = {n: (torch.randn(3, 4, generator=g) * 50).to(getattr(torch, n)) for n in names}
    path = tmp_path / "torch.safetensors"
    st_torch.save_file(theirs, str(path))
    for device in ("cpu", "cuda"):
        loaded = safetensors.load_file(path, device=device)
        for n in names:
            assert loaded[n].dtype == getattr(anatomy, n) and loaded[n].device.type == device, n
            assert loaded[n].cpu().tolist() == theirs[n].tolist(), n
        # Saved from the device, read by safetensors.torch: the same values and dtypes.
        back_path = tmp_path / f"anatomy-{device}.safetensors"
        safetensors.save_file(loaded, back_path)
        back = st_torch.load_file(str(back_path))
        for n in names:
            assert back[n].dtype == theirs[n].dtype and torch.equal(back[n], theirs[n]), n

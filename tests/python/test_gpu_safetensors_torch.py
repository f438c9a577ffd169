"""The safetensors exchange with PyTorch, on the GPU machine where torch and the
safetensors package are installed: a model's state_dict saved by safetensors.torch loads in
anatomy and gives the same outputs on the same input (on CUDA and the CPU), and one saved by
anatomy loads in PyTorch with the same values."""

import numpy as np
import pytest

import anatomy
from anatomy import safetensors

torch = pytest.importorskip("torch")
st_torch = pytest.importorskip("safetensors.torch")

A = anatomy.ops.aten


def as_numpy(t):
    return np.asarray(t.float().cpu().numpy()) if isinstance(t, torch.Tensor) else np.asarray(t.to(anatomy.float32).cpu().numpy())


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_pytorch_state_dict_loads_and_gives_the_same_outputs(tmp_path, device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 8))
    path = tmp_path / "model.safetensors"
    st_torch.save_file(model.state_dict(), str(path))
    x = torch.randn(5, 16)
    want = model(x).detach().numpy()
    sd = safetensors.load_file(path, device=device)
    assert set(sd) == set(model.state_dict())
    h = anatomy.from_dlpack(x.contiguous()).to(device)
    h = A.linear(h, sd["0.weight"], sd["0.bias"])
    h = A.gelu(h)
    h = A.layer_norm(h, [32], sd["2.weight"], sd["2.bias"], 1e-5)
    h = A.linear(h, sd["3.weight"], sd["3.bias"])
    np.testing.assert_allclose(as_numpy(h), want, rtol=1e-4, atol=1e-5)


def test_anatomy_file_loads_in_pytorch(tmp_path):
    tensors = {
        "w": anatomy.randn(3, 4),
        "h": anatomy.randn(7).to(anatomy.bfloat16),
        "i": anatomy.arange(5),
        "c": anatomy.randn(2, 2, device="cuda"),
    }
    path = tmp_path / "a.safetensors"
    safetensors.save_file(tensors, path, metadata={"source": "anatomy"})
    back = st_torch.load_file(str(path))
    for name, t in tensors.items():
        assert back[name].dtype == {"w": torch.float32, "h": torch.bfloat16, "i": torch.int64, "c": torch.float32}[name]
        np.testing.assert_array_equal(as_numpy(back[name]), as_numpy(t))

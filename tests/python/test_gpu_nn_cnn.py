"""anatomy.nn's CNN layers on CUDA (the GPU machine) against torch.nn on the same weights and
inputs, on torch's CUDA device: outputs, input and parameter gradients, BatchNorm's running
statistics in training and its eval output, channels_last inputs; and the resnet example's loss
falling on CUDA."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

import anatomy
from anatomy import nn
from nn_reference import arr

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


def _from_torch(t, device="cuda"):
    return anatomy.tensor(t.detach().cpu().double().numpy().tolist(), dtype=anatomy.float32, device=device)


LAYERS = [
    ("Conv2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2}, (2, 4, 9, 9)),
    ("Conv2d", (4, 6, (3, 2)), {"padding": "same", "dilation": 2}, (2, 4, 8, 7)),
    ("Conv1d", (3, 5, 5), {"stride": 2, "padding": 1}, (2, 3, 17)),
    ("ConvTranspose2d", (4, 6, 4), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 5, 6)),
    ("BatchNorm2d", (4,), {}, (3, 4, 5, 5)),
    ("BatchNorm1d", (4,), {"momentum": None}, (6, 4, 3)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5, 5)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9, 8)),
    ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 8)),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, (2, 3, 4, 5)),
    ("Upsample", (), {"size": (7, 9), "mode": "bilinear", "align_corners": False}, (2, 3, 4, 5)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bilinear", "align_corners": True}, (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS)
@pytest.mark.parametrize("channels_last", [False, True])
def test_layer_matches_torch(torch, name, args, kwargs, shape, channels_last):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).cuda()
    ours = getattr(nn, name)(*args, **kwargs).to("cuda")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    # The floating state (num_batches_tracked is 0 in both).
    ours.load_state_dict({k: _from_torch(v) for k, v in theirs.state_dict().items() if v.is_floating_point()},
                         strict=False)
    x = torch.randn(*shape, device="cuda", requires_grad=True)
    xa = _from_torch(x).requires_grad_()
    if channels_last and len(shape) == 4:
        xa = xa.detach().contiguous(memory_format=anatomy.channels_last).requires_grad_()
    want, got = theirs(x), ours(xa)
    np.testing.assert_allclose(arr(got), want.detach().cpu().numpy(), rtol=1e-4, atol=1e-4)
    grad = torch.randn_like(want)
    want.backward(grad)
    got.backward(_from_torch(grad))
    np.testing.assert_allclose(arr(xa.grad), x.grad.cpu().numpy(), rtol=1e-3, atol=1e-4)
    for pname, p in theirs.named_parameters():
        np.testing.assert_allclose(arr(dict(ours.named_parameters())[pname].grad), p.grad.cpu().numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=pname)
    for bname, b in theirs.named_buffers():
        np.testing.assert_allclose(arr(dict(ours.named_buffers())[bname]), b.cpu().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=bname)
    if name.startswith("BatchNorm"):
        theirs.eval()
        ours.eval()
        np.testing.assert_allclose(arr(ours(xa)), theirs(x).detach().cpu().numpy(), rtol=1e-4, atol=1e-4)


def test_resnet_example_trains_on_cuda():
    spec = importlib.util.spec_from_file_location("resnet", ROOT / "examples" / "resnet" / "resnet.py")
    resnet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(resnet)
    losses, accuracy = resnet.main(["--device", "cuda", "--channels-last", "--steps", "60", "--batch", "32",
                                    "--image-size", "32", "--log-every", "1"])
    assert sum(v for _, v in losses[-5:]) / 5 < 0.5 * math.log(10), losses
    assert accuracy > 0.5

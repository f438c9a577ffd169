"""anatomy.Tensor on a CUDA device (skipped without one): factories with device=, to()/cuda()/
cpu() round trips, operators and reductions against NumPy, indexing, autograd on the device."""

import numpy as np
import pytest

import anatomy
from tensor_reference import assert_matches, to_numpy


def test_round_trip_and_device_properties():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = anatomy.tensor(a, device="cuda")
    assert t.is_cuda and t.device.type == "cuda"
    assert_matches(t.cpu(), a)
    assert anatomy.tensor(a).cuda().is_cuda
    assert anatomy.tensor(a).to("cuda:0", anatomy.float64).dtype == anatomy.float64
    assert t.to("cpu").device.type == "cpu"
    assert t.tolist() == a.tolist()


def test_operators_reductions_and_indexing_on_the_device():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 5)).astype(np.float32)
    b = rng.normal(size=(5,)).astype(np.float32)
    ta, tb = anatomy.tensor(a, device="cuda"), anatomy.tensor(b, device="cuda")
    assert_matches(ta + tb * 2 - 1, a + b * 2 - 1, rtol=1e-5)
    assert_matches(ta @ tb, a @ b, rtol=1e-4, atol=1e-5)
    assert_matches(ta.sum(1), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert_matches(ta.max(0).indices, a.argmax(axis=0))
    assert_matches(ta[ta > 0], a[a > 0])
    assert_matches(ta[[0, 2], 1:], a[[0, 2], 1:])
    alias = ta
    ta += 1
    assert ta is alias
    ta[:, 0] = 0
    a = a + 1
    a[:, 0] = 0
    assert_matches(ta, a, rtol=1e-6)
    with pytest.raises((RuntimeError, ValueError)):
        ta + anatomy.ones(5)  # a CPU tensor of one dim is not a scalar


def test_autograd_on_the_device():
    x = anatomy.tensor([0.5, 1.5], device="cuda", requires_grad=True)
    (x.exp() * x).sum().backward()
    v = np.array([0.5, 1.5])
    np.testing.assert_allclose(to_numpy(x.grad), np.exp(v) * (1 + v), rtol=1e-5)
    assert x.grad.is_cuda

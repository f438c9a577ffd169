"""Memory formats from Python: anatomy.channels_last / channels_last_3d, Tensor.is_contiguous,
contiguous, clone and to with memory_format=, and the layouts operators give their results,
checked against the strides PyTorch gives (written out here) and the values against NumPy."""

import numpy as np
import pytest

import anatomy
from anatomy import nn

NCHW = (60, 20, 5, 1)
NHWC = (60, 1, 15, 3)


def image():
    a = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) / 7
    return a, anatomy.tensor(a)


def test_formats_are_exported():
    assert anatomy.channels_last == anatomy.memory_format.channels_last
    assert anatomy.channels_last_3d == anatomy.memory_format.channels_last_3d
    assert anatomy.contiguous_format != anatomy.channels_last_3d


def test_contiguous_and_is_contiguous():
    a, t = image()
    cl = t.contiguous(memory_format=anatomy.channels_last)
    assert cl.stride() == NHWC and cl.shape == (2, 3, 4, 5)
    assert cl.is_contiguous(memory_format=anatomy.channels_last) and not cl.is_contiguous()
    with pytest.raises(TypeError):  # keyword-only, as in PyTorch
        cl.is_contiguous(anatomy.channels_last)
    np.testing.assert_array_equal(cl.numpy(), a)
    assert cl.contiguous().stride() == NCHW
    with pytest.raises(TypeError):
        t.contiguous(anatomy.channels_last)
    with pytest.raises(ValueError, match="contiguous: channels_last needs a 4-D shape"):
        anatomy.zeros(2, 3).contiguous(memory_format=anatomy.channels_last)


def test_channels_last_3d():
    t = anatomy.zeros(2, 3, 4, 5, 6)
    c = t.contiguous(memory_format=anatomy.channels_last_3d)
    assert c.stride() == (360, 1, 90, 18, 3)
    assert c.is_contiguous(memory_format=anatomy.channels_last_3d)
    assert not c.is_contiguous(memory_format=anatomy.channels_last)
    assert t.to(memory_format=anatomy.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    with pytest.raises(ValueError, match="to: channels_last_3d needs a 5-D shape"):
        anatomy.zeros(2, 3, 4, 5).to(memory_format=anatomy.channels_last_3d)


def test_to_memory_format():
    a, t = image()
    cl = t.to(memory_format=anatomy.channels_last)
    assert cl.stride() == NHWC
    np.testing.assert_array_equal(cl.numpy(), a)
    # Nothing to change: the same tensor (the same memory), as PyTorch's to.
    assert cl.to(memory_format=anatomy.channels_last).data_ptr() == cl.data_ptr()
    assert t.to(memory_format=anatomy.contiguous_format).data_ptr() == t.data_ptr()
    assert t.to(memory_format=None).data_ptr() == t.data_ptr()
    assert cl.to(memory_format=anatomy.contiguous_format).data_ptr() != cl.data_ptr()
    # With a dtype: cast and laid out in one copy; to(dtype) alone keeps channels_last.
    d = t.to(anatomy.float64, memory_format=anatomy.channels_last)
    assert d.dtype == anatomy.float64 and d.stride() == NHWC
    assert cl.to(anatomy.float16).stride() == NHWC
    assert cl.to(dtype=anatomy.float64, memory_format=anatomy.contiguous_format).stride() == NCHW
    assert cl.to("cpu", copy=True).stride() == NHWC
    with pytest.raises(TypeError, match="memory_format"):
        t.to(memory_format="channels_last")


def test_empty_memory_format():
    assert anatomy.empty(2, 3, 4, 5, memory_format=anatomy.channels_last).stride() == NHWC
    assert anatomy.empty((2, 3, 4, 5, 6), memory_format=anatomy.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    assert anatomy.empty(2, 3, 4, 5).stride() == NCHW
    cl = anatomy.empty(2, 3, 4, 5, memory_format=anatomy.channels_last, requires_grad=True)
    assert cl.requires_grad
    assert anatomy.empty_like(cl).stride() == NHWC  # preserve_format
    assert anatomy.empty_like(cl, memory_format=anatomy.contiguous_format).stride() == NCHW
    assert anatomy.empty_like(cl, dtype=anatomy.float16).stride() == NHWC
    with pytest.raises(ValueError, match="channels_last"):
        anatomy.empty(2, 3, memory_format=anatomy.channels_last)


def test_clone_memory_format():
    _, t = image()
    cl = t.contiguous(memory_format=anatomy.channels_last)
    assert cl.clone().stride() == NHWC
    assert cl.clone(memory_format=anatomy.contiguous_format).stride() == NCHW
    assert t.clone(memory_format=anatomy.channels_last).stride() == NHWC
    assert anatomy.clone(t, memory_format=anatomy.channels_last).stride() == NHWC


def test_operators_keep_channels_last():
    a, t = image()
    cl = t.contiguous(memory_format=anatomy.channels_last)
    bias = anatomy.tensor([0.5, -1.0, 2.0]).view(3, 1, 1)
    assert (cl + t).stride() == NHWC and (t + cl).stride() == NCHW
    assert (bias + cl).stride() == NHWC and (cl * 2).stride() == NHWC
    assert cl.exp().stride() == NHWC and cl.relu().stride() == NHWC
    np.testing.assert_allclose((bias + cl).numpy(), a + np.array([0.5, -1.0, 2.0], np.float32).reshape(3, 1, 1))
    # softmax and keepdim reductions come back row-major, as PyTorch's.
    assert cl.softmax(1).stride() == NCHW
    m = cl.mean((2, 3), keepdim=True)
    assert m.shape == (2, 3, 1, 1) and m.stride() == (3, 1, 1, 1)
    np.testing.assert_allclose(m.numpy(), a.mean(axis=(2, 3), keepdims=True), rtol=1e-6)


def test_gradient_of_a_channels_last_leaf():
    a, t = image()
    x = t.contiguous(memory_format=anatomy.channels_last).requires_grad_()
    (x * x).sum().backward()
    assert x.grad.stride() == NHWC
    np.testing.assert_allclose(x.grad.numpy(), 2 * a, rtol=1e-6)


def test_module_to_memory_format():
    # As PyTorch's Module.to: the 4-D and 5-D parameters (conv weights) take the format, the
    # others stay as they are.
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(anatomy.ones(4, 3, 2, 2))
            self.bias = nn.Parameter(anatomy.zeros(4))

    block = Block().to(memory_format=anatomy.channels_last)
    assert block.weight.stride() == (12, 1, 6, 3) and block.weight.requires_grad
    assert block.bias.stride() == (1,)
    assert Block().to(anatomy.float64, memory_format=anatomy.channels_last).weight.dtype == anatomy.float64
    with pytest.raises(TypeError, match="memory_format"):
        Block().to(memory_format="channels_last")

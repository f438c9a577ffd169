"""Autograd from Python: gradients of small expressions against their analytic forms,
requires_grad, .grad, grad_fn, is_leaf, retain_grad, autograd.grad, and the grad mode switches
(no_grad, enable_grad, set_grad_enabled, inference_mode) as context managers and decorators."""

import numpy as np
import pytest

import anatomy
from tensor_reference import assert_matches, to_numpy


def test_gradient_of_an_expression_matches_the_analytic_one():
    xv = np.array([0.5, -1.0, 2.0], dtype=np.float64)
    wv = np.array([1.5, 0.25, -0.75], dtype=np.float64)
    x = anatomy.tensor(xv, requires_grad=True)
    w = anatomy.tensor(wv).requires_grad_()
    y = (x * w).sum() + (x ** 2).mean() + x.exp().sum() + (w.sigmoid() * x).sum()
    assert y.grad_fn is not None and not y.is_leaf and x.is_leaf
    y.backward()
    sig = 1 / (1 + np.exp(-wv))
    assert_matches(x.grad, wv + 2 * xv / 3 + np.exp(xv) + sig)
    assert_matches(w.grad, xv + sig * (1 - sig) * xv)
    # a second backward through a rebuilt graph accumulates
    (x * 3).sum().backward()
    assert_matches(x.grad, wv + 2 * xv / 3 + np.exp(xv) + sig + 3)


def test_matmul_softmax_gradient_and_gradient_argument():
    a = np.random.default_rng(0).normal(size=(2, 3))
    b = np.random.default_rng(1).normal(size=(3, 4))
    ta = anatomy.tensor(a, requires_grad=True)
    tb = anatomy.tensor(b, requires_grad=True)
    out = ta @ tb
    g = np.ones((2, 4)) * 0.5
    out.backward(anatomy.tensor(g))
    assert_matches(ta.grad, g @ b.T)
    assert_matches(tb.grad, a.T @ g)


def test_grad_property_and_grad_fn():
    x = anatomy.ones(2, requires_grad=True)
    assert x.grad is None and x.grad_fn is None and x.requires_grad
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    assert "MulBackward0" in repr(y.grad_fn)
    nxt = y.grad_fn.next_functions
    assert nxt[0][0].name() == "AccumulateGrad"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = anatomy.zeros(2)
    assert x.grad.tolist() == [0.0, 0.0]
    x.grad = None
    assert x.grad is None
    x.requires_grad = False
    assert not x.requires_grad and not (x * 2).requires_grad


def test_retain_grad_and_detach():
    x = anatomy.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    assert h.retains_grad
    (h * 3).sum().backward()
    assert h.grad.tolist() == [3.0, 3.0]
    d = h.detach()
    assert not d.requires_grad and d.is_leaf and d.data_ptr() == h.data_ptr()


def test_backward_of_non_scalar_needs_gradient():
    x = anatomy.ones(3, requires_grad=True)
    with pytest.raises((RuntimeError, ValueError)):
        (x * 2).backward()
    with pytest.raises((RuntimeError, ValueError)):
        anatomy.ones(3).sum().backward()  # nothing requires grad


def test_retain_graph():
    x = anatomy.tensor(2.0, requires_grad=True)
    y = x.exp() * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(2 * (np.exp(2) * 2 + np.exp(2)))


def test_autograd_grad():
    x = anatomy.tensor([1.0, 2.0], requires_grad=True)
    z = anatomy.tensor([3.0], requires_grad=True)
    y = (x ** 3).sum()
    (gx,) = anatomy.autograd.grad(y, x, create_graph=True)
    assert gx.tolist() == [3.0, 12.0] and x.grad is None
    (gxx,) = anatomy.autograd.grad(gx.sum(), [x])
    assert gxx.tolist() == [6.0, 12.0]
    with pytest.raises((RuntimeError, ValueError)):
        anatomy.autograd.grad((x * 2).sum(), [x, z])
    gx2, gz = anatomy.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gx2.tolist() == [2.0, 2.0] and gz is None
    anatomy.autograd.backward([(x * 2).sum()])
    assert x.grad.tolist() == [2.0, 2.0]


def test_no_grad_enable_grad_set_grad_enabled():
    x = anatomy.ones(2, requires_grad=True)
    assert anatomy.is_grad_enabled()
    with anatomy.no_grad():
        assert not anatomy.is_grad_enabled()
        y = x * 2
        with anatomy.enable_grad():
            assert (x * 2).requires_grad
        assert not anatomy.is_grad_enabled()
    assert anatomy.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @anatomy.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and anatomy.is_grad_enabled()
    anatomy.set_grad_enabled(False)
    assert not anatomy.is_grad_enabled()
    anatomy.set_grad_enabled(True)
    with anatomy.set_grad_enabled(False):
        assert not (x * 1).requires_grad
    assert anatomy.is_grad_enabled()


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with anatomy.no_grad():
            1 / 0
    assert anatomy.is_grad_enabled()


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = anatomy.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="leaf tensor that requires grad"):  # PyTorch: RuntimeError
        x += 1
    assert x.tolist() == [1.0, 1.0]
    with anatomy.no_grad():
        x += 1  # allowed, as in PyTorch (an optimizer step)
    assert x.tolist() == [2.0, 2.0] and x.requires_grad


def test_inference_mode():
    x = anatomy.ones(2, requires_grad=True)
    with anatomy.inference_mode():
        assert anatomy.is_inference_mode_enabled() and not anatomy.is_grad_enabled()
        y = x * 2
        with anatomy.inference_mode(False):
            assert not anatomy.is_inference_mode_enabled()
    assert not anatomy.is_inference_mode_enabled() and anatomy.is_grad_enabled()
    assert y.is_inference and not y.requires_grad and not x.is_inference

    @anatomy.inference_mode()
    def g(t):
        return t + 1

    assert g(x).is_inference


def test_requires_grad_on_integer_tensor_is_refused():
    with pytest.raises((RuntimeError, TypeError)):
        anatomy.ones(2, dtype=anatomy.int64).requires_grad_()
    with pytest.raises((RuntimeError, TypeError)):
        anatomy.tensor([1, 2], requires_grad=True)
    assert to_numpy(anatomy.tensor([1.0], requires_grad=True)).tolist() == [1.0]

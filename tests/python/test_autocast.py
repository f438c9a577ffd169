"""anatomy.autocast (as torch.autocast) on the CPU: inside the region the matrix products run in
the lower precision and the reductions in fp32, outside nothing changes; regions nest, restore
the state they found (also on an exception), work as decorators, and bad arguments are refused
when the object is made. Gradients reach fp32 parameters in fp32."""

import pytest

import anatomy


def test_matmul_runs_in_bf16_inside_and_fp32_outside():
    a, b = anatomy.randn(4, 8), anatomy.randn(8, 3)
    assert not anatomy.is_autocast_enabled("cpu")
    with anatomy.autocast("cpu", dtype=anatomy.bfloat16):
        assert anatomy.is_autocast_enabled("cpu") and not anatomy.is_autocast_enabled("cuda")
        assert anatomy.get_autocast_dtype("cpu") == anatomy.bfloat16
        y = a @ b
        assert y.dtype == anatomy.bfloat16
        # A reduction's policy is fp32.
        assert y.softmax(-1).dtype == anatomy.float32
        # The same value as the product of the rounded inputs.
        want = (a.to(anatomy.bfloat16) @ b.to(anatomy.bfloat16))
    assert anatomy.equal(y, want)
    assert not anatomy.is_autocast_enabled("cpu")
    assert (a @ b).dtype == anatomy.float32


def test_nesting_disabling_and_restoring():
    a = anatomy.randn(3, 3)
    with anatomy.autocast("cpu", anatomy.bfloat16):
        with anatomy.autocast("cpu", enabled=False):
            assert not anatomy.is_autocast_enabled("cpu")
            assert (a @ a).dtype == anatomy.float32
        assert (a @ a).dtype == anatomy.bfloat16
        with pytest.raises(RuntimeError, match="inside"):
            with anatomy.autocast("cpu", anatomy.float16):
                assert anatomy.get_autocast_dtype("cpu") == anatomy.float16
                raise RuntimeError("inside")
        assert anatomy.get_autocast_dtype("cpu") == anatomy.bfloat16
    assert not anatomy.is_autocast_enabled("cpu")
    # One object entered twice, nested: each exit undoes its own entry.
    region = anatomy.autocast("cpu", anatomy.bfloat16)
    with region:
        with region:
            assert anatomy.is_autocast_enabled("cpu")
        assert anatomy.is_autocast_enabled("cpu")
    assert not anatomy.is_autocast_enabled("cpu")


def test_decorator_and_gradients():
    w = anatomy.randn(5, 5, requires_grad=True)

    @anatomy.autocast("cpu", dtype=anatomy.bfloat16)
    def forward(x):
        return (x @ w).float().sum()

    loss = forward(anatomy.randn(2, 5))
    assert loss.dtype == anatomy.float32 and not anatomy.is_autocast_enabled("cpu")
    loss.backward()
    assert w.grad is not None and w.grad.dtype == anatomy.float32 and list(w.grad.shape) == [5, 5]


def test_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        anatomy.autocast("tpu")
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        anatomy.autocast("cpu", dtype=anatomy.float64)
    with pytest.raises(TypeError):
        anatomy.autocast(0)
    with pytest.raises(TypeError):
        anatomy.autocast("cpu", enabled="yes")
    with pytest.raises(ValueError, match="device_type"):
        anatomy.is_autocast_enabled("tpu")

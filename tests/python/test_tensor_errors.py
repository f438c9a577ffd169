"""Bad input to anatomy.Tensor's methods gets a Python exception of the matching kind, with the
engine's message or one naming the function, and leaves the tensors unchanged; nothing crashes
the interpreter."""

import numpy as np
import pytest

import anatomy
from tensor_reference import assert_matches


def test_shape_errors_are_value_errors_and_change_nothing():
    a = anatomy.ones(2, 3)
    b = anatomy.ones(4)
    with pytest.raises(ValueError):
        a + b
    with pytest.raises(ValueError):
        a += b
    with pytest.raises(ValueError):
        a @ b
    with pytest.raises(ValueError):
        a.view(4)
    with pytest.raises(ValueError):
        a.reshape(5, -1)
    with pytest.raises(ValueError):
        a.expand(3, 3)
    with pytest.raises(ValueError):
        anatomy.cat([a, b])
    assert_matches(a, np.ones((2, 3), dtype=np.float32))


def test_dimension_errors_are_index_errors():
    a = anatomy.ones(2, 3)
    for call in (lambda: a.sum(2), lambda: a.transpose(0, 5), lambda: a.unsqueeze(4), lambda: a.softmax(-3),
                 lambda: a.max(2), lambda: a.size(2), lambda: a.permute(0, 2), lambda: a.select(0, 2)):
        with pytest.raises(IndexError):
            call()


def test_dtype_errors_are_type_errors():
    f = anatomy.ones(2)
    i = anatomy.ones(2, dtype=anatomy.int64)
    with pytest.raises(TypeError):
        f & f
    with pytest.raises(TypeError):
        ~f
    with pytest.raises(TypeError):
        i.frac()
    with pytest.raises(TypeError):
        f << 1
    with pytest.raises(TypeError):
        i -= 0.5
    assert i.tolist() == [1, 1]


def test_wrong_argument_types_are_type_errors():
    a = anatomy.ones(2, 3)
    with pytest.raises(TypeError):
        a.sum("x")
    with pytest.raises(TypeError):
        a.view("a")
    with pytest.raises(TypeError):
        a.transpose(0.5, 1)
    with pytest.raises(TypeError):
        a.add([1, 2])
    with pytest.raises(TypeError):
        a.to(5.5)
    with pytest.raises(TypeError):
        a.softmax(None)
    with pytest.raises(TypeError):
        a.sum(dtype=1)
    with pytest.raises(TypeError):
        anatomy.add(1, 2)
    with pytest.raises(TypeError):
        a.fill_("x")
    with pytest.raises(TypeError):
        a.requires_grad = "yes"


def test_huge_integers_are_refused_not_wrapped():
    a = anatomy.ones(2, dtype=anatomy.int64)
    with pytest.raises(TypeError):
        a + 2**70
    with pytest.raises((ValueError, TypeError)):
        anatomy.zeros(2**70)
    with pytest.raises((ValueError, TypeError, IndexError)):
        a[2**70]
    with pytest.raises(ValueError):
        anatomy.full((2,), 300, dtype=anatomy.uint8)


def test_cuda_without_a_device_is_an_error_not_a_crash():
    if hasattr(anatomy, "cuda") and anatomy.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        anatomy.ones(2).cuda()
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        anatomy.ones(2, device="cuda")


def test_meta_tensors_have_shapes_but_no_values():
    m = anatomy.ones(2, 3, device="meta")
    assert (m + m).shape == (2, 3) and (m @ m.T).shape == (2, 2)
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        m.item()
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        m.tolist()

"""The factories of the anatomy package: tensor(data) from nested lists, tuples, tensors and
buffers (with PyTorch's dtype inference), zeros/ones/empty/full/arange/linspace/eye/rand/randn/
randint and the _like forms with dtype=, device=, requires_grad=, sizes as varargs or one
sequence, and manual_seed."""

import array

import numpy as np
import pytest

import anatomy
from tensor_reference import assert_matches, to_numpy


def test_tensor_from_nested_lists_infers_dtype_like_pytorch():
    assert anatomy.tensor([1, 2]).dtype == anatomy.int64
    assert anatomy.tensor([1, 2.5]).dtype == anatomy.float32
    assert anatomy.tensor([True, False]).dtype == anatomy.bool
    assert anatomy.tensor([True, 2]).dtype == anatomy.int64
    assert anatomy.tensor([]).dtype == anatomy.float32 and anatomy.tensor([]).shape == (0,)
    assert anatomy.tensor(3).shape == () and anatomy.tensor(3).dtype == anatomy.int64
    assert anatomy.tensor(2.5).dtype == anatomy.float32
    t = anatomy.tensor(((1, 2, 3), [4, 5, 6]))
    assert t.shape == (2, 3) and t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert anatomy.tensor([[]]).shape == (1, 0)
    assert anatomy.tensor([anatomy.tensor(1.5), 2]).tolist() == [1.5, 2.0]
    assert anatomy.tensor([2**62, -(2**62)]).tolist() == [2**62, -(2**62)]
    assert anatomy.tensor([np.float32(1.5), np.int64(2)]).tolist() == [1.5, 2.0]


def test_tensor_dtype_device_requires_grad():
    t = anatomy.tensor([1, 2], dtype=anatomy.float64, device="cpu", requires_grad=True)
    assert t.dtype == anatomy.float64 and t.device.type == "cpu" and t.requires_grad and t.is_leaf
    assert anatomy.tensor([1.7], dtype=anatomy.int32).tolist() == [1]
    assert anatomy.tensor([1], dtype="float16").dtype == anatomy.float16


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8,
                                      np.bool_])
def test_tensor_from_numpy_keeps_dtype_and_copies(np_dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(np_dtype)
    t = anatomy.tensor(a)
    assert_matches(t, a)
    assert t.element_size() == a.itemsize
    a[...] = 0
    assert to_numpy(t).any() or not (np.arange(12) % 3).any()  # a copy, not a view


def test_tensor_from_strided_buffers():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    assert_matches(anatomy.tensor(a[::2, ::-3]), a[::2, ::-3])
    assert_matches(anatomy.tensor(a.T), a.T)
    assert anatomy.tensor(array.array("i", [1, 2, 3])).tolist() == [1, 2, 3]
    assert anatomy.tensor(memoryview(np.array([1.5, 2.5]))).tolist() == [1.5, 2.5]
    with pytest.raises(TypeError):
        anatomy.tensor(np.array([1, 2], dtype=np.int16))
    with pytest.raises(TypeError):
        anatomy.tensor(np.array([1 + 2j]))


def test_tensor_from_tensor_is_a_detached_copy():
    x = anatomy.ones(2, requires_grad=True)
    y = anatomy.tensor(x)
    assert y.data_ptr() != x.data_ptr() and not y.requires_grad
    assert anatomy.tensor(x, dtype=anatomy.int64).dtype == anatomy.int64


def test_ragged_and_bad_data():
    with pytest.raises(ValueError):
        anatomy.tensor([[1, 2], [3]])
    with pytest.raises(ValueError):
        anatomy.tensor([[1, 2], 3])
    with pytest.raises(ValueError):
        anatomy.tensor([1, [2, 3]])
    for bad in (["a"], [None], "abc", {1: 2}, [object()]):
        with pytest.raises(TypeError):
            anatomy.tensor(bad)


@pytest.mark.parametrize("name,fill", [("zeros", 0), ("ones", 1)])
def test_sized_factories(name, fill):
    f = getattr(anatomy, name)
    for t in (f(2, 3), f((2, 3)), f([2, 3]), f(anatomy.Size([2, 3]))):
        assert t.shape == (2, 3) and t.dtype == anatomy.float32 and set(to_numpy(t).flat) == {fill}
    assert f(()).shape == () and f(0).shape == (0,) and f(2, 0).shape == (2, 0)
    assert f(3, dtype=anatomy.int64).dtype == anatomy.int64
    assert f(3, requires_grad=True).requires_grad
    assert f(np.int64(3)).shape == (3,)


def test_other_factories():
    assert anatomy.empty(2, 3).shape == (2, 3)
    assert anatomy.full((2, 2), 7).dtype == anatomy.int64 and anatomy.full((2, 2), 7).tolist() == [[7, 7], [7, 7]]
    assert anatomy.full([2], 1.5).dtype == anatomy.float32
    assert anatomy.full([2], True).dtype == anatomy.bool
    assert_matches(anatomy.arange(5), np.arange(5))
    assert anatomy.arange(5).dtype == anatomy.int64 and anatomy.arange(0.0, 1.0, 0.25).dtype == anatomy.float32
    assert_matches(anatomy.arange(1, 10, 3), np.arange(1, 10, 3))
    assert_matches(anatomy.arange(0, 1, 0.25), np.arange(0, 1, 0.25))
    assert_matches(anatomy.linspace(0, 1, 5), np.linspace(0, 1, 5))
    assert_matches(anatomy.eye(3), np.eye(3))
    assert_matches(anatomy.eye(2, 3, dtype=anatomy.int64), np.eye(2, 3, dtype=np.int64))
    x = anatomy.tensor([[1, 2], [3, 4]], dtype=anatomy.int32)
    for like, fill in ((anatomy.zeros_like, 0), (anatomy.ones_like, 1)):
        out = like(x)
        assert out.shape == (2, 2) and out.dtype == anatomy.int32 and set(to_numpy(out).flat) == {fill}
    assert anatomy.empty_like(x, dtype=anatomy.float64).dtype == anatomy.float64
    assert anatomy.full_like(x, 9).tolist() == [[9, 9], [9, 9]]


def test_random_factories_and_seed():
    anatomy.manual_seed(0)
    a = anatomy.rand(1000)
    anatomy.manual_seed(0)
    b = anatomy.rand(1000)
    assert anatomy.equal(a, b)
    v = to_numpy(a)
    assert v.min() >= 0 and v.max() < 1 and 0.4 < v.mean() < 0.6
    n = to_numpy(anatomy.randn(4000))
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    r = anatomy.randint(3, 7, (500,))
    assert r.dtype == anatomy.int64 and set(to_numpy(r).tolist()) == {3, 4, 5, 6}
    assert set(to_numpy(anatomy.randint(2, size=(100,))).tolist()) == {0, 1}
    assert anatomy.rand(2, 3, dtype=anatomy.float64).dtype == anatomy.float64
    assert sorted(anatomy.randperm(6).tolist()) == list(range(6))
    anatomy.manual_seed(-1)  # any int, as PyTorch
    with pytest.raises(TypeError):
        anatomy.manual_seed(1.5)


def test_bad_factory_arguments():
    with pytest.raises(ValueError):
        anatomy.zeros(-1)
    with pytest.raises(TypeError):
        anatomy.zeros(2.5)
    with pytest.raises(TypeError):
        anatomy.zeros("2")
    with pytest.raises(TypeError):
        anatomy.ones(2, dtype=3)
    with pytest.raises(ValueError):
        anatomy.ones(2, dtype="notadtype")
    with pytest.raises(ValueError):
        anatomy.ones(2, device="gpu")
    with pytest.raises(ValueError):
        anatomy.arange(0, 10, 0)
    with pytest.raises(TypeError):
        anatomy.randint(5)

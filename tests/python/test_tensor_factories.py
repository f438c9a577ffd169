"""The factories of the anatomy package: tensor(data) from nested lists, tuples, tensors and
buffers (with PyTorch's dtype inference), zeros/ones/empty/full/arange/linspace/eye/rand/randn/
randint and the _like forms with dtype=, device=, requires_grad=, sizes as varargs or one
sequence, manual_seed and the generator state (get_rng_state, set_rng_state, initial_seed)."""

import array
import struct

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


def test_float64_data_is_not_rounded_through_float32():
    # A Python float is a double: with dtype=float64 it keeps every bit, as torch.tensor does.
    assert anatomy.tensor(0.9, dtype=anatomy.float64).item() == 0.9
    assert anatomy.tensor([0.1, 0.9, 1e-300], dtype=anatomy.float64).tolist() == [0.1, 0.9, 1e-300]
    assert anatomy.tensor([[1 / 3]], dtype=anatomy.float64).tolist() == [[1 / 3]]
    assert anatomy.tensor(2**53 - 1, dtype=anatomy.int64).item() == 2**53 - 1
    assert anatomy.tensor(0.9).item() == float(np.float32(0.9))  # the default dtype is float32


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


def test_rng_state_saves_and_restores_the_generator():
    anatomy.manual_seed(1234)
    assert anatomy.initial_seed() == 1234
    anatomy.rand(10)
    state = anatomy.get_rng_state()
    # 16 bytes as torch.cuda.get_rng_state: the seed, then the offset (draws so far), little-endian.
    assert state.dtype == anatomy.uint8 and list(state.shape) == [16]
    seed, offset = struct.unpack("<QQ", bytes(state.tolist()))
    assert seed == 1234 and offset > 0
    a = anatomy.rand(1000)
    anatomy.manual_seed(99)
    anatomy.set_rng_state(state)
    assert anatomy.equal(anatomy.rand(1000), a)
    assert anatomy.initial_seed() == 1234
    # A state from another seed and offset, made by hand.
    anatomy.set_rng_state(anatomy.tensor(list(struct.pack("<QQ", 7, 0)), dtype=anatomy.uint8))
    b = anatomy.rand(5)
    anatomy.manual_seed(7)
    assert anatomy.equal(anatomy.rand(5), b)
    with pytest.raises(TypeError, match="16 bytes"):
        anatomy.set_rng_state(anatomy.zeros(16))
    with pytest.raises(TypeError, match="16 bytes"):
        anatomy.set_rng_state(anatomy.zeros(8, dtype=anatomy.uint8))
    with pytest.raises(TypeError):
        anatomy.set_rng_state([0] * 16)
    # The CUDA generator's state is kept apart from the CPU's, in the same form.
    cuda_state = anatomy.cuda.get_rng_state()
    assert cuda_state.dtype == anatomy.uint8 and list(cuda_state.shape) == [16]
    anatomy.cuda.set_rng_state(anatomy.tensor(list(struct.pack("<QQ", 5, 64)), dtype=anatomy.uint8))
    assert struct.unpack("<QQ", bytes(anatomy.cuda.get_rng_state().tolist())) == (5, 64)
    assert struct.unpack("<QQ", bytes(anatomy.get_rng_state().tolist()))[0] == 7


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

"""Indexing and assignment with Python's syntax against NumPy: the same index expression on an
anatomy tensor and on an ndarray copy must give the same values, and assignments must leave the
same arrays. Basic indices give views; out-of-range indices raise IndexError."""

import numpy as np
import pytest

import anatomy
from tensor_reference import assert_matches, to_numpy

BASE = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def np_key(key):
    """The same index for NumPy: anatomy tensors become arrays."""
    if isinstance(key, tuple):
        return tuple(np_key(k) for k in key)
    if isinstance(key, anatomy.Tensor):
        return to_numpy(key)
    return key


def keys():
    mask = BASE[:, 0, 0] > 10
    return [
        1, -1, (0, 2), (-1, -2, -3), slice(1, None), (slice(1, None), slice(None, None, 2)),
        (Ellipsis, None), None, (None, 1), (Ellipsis, 1), (1, Ellipsis, 2), (slice(None), None, slice(1, 3)),
        slice(-2, None), slice(10, 20), (slice(None), slice(3, 1)), (slice(0, 3, 2), slice(None), slice(None, None, 3)),
        anatomy.tensor(mask), anatomy.tensor(BASE > 30), anatomy.tensor([2, 0, -1]), [0, 2], [[0, 1], [2, 2]],
        (slice(None), [1, 3]), (0, [1, 3], slice(None)), ([0, 2], slice(None), [4, 0]),
        (anatomy.tensor([0, 2]), 1), (Ellipsis, anatomy.tensor([True, False, True, False, True])),
        (1, anatomy.tensor([[0], [3]]), anatomy.tensor([1, 2])), np.array([1, 0]), True, (False,),
    ]


@pytest.mark.parametrize("key", keys(), ids=repr)
def test_get_item_matches_numpy(key):
    t = anatomy.tensor(BASE)
    assert_matches(t[key], BASE[np_key(key)])


@pytest.mark.parametrize("key", keys(), ids=repr)
def test_set_item_number_matches_numpy(key):
    t, a = anatomy.tensor(BASE), BASE.copy()
    t[key] = -1.5
    a[np_key(key)] = -1.5
    assert_matches(t, a)


@pytest.mark.parametrize("key", keys(), ids=repr)
def test_set_item_tensor_matches_numpy(key):
    t, a = anatomy.tensor(BASE), BASE.copy()
    shape = BASE[np_key(key)].shape
    values = np.random.default_rng(0).uniform(size=shape).astype(np.float32)
    t[key] = anatomy.tensor(values)
    a[np_key(key)] = values
    assert_matches(t, a)


def test_set_item_broadcasts_and_converts():
    t, a = anatomy.tensor(BASE), BASE.copy()
    t[:, 1] = anatomy.tensor([7, 8, 9, 10, 11])  # int64 values into float32, broadcast over dim 0
    a[:, 1] = [7, 8, 9, 10, 11]
    t[1:, :, [0, 1]] = [[1.0], [2.0], [3.0], [4.0]]  # a nested list
    a[1:, :, [0, 1]] = [[1.0], [2.0], [3.0], [4.0]]
    assert_matches(t, a)


def test_basic_indexing_makes_views_and_writes_through_them():
    t = anatomy.tensor(BASE)
    v = t[1, :, ::2]
    assert v.data_ptr() == t.data_ptr() + 20 * 4
    v[0] = 100
    a = BASE.copy()
    a[1, 0, ::2] = 100
    assert_matches(t, a)
    row = t[2]
    row[1:3] = 0
    a[2, 1:3] = 0
    assert_matches(t, a)
    # advanced indexing copies
    c = t[[0]]
    c.fill_(5)
    assert_matches(t, a)


def test_bool_mask_assignment_in_place_keeps_storage():
    t = anatomy.tensor([1.0, -2.0, 3.0, -4.0])
    ptr = t.data_ptr()
    t[t < 0] = 0
    assert t.data_ptr() == ptr and t.tolist() == [1.0, 0.0, 3.0, 0.0]


def test_integer_and_bool_dtypes():
    t = anatomy.tensor([[1, 2, 3], [4, 5, 6]])
    t[t % 2 == 0] = 0
    assert t.tolist() == [[1, 0, 3], [0, 5, 0]]
    b = anatomy.tensor([True, False, True])
    b[1] = True
    assert b.tolist() == [True, True, True]


@pytest.mark.parametrize("key", [3, -4, (0, 4), (0, 0, 5), (slice(None), 7), anatomy.tensor([3]),
                                 [0, 5], (0, 0, 0, 0)], ids=repr)
def test_out_of_range_indices_raise_index_error(key):
    t = anatomy.tensor(BASE)
    with pytest.raises(IndexError):
        t[key]
    with pytest.raises(IndexError):
        t[key] = 1.0
    assert_matches(t, BASE)


def test_bad_index_kinds():
    t = anatomy.tensor(BASE)
    with pytest.raises(ValueError, match="step"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(IndexError):
        t[anatomy.tensor([0.5])]
    with pytest.raises(IndexError):
        t[[0.5, 1.0]]
    for bad in ["a", 1.5, object(), {1: 2}]:
        with pytest.raises(TypeError):
            t[bad]
        with pytest.raises(TypeError):
            t[bad] = 1.0
    with pytest.raises(IndexError):
        anatomy.tensor(1.0)[0]
    with pytest.raises(ValueError):
        t[0] = anatomy.ones(3)  # does not broadcast to [4, 5]
    with pytest.raises(TypeError):
        t[0] = "x"
    assert_matches(t, BASE)


def test_zero_size_and_zero_dim():
    z = anatomy.zeros(0, 3)
    assert z[:, 1].shape == (0,)
    assert z[z > 0].shape == (0,)
    s = anatomy.tensor(4.0)
    assert s[None].shape == (1,) and s[...].shape == () and s[()].item() == 4.0
    s[...] = 2.0
    assert s.item() == 2.0

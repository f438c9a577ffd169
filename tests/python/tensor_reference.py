"""Helpers for the tensor tests: NumPy arrays to anatomy tensors and back (through the buffer
protocol and tolist, the package's own paths), random inputs of every dtype, and comparison."""

import numpy as np

import anatomy

# anatomy dtype -> NumPy dtype (bfloat16 has none: it is compared through float32).
NP = {
    anatomy.bool: np.bool_, anatomy.uint8: np.uint8, anatomy.int8: np.int8, anatomy.int32: np.int32,
    anatomy.int64: np.int64, anatomy.float16: np.float16, anatomy.float32: np.float32,
    anatomy.float64: np.float64,
}


def to_numpy(t):
    """The values of t as an ndarray of the matching dtype (bfloat16 as float32)."""
    np_dtype = NP.get(t.dtype, np.float32)
    return np.array(t.tolist(), dtype=np_dtype).reshape(tuple(t.shape))


def random_array(shape, np_dtype, rng, low=-5, high=5):
    if np_dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(np_dtype, np.integer):
        lo = 0 if np_dtype == np.uint8 else low
        return rng.integers(lo, high, size=shape).astype(np_dtype)
    return rng.uniform(low, high, size=shape).astype(np_dtype)


def assert_matches(t, expected, rtol=1e-5, atol=1e-6):
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape, (t.shape, expected.shape)
    got = to_numpy(t)
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)

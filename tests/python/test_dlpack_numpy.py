"""DLPack with NumPy, both ways, on the CPU: zero copy (a write through one side is read on the
other), every dtype both speak, non-contiguous and offset views, 0-d and size-0 arrays,
lifetimes, and every malformed capsule refused without a crash."""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import anatomy

# NumPy and anatomy dtypes both sides have (NumPy has no bfloat16).
DTYPES = [
    (np.bool_, anatomy.bool), (np.uint8, anatomy.uint8), (np.int8, anatomy.int8),
    (np.int32, anatomy.int32), (np.int64, anatomy.int64), (np.float16, anatomy.float16),
    (np.float32, anatomy.float32), (np.float64, anatomy.float64),
]


def random_array(shape, np_dtype, rng):
    if np_dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=np_dtype)
    return rng.standard_normal(shape).astype(np_dtype)


def data_pointer(t):
    return t.__array_interface__["data"][0] if isinstance(t, np.ndarray) else t.data_ptr()


@pytest.mark.parametrize("np_dtype,dtype", DTYPES)
def test_numpy_to_anatomy_shares_memory(np_dtype, dtype):
    rng = np.random.default_rng(0)
    a = random_array((3, 4), np_dtype, rng)
    t = anatomy.from_dlpack(a)
    assert t.dtype == dtype and tuple(t.shape) == (3, 4)
    back = np.from_dlpack(t)
    assert back.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    np.testing.assert_array_equal(back, a)
    a[1, 2] = a[0, 0] if np_dtype != np.bool_ else not a[1, 2]
    assert np.from_dlpack(t)[1, 2] == a[1, 2]


@pytest.mark.parametrize("np_dtype,dtype", DTYPES)
def test_anatomy_to_numpy_shares_memory(np_dtype, dtype):
    rng = np.random.default_rng(1)
    src = random_array((5, 2), np_dtype, rng)
    t = anatomy.from_dlpack(src.copy())  # an anatomy tensor over NumPy memory
    owned = anatomy.from_dlpack(np.from_dlpack(t))
    a = owned.numpy()
    np.testing.assert_array_equal(a, src)
    a[0, 0] = a[4, 1]
    assert np.from_dlpack(owned)[0, 0] == a[4, 1]


def test_views_keep_strides_and_offset():
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for view in [base[:, 1:, ::2], base.transpose(2, 0, 1), base[1], base[..., 3], base[::2, ::-1][:, ::-1]]:
        t = anatomy.from_dlpack(view)
        np.testing.assert_array_equal(np.from_dlpack(t), view)


def test_zero_d_and_size_zero():
    for a in [np.array(3.5, dtype=np.float64), np.zeros((0, 3), dtype=np.int32), np.zeros((2, 0, 4), np.float32)]:
        t = anatomy.from_dlpack(a)
        assert tuple(t.shape) == a.shape
        np.testing.assert_array_equal(np.from_dlpack(t), a)


def test_array_protocol():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = anatomy.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_imported_array_lives_while_a_view_does():
    a = np.arange(1000, dtype=np.float64)
    ref = weakref.ref(a)
    t = anatomy.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None  # the tensor keeps the producer's memory
    np.testing.assert_array_equal(np.from_dlpack(t)[:3], [0, 1, 2])
    del t
    gc.collect()
    assert ref() is None  # and lets it go with its last view


def test_exported_tensor_lives_while_the_consumer_holds_it():
    owner = np.arange(12, dtype=np.float32)
    ref = weakref.ref(owner)
    t = anatomy.from_dlpack(owner)
    del owner
    a = np.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None  # the NumPy array holds the exported tensor, which holds the memory
    np.testing.assert_array_equal(a[:3], [0, 1, 2])
    del a
    gc.collect()
    assert ref() is None


def test_unconsumed_capsule_frees_its_tensor():
    owner = np.arange(5, dtype=np.int32)
    ref = weakref.ref(owner)
    t = anatomy.from_dlpack(owner)
    del owner
    capsule = t.__dlpack__()
    capsule_v = t.__dlpack__(max_version=(1, 0))
    del t
    gc.collect()
    assert ref() is not None
    del capsule, capsule_v
    gc.collect()
    assert ref() is None


def test_capsule_consumed_twice_is_refused():
    t = anatomy.from_dlpack(np.arange(4, dtype=np.float32))
    for kwargs in [{}, {"max_version": (1, 1)}]:
        capsule = t.__dlpack__(**kwargs)
        anatomy.from_dlpack(capsule)
        with pytest.raises(ValueError, match="from_dlpack: this capsule was consumed already"):
            anatomy.from_dlpack(capsule)


def test_foreign_capsule_and_objects_are_refused():
    PyCapsule_New = ctypes.pythonapi.PyCapsule_New
    PyCapsule_New.restype = ctypes.py_object
    PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = PyCapsule_New(ctypes.addressof(ctypes.c_int(0)), b"not_a_tensor", None)
    with pytest.raises(TypeError, match="from_dlpack: a capsule named 'not_a_tensor'"):
        anatomy.from_dlpack(capsule)
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__"):
        anatomy.from_dlpack([1, 2, 3])


def test_stream_must_be_none_on_the_cpu():
    t = anatomy.from_dlpack(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="__dlpack__: stream must be None"):
        t.__dlpack__(stream=5)
    assert t.__dlpack_device__() == (1, 0)


class RecordingProducer:
    """Hands the protocol on to a NumPy array and records how the consumer called it."""

    def __init__(self, array):
        self.array = array
        self.calls = []

    def __dlpack_device__(self):
        self.calls.append("__dlpack_device__")
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, **kwargs):
        self.calls.append(("__dlpack__", stream))
        return self.array.__dlpack__(stream=stream, **kwargs)


def test_from_dlpack_names_the_default_stream_without_asking_the_device():
    # With every current stream the default one, None says so to any producer (the legacy
    # default stream on CUDA, what the CPU takes): __dlpack_device__ is not needed.
    p = RecordingProducer(np.arange(6, dtype=np.float32))
    t = anatomy.from_dlpack(p)
    assert t.tolist() == [0, 1, 2, 3, 4, 5]
    assert "__dlpack_device__" not in p.calls
    assert p.calls and all(call == ("__dlpack__", None) for call in p.calls)


def test_copy_and_dl_device_follow_the_array_api():
    a = np.arange(4, dtype=np.float32)
    t = anatomy.from_dlpack(a)
    copied = np.from_dlpack(t, copy=True)
    copied[0] = 42
    assert a[0] == 0
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0), copy=False)


def test_numpy_refuses_grad_bfloat16_and_devices():
    t = anatomy.from_dlpack(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="bfloat16"):
        t.to(anatomy.bfloat16).numpy()
    leaf = anatomy.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad; call detach"):
        leaf.numpy()
    np.testing.assert_array_equal(leaf.detach().numpy(), [1, 1, 1])
    with pytest.raises(TypeError, match="numpy: the tensor is on meta"):
        anatomy.ones(3, device="meta").numpy()
    with pytest.raises(AttributeError, match="__cuda_array_interface__"):
        t.__cuda_array_interface__


def test_bfloat16_and_every_dtype_round_trip_through_anatomy_capsules():
    for dtype in [anatomy.bfloat16, anatomy.float16, anatomy.bool, anatomy.uint8, anatomy.int64]:
        t = anatomy.arange(6).to(dtype).reshape(2, 3).t()
        for kwargs in [{}, {"max_version": (1, 0)}]:
            u = anatomy.from_dlpack(t.__dlpack__(**kwargs))
            assert u.dtype == dtype and u.stride() == t.stride() and u.data_ptr() == t.data_ptr()
            assert anatomy.equal(u, t)

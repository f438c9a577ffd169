"""Malformed DLPack capsules, made field by field with ctypes: each is refused with a typed error
naming from_dlpack and the field, nothing crashes, and the refused capsule still belongs to its
producer (its deleter runs once, when the capsule goes)."""

import ctypes
import gc

import pytest

import anatomy


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
        ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor),
    ]


PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

KDL_CPU, KDL_FLOAT = 1, 2


class Producer:
    """One hand-made tensor: its buffer, shape and strides arrays, and a deleter that counts."""

    def __init__(self, versioned=False, shape=(2, 3), strides=None, nbytes=64):
        self.buffer = (ctypes.c_char * nbytes)()
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.deleted = 0
        self.deleter = DELETER(self._delete)
        self.managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = ctypes.addressof(self.buffer)
        t.device = DLDevice(KDL_CPU, 0)
        t.ndim = len(shape)
        t.dtype = DLDataType(KDL_FLOAT, 32, 1)
        t.shape = self.shape
        t.strides = self.strides
        t.byte_offset = 0
        self.managed.deleter = self.deleter
        if versioned:
            self.managed.version = DLPackVersion(1, 0)

    def _delete(self, _):
        self.deleted += 1

    def capsule(self):
        # A capsule without a destructor: the test plays the producer and checks by hand that
        # a refused import left the tensor alone (deleter not called).
        name = b"dltensor_versioned" if isinstance(self.managed, DLManagedTensorVersioned) else b"dltensor"
        return PyCapsule_New(ctypes.addressof(self.managed), name, None)


def test_a_well_formed_hand_made_capsule_imports_and_is_freed_once():
    for versioned in (False, True):
        p = Producer(versioned=versioned)
        t = anatomy.from_dlpack(p.capsule())
        assert tuple(t.shape) == (2, 3)
        assert p.deleted == 0
        del t
        gc.collect()
        assert p.deleted == 1


def break_null_data(p):
    p.managed.dl_tensor.data = None


def break_negative_size(p):
    p.shape[1] = -3


def break_ndim(p):
    p.managed.dl_tensor.ndim = -1


def break_huge_ndim(p):
    p.managed.dl_tensor.ndim = 1 << 20


def break_dtype_code(p):
    p.managed.dl_tensor.dtype = DLDataType(9, 32, 1)


def break_dtype_bits(p):
    p.managed.dl_tensor.dtype = DLDataType(KDL_FLOAT, 24, 1)


def break_lanes(p):
    p.managed.dl_tensor.dtype = DLDataType(KDL_FLOAT, 32, 4)


def break_device(p):
    p.managed.dl_tensor.device = DLDevice(99, 0)


def break_strides(p):
    p.strides = (ctypes.c_int64 * 2)(1 << 62, 1)
    p.managed.dl_tensor.strides = p.strides


def break_overflowing_size(p):
    p.shape[0] = 1 << 40
    p.shape[1] = 1 << 40


def break_null_shape(p):
    p.managed.dl_tensor.shape = None


BREAKS = [break_null_data, break_negative_size, break_ndim, break_huge_ndim, break_dtype_code, break_dtype_bits,
          break_lanes, break_device, break_strides, break_overflowing_size, break_null_shape]


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("damage", BREAKS, ids=lambda f: f.__name__)
def test_malformed_capsules_are_refused_and_left_to_their_producer(versioned, damage):
    p = Producer(versioned=versioned)
    damage(p)
    capsule = p.capsule()
    with pytest.raises((ValueError, TypeError, IndexError, NotImplementedError, RuntimeError), match="from_dlpack"):
        anatomy.from_dlpack(capsule)
    gc.collect()
    assert p.deleted == 0  # refused: the producer still owns it
    # ... and the capsule is still unconsumed, so another consumer could take it.
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule),
                                              b"dltensor_versioned" if versioned else b"dltensor")


def test_unknown_major_version_is_refused():
    p = Producer(versioned=True)
    p.managed.version = DLPackVersion(2, 0)
    with pytest.raises((ValueError, NotImplementedError), match="from_dlpack"):
        anatomy.from_dlpack(p.capsule())
    assert p.deleted == 0


def test_null_deleter_is_accepted_and_never_called():
    p = Producer()
    p.managed.deleter = DELETER()
    t = anatomy.from_dlpack(p.capsule())
    assert tuple(t.shape) == (2, 3)
    del t
    gc.collect()

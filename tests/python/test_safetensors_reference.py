"""anatomy.safetensors against the format's reference implementation, the `safetensors` package
(its NumPy front end, safetensors.numpy, and for bf16, which NumPy lacks, the package's own
serialize / deserialize): a file anatomy writes is byte for byte the file the reference writes for
the same tensors and metadata, and the reference reads it back with the same values, dtypes and
shapes; a file the reference writes loads in anatomy likewise. Every dtype both have: bool, uint8,
int8, float16, bfloat16, int32, float32, float64, int64. scripts/setup.sh installs the package
(scripts/python-requirements.txt)."""

import struct

import numpy as np
import pytest

import anatomy
from anatomy import safetensors

reference = pytest.importorskip(
    "safetensors", reason="the reference safetensors package is not installed (scripts/setup.sh installs it)")
st_numpy = pytest.importorskip("safetensors.numpy")

# anatomy's dtype, NumPy's, and the format's name.
DTYPES = [
    (anatomy.bool, np.bool_, "BOOL"),
    (anatomy.uint8, np.uint8, "U8"),
    (anatomy.int8, np.int8, "I8"),
    (anatomy.float16, np.float16, "F16"),
    (anatomy.int32, np.int32, "I32"),
    (anatomy.float32, np.float32, "F32"),
    (anatomy.float64, np.float64, "F64"),
    (anatomy.int64, np.int64, "I64"),
]


def sample(np_dtype, shape, seed):
    """Values that span the dtype: negatives, extremes, non-integers where it has them."""
    rng = np.random.default_rng(seed)
    if np_dtype == np.bool_:
        return np.asarray(rng.integers(0, 2, shape), dtype=np.bool_)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        values = np.asarray(rng.integers(info.min, info.max, shape, dtype=np_dtype, endpoint=True))
        if values.size >= 2:
            values.flat[0], values.flat[1] = info.min, info.max
        return values
    values = np.asarray(rng.standard_normal(shape) * 100, dtype=np_dtype)
    if values.size >= 3:
        values.flat[0], values.flat[1], values.flat[2] = np.finfo(np_dtype).max, np.finfo(np_dtype).tiny, -0.0
    return values


def tensors_of_every_dtype():
    """{name: ndarray}: per dtype a matrix, a 0-d tensor and an empty one."""
    out = {}
    for i, (_, np_dtype, name) in enumerate(DTYPES):
        out[f"{name.lower()}.matrix"] = sample(np_dtype, (3, 5), i)
        out[f"{name.lower()}.scalar"] = sample(np_dtype, (), 100 + i)
        out[f"{name.lower()}.empty"] = np.zeros((0, 4), dtype=np_dtype)
    return out


def to_anatomy(array):
    # A C-ordered copy (np.ascontiguousarray would make a 0-d array 1-d).
    return anatomy.from_dlpack(array.copy(order="C"))


def _dtype_of(array):
    return next(a for a, n, _ in DTYPES if n == array.dtype)


def to_numpy(t):
    return np.asarray(t.cpu().numpy())


def test_anatomy_file_is_the_reference_file_and_reads_back(tmp_path):
    arrays = tensors_of_every_dtype()
    ours, theirs = tmp_path / "anatomy.safetensors", tmp_path / "reference.safetensors"
    safetensors.save_file({k: to_anatomy(v) for k, v in arrays.items()}, ours, metadata={"format": "np"})
    st_numpy.save_file(arrays, str(theirs), metadata={"format": "np"})
    assert ours.read_bytes() == theirs.read_bytes()
    back = st_numpy.load_file(str(ours))
    assert set(back) == set(arrays)
    for name, want in arrays.items():
        got = back[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    with reference.safe_open(str(ours), framework="np") as f:
        assert f.metadata() == {"format": "np"}


def test_reference_file_loads_in_anatomy(tmp_path):
    arrays = tensors_of_every_dtype()
    # A non-contiguous source: the reference writes it C-contiguous, anatomy reads the values.
    arrays["f32.transposed"] = np.ascontiguousarray(sample(np.float32, (4, 6), 7).T)
    path = tmp_path / "reference.safetensors"
    st_numpy.save_file(arrays, str(path), metadata={"who": "safetensors.numpy", "n": "2"})
    loaded, metadata = safetensors.load_file_with_metadata(path)
    assert metadata == {"who": "safetensors.numpy", "n": "2"}
    assert set(loaded) == set(arrays)
    for name, want in arrays.items():
        got = loaded[name]
        assert got.dtype == _dtype_of(want) and tuple(got.shape) == want.shape, name
        np.testing.assert_array_equal(to_numpy(got), want, err_msg=name)


def bf16_bits(values):
    """The bf16 bit patterns of float32 values that bf16 holds exactly."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any(), "the values must be exact in bf16"
    return (bits >> 16).astype(np.uint16)


BF16_VALUES = [[1.5, -2.0, 0.15625, 2.0**127], [-0.0, 2.0**-126, 448.0, -65280.0]]


def test_bf16_anatomy_to_reference(tmp_path):
    path = tmp_path / "bf16.safetensors"
    safetensors.save_file({"h": anatomy.tensor(BF16_VALUES, dtype=anatomy.bfloat16)}, path)
    (name, entry), = reference.deserialize(path.read_bytes())
    assert name == "h" and entry["dtype"].upper() in ("BF16", "BFLOAT16") and list(entry["shape"]) == [2, 4]
    assert np.frombuffer(bytes(entry["data"]), dtype="<u2").tolist() == bf16_bits(BF16_VALUES).ravel().tolist()


def test_bf16_reference_to_anatomy(tmp_path):
    bits = np.ascontiguousarray(bf16_bits(BF16_VALUES))
    spec = reference.TensorSpec(dtype="bfloat16", shape=[2, 4], data_ptr=bits.ctypes.data, data_len=bits.nbytes)
    path = tmp_path / "bf16.safetensors"
    reference.serialize_file({"h": spec}, str(path))
    h = safetensors.load_file(path)["h"]
    assert h.dtype == anatomy.bfloat16 and list(h.shape) == [2, 4]
    assert to_numpy(h.float()).tolist() == np.asarray(BF16_VALUES, dtype=np.float32).tolist()
    # And the bytes are the ones anatomy writes for the same values.
    ours = tmp_path / "ours.safetensors"
    safetensors.save_file({"h": anatomy.tensor(BF16_VALUES, dtype=anatomy.bfloat16)}, ours)
    assert ours.read_bytes() == path.read_bytes()


def test_malformed_for_the_reference_is_malformed_here(tmp_path):
    # A header whose tensor runs past the end: both refuse it.
    header = b'{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
    path = tmp_path / "short.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    with pytest.raises(Exception):
        st_numpy.load_file(str(path))
    with pytest.raises(ValueError, match="short.safetensors"):
        safetensors.load_file(path)

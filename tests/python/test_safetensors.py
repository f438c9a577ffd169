"""anatomy.safetensors on the CPU: the bytes it writes are the format's (header parsed here with
json and struct, data read with NumPy), a file written here by hand loads with the right values,
metadata survives, a CPU load is a view of the mapping, and malformed files are ValueErrors.
The exchange with PyTorch's safetensors runs on the GPU machine (test_gpu_safetensors_torch.py)."""

import json
import struct

import numpy as np
import pytest

import anatomy
from anatomy import safetensors

A = anatomy.ops.aten


def header_of(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def test_written_file_is_the_format(tmp_path):
    w = anatomy.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = anatomy.tensor([7, 8], dtype=anatomy.int64)
    path = tmp_path / "m.safetensors"
    safetensors.save_file({"layer.weight": w, "layer.bias": b}, path, metadata={"format": "pt"})
    header, data = header_of(path)
    assert header["__metadata__"] == {"format": "pt"}
    assert header["layer.weight"]["dtype"] == "F32" and header["layer.weight"]["shape"] == [2, 3]
    assert header["layer.bias"]["dtype"] == "I64" and header["layer.bias"]["shape"] == [2]
    begin, end = header["layer.weight"]["data_offsets"]
    assert np.frombuffer(data[begin:end], dtype="<f4").tolist() == [1, 2, 3, 4, 5, 6]
    begin, end = header["layer.bias"]["data_offsets"]
    assert np.frombuffer(data[begin:end], dtype="<i8").tolist() == [7, 8]


def test_hand_written_file_loads(tmp_path):
    values = np.arange(6, dtype="<f8").reshape(2, 3)
    header = json.dumps({"x": {"dtype": "F64", "shape": [2, 3], "data_offsets": [0, 48]},
                         "__metadata__": {"who": "numpy"}}).encode()
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + values.tobytes())
    tensors, metadata = safetensors.load_file_with_metadata(path)
    assert metadata == {"who": "numpy"}
    x = tensors["x"]
    assert x.dtype == anatomy.float64 and list(x.shape) == [2, 3]
    assert x.tolist() == values.tolist()


def test_round_trip_keeps_values_dtypes_and_noncontiguous_inputs(tmp_path):
    t = anatomy.arange(12, dtype=anatomy.float32).reshape(3, 4).t()  # transposed: saved in logical order
    h = anatomy.tensor([1.5, -2.0], dtype=anatomy.bfloat16)
    path = tmp_path / "r.safetensors"
    safetensors.save_file({"t": t, "h": h}, path)
    back = safetensors.load_file(path)
    assert back["t"].tolist() == t.tolist() and back["t"].dtype == anatomy.float32
    assert back["h"].tolist() == [1.5, -2.0] and back["h"].dtype == anatomy.bfloat16


@pytest.mark.parametrize("payload, needle", [
    (b"", "header"),
    (struct.pack("<Q", 1 << 40), "header"),
    (struct.pack("<Q", 2) + b"{}", None),
    (struct.pack("<Q", 60) + b'{"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}' + b" " * 0, None),
])
def test_malformed_files_are_value_errors(tmp_path, payload, needle):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(payload)
    if payload.startswith(struct.pack("<Q", 2) + b"{}"):
        assert safetensors.load_file(path) == {}  # an empty file of tensors is valid
        return
    with pytest.raises(ValueError) as e:
        safetensors.load_file(path)
    assert "bad.safetensors" in str(e.value)
    if needle:
        assert needle in str(e.value)


def test_bad_arguments():
    with pytest.raises(TypeError):
        safetensors.save_file([anatomy.tensor([1.0])], "x.safetensors")
    with pytest.raises(TypeError):
        safetensors.save_file({"a": anatomy.tensor([1.0])}, "x.safetensors", metadata=["m"])

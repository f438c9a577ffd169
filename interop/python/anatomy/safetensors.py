"""Safetensors files, as safetensors.torch: `save_file(tensors, filename, metadata=None)` and
`load_file(filename, device="cpu")`, written and read by the engine (docs/nn.md, "Checkpoints").

A CPU load memory-maps the file and returns views of it, without a copy; a CUDA load copies each
tensor to the device. The files are the format's, so PyTorch (safetensors.torch), JAX and NumPy
read what anatomy writes and the other way round. A malformed file is a ValueError that names the
file and the field.
"""

import os

from . import _C

__all__ = ["save_file", "load_file", "load_file_with_metadata"]


def save_file(tensors, filename, metadata=None):
    """Writes a dict of name -> anatomy.Tensor (any device and layout) and an optional dict of
    str -> str metadata to `filename` (the bytes go to a temporary name first, then replace it)."""
    if not isinstance(tensors, dict):
        raise TypeError(f"save_file: tensors must be a dict of name -> Tensor, got {type(tensors).__name__}")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"save_file: metadata must be a dict of str -> str, got {type(metadata).__name__}")
    _C._safetensors_save(tensors, os.fspath(filename), metadata or {})


def load_file_with_metadata(filename, device="cpu"):
    """(tensors, metadata) of a safetensors file."""
    return _C._safetensors_load(os.fspath(filename), device)


def load_file(filename, device="cpu"):
    """The dict of name -> anatomy.Tensor of a safetensors file, on `device`."""
    return load_file_with_metadata(filename, device)[0]

"""The type stubs: _C.pyi from nanobind's stubgen beside the module (the build's
anatomy_python_stub target), py.typed, and the hand-written ops.pyi, all valid Python."""

import ast
import pathlib

import anatomy

PACKAGE = pathlib.Path(anatomy._C.__file__).parent


def names_in(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.ClassDef, ast.FunctionDef))}


def test_extension_stub_is_generated_and_parses():
    stub = PACKAGE / "_C.pyi"
    assert stub.exists(), f"{stub} is missing: build the anatomy_python_stub target"
    names = names_in(stub)
    assert {"Tensor", "OpOverloadPacket", "OpOverload", "Stream", "Event", "dtype", "device"} <= names
    assert (PACKAGE / "py.typed").exists()


def test_ops_stub_parses():
    names = names_in(PACKAGE / "ops.pyi")
    assert {"OpNamespace", "signature", "__getattr__"} <= names

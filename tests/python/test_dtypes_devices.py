"""anatomy.dtype and anatomy.device: names, properties, parsing and the errors of bad spellings."""

import pytest

import anatomy


def test_every_dtype_has_torch_spelling_and_itemsize():
    expected = {
        "bool": 1, "uint8": 1, "int8": 1, "int32": 4, "int64": 8,
        "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
    }
    for name, size in expected.items():
        d = getattr(anatomy, name)
        assert isinstance(d, anatomy.dtype)
        assert d.itemsize == size
        assert repr(d) == f"anatomy.{name}"
    assert anatomy.float is anatomy.float32 and anatomy.long is anatomy.int64 and anatomy.half is anatomy.float16
    assert anatomy.float32.is_floating_point and not anatomy.int64.is_floating_point


def test_devices_parse_print_and_compare():
    assert str(anatomy.device("cuda:1")) == "cuda:1"
    assert anatomy.device("cuda", 1) == anatomy.device("cuda:1")
    assert anatomy.device("cuda:0") == "cuda:0"
    assert anatomy.device("cpu").type == "cpu" and anatomy.device("cpu").index is None
    assert anatomy.device(anatomy.device("meta")).type == "meta"
    assert repr(anatomy.device("cuda:2")) == "device(type='cuda', index=2)"
    assert len({anatomy.device("cpu"), anatomy.device("cpu")}) == 1


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", ""])
def test_bad_device_spellings_are_value_errors(bad):
    with pytest.raises(ValueError, match="Device"):
        anatomy.device(bad)


def test_device_of_wrong_type_is_type_error():
    with pytest.raises(TypeError, match="device"):
        anatomy.device(1.5)

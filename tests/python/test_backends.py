"""anatomy.backends: PyTorch's spellings of the engine's precision switches."""

import pytest

import anatomy as A


@pytest.fixture(autouse=True)
def restore_switches():
    saved = [
        A.backends.cuda.matmul.allow_tf32,
        A.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        A.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        A.backends.cuda.matmul.allow_fp16_accumulation,
        A.backends.cudnn.benchmark,
        A.backends.cudnn.allow_tf32,
    ]
    yield
    m = A.backends.cuda.matmul
    (
        m.allow_tf32,
        m.allow_fp16_reduced_precision_reduction,
        m.allow_bf16_reduced_precision_reduction,
        m.allow_fp16_accumulation,
        A.backends.cudnn.benchmark,
        A.backends.cudnn.allow_tf32,
    ) = saved


def test_defaults_are_pytorchs():
    assert A.backends.cuda.matmul.allow_tf32 is False
    assert A.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert A.backends.cuda.matmul.allow_bf16_reduced_precision_reduction is True
    assert A.backends.cuda.matmul.allow_fp16_accumulation is False
    assert A.backends.cudnn.benchmark is False
    assert A.backends.cudnn.allow_tf32 is True


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("matmul", "allow_tf32"),
        ("matmul", "allow_fp16_reduced_precision_reduction"),
        ("matmul", "allow_bf16_reduced_precision_reduction"),
        ("matmul", "allow_fp16_accumulation"),
        ("cudnn", "benchmark"),
        ("cudnn", "allow_tf32"),
    ],
)
def test_a_switch_reads_back_what_was_set_in_the_engine(namespace, name):
    target = A.backends.cuda.matmul if namespace == "matmul" else A.backends.cudnn
    before = getattr(target, name)
    setattr(target, name, not before)
    assert getattr(target, name) is (not before)
    getter = {
        "allow_tf32": "allow_tf32_matmul" if namespace == "matmul" else "allow_tf32_cudnn",
        "benchmark": "cudnn_benchmark",
    }.get(name, name)
    assert getattr(A._C._precision, getter)() is (not before)  # the engine's own switch
    setattr(target, name, before)
    assert getattr(target, name) is before


def test_a_value_that_is_not_a_bool_is_a_type_error_and_changes_nothing():
    with pytest.raises(TypeError, match="benchmark must be a bool, got int 1"):
        A.backends.cudnn.benchmark = 1
    assert A.backends.cudnn.benchmark is False
    with pytest.raises(TypeError, match="allow_tf32 must be a bool"):
        A.backends.cuda.matmul.allow_tf32 = "yes"
    assert A.backends.cuda.matmul.allow_tf32 is False


def test_a_misspelled_switch_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no switch 'allow_tf23'"):
        A.backends.cuda.matmul.allow_tf23 = True
    with pytest.raises(AttributeError, match="no switch 'benchmarks'"):
        A.backends.cudnn.benchmarks = True


def test_flags_sets_for_the_block_and_restores_even_on_error():
    with A.backends.cudnn.flags(benchmark=True, allow_tf32=False):
        assert A.backends.cudnn.benchmark is True
        assert A.backends.cudnn.allow_tf32 is False
    assert A.backends.cudnn.benchmark is False
    assert A.backends.cudnn.allow_tf32 is True
    with pytest.raises(ValueError), A.backends.cudnn.flags(benchmark=True):
        raise ValueError("inside")
    assert A.backends.cudnn.benchmark is False
    with A.backends.cudnn.flags(allow_tf32=False):  # benchmark=None leaves it as it is
        assert A.backends.cudnn.benchmark is False

"""Python operators and element-wise methods of anatomy.Tensor against NumPy: tensors and Python
numbers on either side, broadcasting, 0-d and 0-size shapes, non-contiguous views, dtype
promotion, and the in-place forms keeping the tensor's identity and storage."""

import operator

import numpy as np
import pytest

import anatomy
from tensor_reference import NP, assert_matches, random_array, to_numpy

SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((0, 3), (1, 3)), ((2, 0), (2, 1))]
ARITH = [operator.add, operator.sub, operator.mul]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [anatomy.float32, anatomy.float64, anatomy.int64, anatomy.int32])
@pytest.mark.parametrize("op", ARITH + COMPARE)
def test_binary_operators_match_numpy(shapes, dtype, op):
    rng = np.random.default_rng(0)
    a = random_array(shapes[0], NP[dtype], rng)
    b = random_array(shapes[1], NP[dtype], rng)
    assert_matches(op(anatomy.tensor(a), anatomy.tensor(b)), op(a, b))


@pytest.mark.parametrize("dtype", [anatomy.float32, anatomy.float64])
def test_division_power_modulo_and_matmul(dtype):
    rng = np.random.default_rng(1)
    a = random_array((3, 4), NP[dtype], rng)
    b = random_array((3, 4), NP[dtype], rng, low=0.5, high=3)
    ta, tb = anatomy.tensor(a), anatomy.tensor(b)
    assert_matches(ta / tb, a / b)
    assert_matches(ta // tb, np.floor_divide(a, b))
    assert_matches(ta % tb, np.mod(a, b))
    assert_matches(tb ** 2, b ** 2, rtol=1e-5)
    assert_matches(tb ** tb, b ** b, rtol=1e-4)
    assert_matches(2 ** ta, 2.0 ** a, rtol=1e-5)
    assert_matches(ta @ tb.T, a @ b.T, rtol=1e-4, atol=1e-4)
    assert_matches(-ta, -a)
    assert_matches(abs(ta), np.abs(a))


def test_python_numbers_on_either_side():
    a = np.array([[1.5, -2.0, 3.25]], dtype=np.float32)
    t = anatomy.tensor(a)
    assert_matches(t + 2, a + 2)
    assert_matches(2 + t, 2 + a)
    assert_matches(1 - t, 1 - a)
    assert_matches(3 * t, 3 * a)
    assert_matches(1 / t, 1 / a)
    assert_matches(7 // t, np.floor_divide(np.float32(7), a))
    assert_matches(7 % t, np.mod(np.float32(7), a))
    assert_matches(t < 2, a < 2)
    assert_matches(2 < t, 2 < a)
    assert_matches(t == 1.5, a == 1.5)
    assert_matches(t * np.float64(2), a * 2)


def test_integer_operators_follow_python_rules():
    a = np.array([-7, -3, 0, 4, 9], dtype=np.int64)
    b = np.array([2, 5, 3, -4, 4], dtype=np.int64)
    ta, tb = anatomy.tensor(a), anatomy.tensor(b)
    assert_matches(ta // tb, a // b)
    assert_matches(ta % tb, a % b)
    assert_matches(ta & tb, a & b)
    assert_matches(ta | tb, a | b)
    assert_matches(ta ^ tb, a ^ b)
    assert_matches(~ta, ~a)
    assert_matches(ta << 2, a << 2)
    assert_matches(ta >> 1, a >> 1)
    assert_matches(3 & ta, 3 & a)
    # true division of integers gives the default float, as in PyTorch
    assert (ta / tb).dtype == anatomy.float32
    m = np.array([True, False, True])
    assert_matches(~anatomy.tensor(m), ~m)


@pytest.mark.parametrize("left,right,expected", [
    (anatomy.int32, anatomy.int64, anatomy.int64),
    (anatomy.uint8, anatomy.int32, anatomy.int32),
    (anatomy.uint8, anatomy.bool, anatomy.uint8),
    (anatomy.int64, anatomy.float32, anatomy.float32),
    (anatomy.float16, anatomy.float32, anatomy.float32),
    (anatomy.bool, anatomy.int32, anatomy.int32),
    (anatomy.bfloat16, anatomy.float16, anatomy.float32),
])
def test_tensor_tensor_promotion(left, right, expected):
    out = anatomy.ones(2, dtype=left) + anatomy.ones(2, dtype=right)
    assert out.dtype == expected


def test_python_scalars_are_weak_in_promotion():
    assert (anatomy.ones(2, dtype=anatomy.float16) * 2.5).dtype == anatomy.float16
    assert (anatomy.ones(2, dtype=anatomy.int32) + 3).dtype == anatomy.int32
    assert (anatomy.ones(2, dtype=anatomy.int32) + 3.5).dtype == anatomy.float32
    assert (anatomy.ones(2, dtype=anatomy.uint8) * True).dtype == anatomy.uint8
    assert (2.5 * anatomy.ones(2, dtype=anatomy.int64)).dtype == anatomy.float32
    assert (7 // anatomy.ones(2, dtype=anatomy.int32)).dtype == anatomy.int32


def test_non_contiguous_operands():
    rng = np.random.default_rng(2)
    a = random_array((4, 6), np.float32, rng)
    t = anatomy.tensor(a)
    v = t.t()[::2]
    assert not v.is_contiguous()
    assert_matches(v * v + 1, a.T[::2] * a.T[::2] + 1)
    assert_matches(t[:, ::3] - t[:, 1::3], a[:, ::3] - a[:, 1::3])


@pytest.mark.parametrize("op,iop", [
    (operator.add, operator.iadd), (operator.sub, operator.isub), (operator.mul, operator.imul),
    (operator.truediv, operator.itruediv), (operator.floordiv, operator.ifloordiv),
    (operator.mod, operator.imod), (operator.pow, operator.ipow),
])
@pytest.mark.parametrize("other", ["tensor", "number"])
def test_in_place_operators_keep_identity_and_storage(op, iop, other):
    a = np.array([[1.5, 2.0], [3.0, 4.5]], dtype=np.float32)
    b = np.array([2.0, 0.5], dtype=np.float32) if other == "tensor" else 2.0
    t = anatomy.tensor(a)
    view = t[0]
    alias, ptr = t, t.data_ptr()
    t = iop(t, anatomy.tensor(b) if other == "tensor" else b)
    assert t is alias and t.data_ptr() == ptr
    expected = op(a, b).astype(np.float32)
    assert_matches(t, expected, rtol=1e-5)
    assert_matches(view, expected[0], rtol=1e-5)  # the view sees the write


def test_in_place_integer_and_bitwise():
    t = anatomy.tensor([5, 6, 7])
    alias = t
    t &= 6
    t |= anatomy.tensor([1, 0, 0])
    t ^= 2
    t <<= 1
    t >>= 1
    assert t is alias and t.tolist() == [((5 & 6) | 1) ^ 2, ((6 & 6) | 0) ^ 2, ((7 & 6) | 0) ^ 2]


def test_in_place_methods_return_self():
    t = anatomy.zeros(3)
    assert t.add_(1) is t and t.mul_(anatomy.tensor([1.0, 2.0, 3.0])) is t
    assert t.sub_(1, alpha=2) is t and t.div_(2) is t and t.exp_() is t and t.clamp_(max=1.0) is t
    assert t.tolist() == pytest.approx(np.minimum(np.exp((np.array([1, 2, 3.0]) - 2) / 2), 1.0).tolist(), rel=1e-6)


def test_in_place_result_dtype_must_fit():
    t = anatomy.ones(3, dtype=anatomy.int64)
    with pytest.raises(TypeError):
        t += 1.5
    assert t.tolist() == [1, 1, 1]


def test_methods_and_functions_match_operators():
    rng = np.random.default_rng(3)
    a = random_array((2, 3), np.float64, rng)
    b = random_array((2, 3), np.float64, rng, low=1, high=2)
    ta, tb = anatomy.tensor(a), anatomy.tensor(b)
    assert_matches(ta.add(tb, alpha=3), a + 3 * b)
    assert_matches(anatomy.add(ta, 2), a + 2)
    assert_matches(ta.sub(tb), a - b)
    assert_matches(anatomy.mul(ta, tb), a * b)
    assert_matches(ta.div(tb, rounding_mode="floor"), np.floor(a / b))
    assert_matches(ta.div(tb, rounding_mode="trunc"), np.trunc(a / b))
    assert_matches(anatomy.maximum(ta, tb), np.maximum(a, b))
    assert_matches(ta.pow(2), a ** 2)
    assert_matches(anatomy.pow(2, ta), 2.0 ** a)
    assert_matches(ta.eq(ta), np.ones_like(a, dtype=bool))
    assert_matches(anatomy.atan2(ta, tb), np.arctan2(a, b))


UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "abs": np.abs, "neg": np.negative, "floor": np.floor, "ceil": np.ceil, "sign": np.sign,
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "reciprocal": np.reciprocal,
    "square": np.square, "rsqrt": lambda x: 1 / np.sqrt(x), "log1p": np.log1p, "expm1": np.expm1,
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [anatomy.float32, anatomy.float64])
def test_unary_methods_functions_and_in_place(name, dtype):
    rng = np.random.default_rng(4)
    a = random_array((3, 4), NP[dtype], rng, low=0.1, high=3)
    t = anatomy.tensor(a)
    expected = UNARY[name](a)
    assert_matches(getattr(t, name)(), expected, rtol=1e-5)
    assert_matches(getattr(anatomy, name)(t), expected, rtol=1e-5)
    u = t.clone()
    assert getattr(u, name + "_")() is u
    assert_matches(u, expected, rtol=1e-5)


def test_integer_inputs_of_float_functions_give_default_float():
    t = anatomy.tensor([1, 4, 9])
    assert t.sqrt().dtype == anatomy.float32
    assert t.sqrt().tolist() == [1.0, 2.0, 3.0]


def test_half_and_bfloat16_arithmetic():
    a = np.array([0.5, 1.25, -3.0], dtype=np.float32)
    for dtype in (anatomy.float16, anatomy.bfloat16):
        t = anatomy.tensor(a, dtype=dtype)
        out = t * 2 + t
        assert out.dtype == dtype
        assert_matches(out.float(), a * 3, rtol=1e-2)


def test_unsupported_operand_types_raise_type_error():
    t = anatomy.ones(2)
    for bad in ("x", None, [1, 2], object()):
        with pytest.raises(TypeError):
            t + bad
        with pytest.raises(TypeError):
            bad * t
    assert (t == None) is False  # noqa: E711 (Python's fallback, as for torch)
    assert (t != "x") is True
    with pytest.raises(TypeError):
        t @ 2


def test_hash_is_identity():
    a, b = anatomy.ones(2), anatomy.ones(2)
    assert hash(a) != hash(b) or a is b
    assert len({a, b, a}) == 2
    d = {a: 1}
    assert d[a] == 1

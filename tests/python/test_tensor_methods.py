"""Methods of anatomy.Tensor against NumPy: metadata, views, copies and conversions, reductions
(with dim, keepdim, named tuples), softmax and matmul, and the Python protocols."""

import math
import warnings

import numpy as np
import pytest

import anatomy
from tensor_reference import NP, assert_matches, random_array, to_numpy


def sample(shape=(2, 3, 4), dtype=np.float32, seed=0):
    a = random_array(shape, dtype, np.random.default_rng(seed))
    return a, anatomy.tensor(a)


def test_metadata():
    a, t = sample()
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple) and isinstance(t.shape, anatomy.Size)
    assert repr(t.shape) == "anatomy.Size([2, 3, 4])" and t.shape.numel() == 24
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.dtype == anatomy.float32 and t.device == anatomy.device("cpu")
    assert t.element_size() == 4 and t.is_contiguous() and not t.is_cuda
    assert t[1].storage_offset() == 12 and t[1].data_ptr() == t.data_ptr() + 48
    assert isinstance(t, anatomy.Tensor)
    assert repr(anatomy.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    with pytest.raises(IndexError):
        t.size(3)


def test_views_share_storage_and_match_numpy():
    a, t = sample()
    assert_matches(t.view(6, 4), a.reshape(6, 4))
    assert_matches(t.view((4, 6)), a.reshape(4, 6))
    assert_matches(t.view(-1), a.reshape(-1))
    assert_matches(t.reshape(3, 8), a.reshape(3, 8))
    assert_matches(t.transpose(0, 2), a.transpose(2, 1, 0))
    assert_matches(t.permute(2, 0, 1), a.transpose(2, 0, 1))
    assert_matches(anatomy.permute(t, (1, 0, 2)), a.transpose(1, 0, 2))
    assert_matches(t[0].t(), a[0].T)
    assert_matches(t.T, a.transpose(2, 1, 0))
    assert_matches(t.unsqueeze(1), a[:, None])
    assert_matches(t.unsqueeze(1).squeeze(), a)
    assert_matches(t.unsqueeze(0).squeeze(0), a)
    assert_matches(t.flatten(), a.reshape(-1))
    assert_matches(t.flatten(1), a.reshape(2, 12))
    assert_matches(t[:, :1].expand(2, 5, 4), np.broadcast_to(a[:, :1], (2, 5, 4)))
    v = t.transpose(0, 1)
    assert v.data_ptr() == t.data_ptr() and not v.is_contiguous()
    c = v.contiguous()
    assert c.is_contiguous() and c.data_ptr() != t.data_ptr()
    assert_matches(c, a.transpose(1, 0, 2))
    v.fill_(0)  # a write through the view reaches the base
    assert to_numpy(t).sum() == 0


def test_clone_copy_fill_zero():
    a, t = sample()
    c = t.clone()
    assert c.data_ptr() != t.data_ptr()
    assert_matches(c, a)
    z = anatomy.zeros(2, 3, 4)
    assert z.copy_(t) is z
    assert_matches(z, a)
    z.copy_(anatomy.tensor([1, 2, 3, 4]))  # broadcast and converted
    assert_matches(z, np.broadcast_to(np.arange(1, 5, dtype=np.float32), (2, 3, 4)))
    assert z.zero_() is z and to_numpy(z).sum() == 0
    assert z.fill_(2.5) is z and to_numpy(z).min() == 2.5


def test_to_and_dtype_shorthands():
    _, t = sample()
    assert t.to(anatomy.float64).dtype == anatomy.float64
    assert t.to("cpu") is t or t.to("cpu").data_ptr() == t.data_ptr()
    assert t.to("cpu", anatomy.int64).dtype == anatomy.int64
    assert t.to(device="cpu", dtype=anatomy.float16).dtype == anatomy.float16
    assert t.to(anatomy.float32, copy=True).data_ptr() != t.data_ptr()
    assert t.to(anatomy.ones(1, dtype=anatomy.int32)).dtype == anatomy.int32
    assert t.cpu().device.type == "cpu"
    for name, dtype in [("float", anatomy.float32), ("double", anatomy.float64), ("half", anatomy.float16),
                        ("bfloat16", anatomy.bfloat16), ("long", anatomy.int64), ("int", anatomy.int32),
                        ("bool", anatomy.bool)]:
        assert getattr(t, name)().dtype == dtype
    assert anatomy.tensor([1.7, -1.7]).long().tolist() == [1, -1]
    with pytest.raises(TypeError):
        t.to(1.5)
    with pytest.raises(TypeError):
        t.to(anatomy.float32, bogus=True)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_full_reductions(shape, dtype):
    a, t = sample(shape, dtype)
    default = np.float32 if np.issubdtype(dtype, np.integer) else dtype
    assert_matches(t.sum(), np.sum(a, dtype=np.int64 if np.issubdtype(dtype, np.integer) else dtype), rtol=1e-5)
    assert_matches(anatomy.sum(t), a.sum(dtype=np.int64 if np.issubdtype(dtype, np.integer) else dtype), rtol=1e-5)
    if a.size:
        assert_matches(t.amax(), a.max())
        assert_matches(t.max(), a.max())
        assert_matches(t.min(), a.min())
        assert_matches(t.argmax(), np.argmax(a))
        assert_matches(t.argmin(), np.argmin(a))
    if np.issubdtype(dtype, np.floating):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of nothing is NaN, as ours
            expected_mean = np.mean(a, dtype=default)
        assert_matches(t.mean(), expected_mean, rtol=1e-5)
        assert_matches(t.prod(), np.prod(a.astype(np.float64)), rtol=1e-4)
        if a.size > 1:
            assert_matches(t.std(), np.std(a, ddof=1), rtol=1e-4)
            assert_matches(t.var(unbiased=False), np.var(a), rtol=1e-4)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 2), [1, 2]])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_along_dims(dim, keepdim):
    a, t = sample((3, 4, 5), np.float64)
    axis = tuple(dim) if isinstance(dim, list) else dim
    assert_matches(t.sum(dim, keepdim=keepdim), a.sum(axis=axis, keepdims=keepdim))
    assert_matches(t.sum(dim=dim, keepdim=keepdim), a.sum(axis=axis, keepdims=keepdim))
    assert_matches(t.mean(dim, keepdim), a.mean(axis=axis, keepdims=keepdim))
    assert_matches(t.prod(dim, keepdim), a.prod(axis=axis, keepdims=keepdim), rtol=1e-6)
    assert_matches(t.amax(dim, keepdim), a.max(axis=axis, keepdims=keepdim))
    assert_matches(t.amin(dim, keepdim), a.min(axis=axis, keepdims=keepdim))
    assert_matches(t.std(dim, keepdim=keepdim), a.std(axis=axis, ddof=1, keepdims=keepdim), rtol=1e-6)
    assert_matches(t.var(dim, correction=0, keepdim=keepdim), a.var(axis=axis, keepdims=keepdim), rtol=1e-6)
    assert_matches(t.sum(dim, keepdim, dtype=anatomy.float32), a.sum(axis=axis, keepdims=keepdim), rtol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_max_min_with_dim_are_named_tuples(dim):
    a, t = sample((4, 5), np.float32)
    out = t.max(dim)
    assert isinstance(out, tuple) and type(out).__name__ == "max"
    values, indices = out
    assert_matches(values, a.max(axis=dim))
    assert_matches(indices, a.argmax(axis=dim))
    assert out.values is values and out.indices is indices
    low = anatomy.min(t, dim, keepdim=True)
    assert_matches(low.values, a.min(axis=dim, keepdims=True))
    assert_matches(low.indices, a.argmin(axis=dim, keepdims=True))
    assert_matches(t.argmax(dim), a.argmax(axis=dim))
    assert_matches(t.argmin(dim, keepdim=True), a.argmin(axis=dim, keepdims=True))
    other = anatomy.zeros(4, 5)
    assert_matches(t.max(other), np.maximum(a, 0))


def test_sum_of_bool_and_int_promotes_to_int64():
    assert anatomy.tensor([True, True, False]).sum().dtype == anatomy.int64
    assert anatomy.tensor([1, 2], dtype=anatomy.int32).sum().dtype == anatomy.int64
    assert anatomy.tensor([True, False]).sum().item() == 1


def test_softmax_matmul_and_activations():
    a, t = sample((3, 5), np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    assert_matches(t.softmax(1), e / e.sum(axis=1, keepdims=True))
    assert_matches(anatomy.softmax(t, dim=0), np.exp(a) / np.exp(a).sum(axis=0))
    assert_matches(t.log_softmax(-1), np.log(e / e.sum(axis=1, keepdims=True)))
    b, u = sample((5, 2), np.float64, seed=1)
    assert_matches(t.matmul(u), a @ b)
    assert_matches(anatomy.matmul(t, u), a @ b)
    assert_matches(t @ u[:, 0], a @ b[:, 0])
    batch, tb = sample((2, 3, 5), np.float64, seed=2)
    assert_matches(tb @ u, batch @ b)
    assert_matches(t.relu(), np.maximum(a, 0))
    assert_matches(anatomy.sigmoid(t), 1 / (1 + np.exp(-a)))
    assert_matches(t.tanh(), np.tanh(a))


def test_top_level_functions():
    a, t = sample((2, 3), np.float32)
    b, u = sample((2, 3), np.float32, seed=5)
    assert_matches(anatomy.cat([t, u]), np.concatenate([a, b]))
    assert_matches(anatomy.cat((t, u), dim=1), np.concatenate([a, b], axis=1))
    assert_matches(anatomy.stack([t, u], 1), np.stack([a, b], axis=1))
    assert_matches(anatomy.where(t > 0, t, u), np.where(a > 0, a, b))
    assert_matches(anatomy.where(t > 0, t, 0.0), np.where(a > 0, a, 0))
    assert_matches(anatomy.exp(t), np.exp(a), rtol=1e-5)
    assert_matches(anatomy.clamp(t, -1, 1), np.clip(a, -1, 1))
    assert_matches(t.clamp(min=0), np.maximum(a, 0))
    assert_matches(anatomy.sum(t, 1), a.sum(axis=1), rtol=1e-5)
    assert_matches(anatomy.mean(t, dim=0), a.mean(axis=0), rtol=1e-5)
    assert_matches(anatomy.reshape(t, (3, 2)), a.reshape(3, 2))
    assert_matches(anatomy.transpose(t, 0, 1), a.T)
    assert anatomy.allclose(t, t.clone()) and anatomy.equal(t, t.clone())
    with pytest.raises(TypeError):
        anatomy.cat([t, 1])


def test_item_tolist_and_number_protocols():
    assert anatomy.tensor(2.5).item() == 2.5 and isinstance(anatomy.tensor(3).item(), int)
    assert anatomy.tensor([True]).item() is True
    assert anatomy.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert anatomy.tensor(7).tolist() == 7
    assert anatomy.zeros(0, 2).tolist() == []
    assert anatomy.tensor([0.5], dtype=anatomy.float16).tolist() == [0.5]
    assert float(anatomy.tensor([2.5])) == 2.5 and int(anatomy.tensor(3.9)) == 3
    assert bool(anatomy.tensor([1])) and not bool(anatomy.tensor(0.0))
    assert [10, 20, 30][anatomy.tensor(1)] == 20
    assert list(range(5))[anatomy.tensor(1):anatomy.tensor(3)] == [1, 2]
    with pytest.raises(RuntimeError):
        bool(anatomy.ones(2))
    with pytest.raises(RuntimeError):
        float(anatomy.ones(3))
    with pytest.raises(RuntimeError):
        anatomy.ones(2).item()
    with pytest.raises(TypeError):
        [1, 2][anatomy.tensor(1.0)]
    with pytest.raises(TypeError):
        len(anatomy.tensor(1.0))


def test_iteration_yields_views_of_rows():
    a, t = sample((3, 2))
    rows = list(t)
    assert len(rows) == 3
    for r, expected in zip(rows, a):
        assert_matches(r, expected)
    rows[0].fill_(9)
    assert to_numpy(t)[0].tolist() == [9, 9]
    with pytest.raises(TypeError):
        iter(anatomy.tensor(1.0))


def test_sort_topk_cumsum():
    a, t = sample((3, 6), np.float64)
    s = t.sort(dim=1, descending=True)
    assert_matches(s.values, -np.sort(-a, axis=1))
    assert_matches(s.indices, np.argsort(-a, axis=1, kind="stable"))
    top = t.topk(2)
    assert_matches(top.values, -np.sort(-a, axis=1)[:, :2])
    assert_matches(t.cumsum(1), np.cumsum(a, axis=1))
    assert math.isclose(t.norm().item(), float(np.linalg.norm(a)), rel_tol=1e-9)


def test_in_place_scans_and_triangles_return_self():
    a, t = sample((3, 4), np.float64)
    assert t.cumsum_(1) is t
    assert_matches(t, np.cumsum(a, axis=1))
    assert t.cumprod_(0, dtype=anatomy.float64) is t
    assert_matches(t, np.cumprod(np.cumsum(a, axis=1), axis=0))
    with pytest.raises(TypeError, match="cumsum_"):
        t.cumsum_(0, dtype=anatomy.float32)
    assert t.tril_(-1) is t
    assert t.triu_() is t
    assert_matches(t, np.zeros((3, 4)))


def test_reduction_out_forms_through_ops_aten():
    a, t = sample((3, 4), np.float64)
    out = anatomy.empty(3, dtype=anatomy.float64)
    assert anatomy.ops.aten.mean.out(t, [1], out=out) is not None
    assert_matches(out, a.mean(axis=1))
    anatomy.ops.aten.amax(t, [1], out=out)  # the overload chosen by out=
    assert_matches(out, a.max(axis=1))
    idx = anatomy.empty(4, dtype=anatomy.int64)
    anatomy.ops.aten.argmax(t, 0, out=idx)
    assert_matches(idx, a.argmax(axis=0))
    with pytest.raises(ValueError, match="var.out"):
        anatomy.ops.aten.var.correction_out(t, [0], out=out)

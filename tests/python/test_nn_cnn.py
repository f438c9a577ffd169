"""anatomy.nn's CNN layers and functions (Conv1d, Conv2d, ConvTranspose2d, BatchNorm1d/2d,
GroupNorm, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Upsample, Flatten): reprs, state_dict keys,
default initialization, the arguments refused, and each forward against a NumPy reference
(cnn_reference.py), BatchNorm's running statistics in training and eval."""

import math

import numpy as np
import pytest

import anatomy
from anatomy import nn
from anatomy.nn import functional as F
import cnn_reference as ref
from nn_reference import arr


@pytest.fixture(autouse=True)
def _seed():
    anatomy.manual_seed(0)


def close(t, expected, tol=1e-5):
    np.testing.assert_allclose(arr(t), expected, rtol=tol, atol=tol)


# ---- construction: reprs, state, initialization, bad arguments (no operator needed) ----

def test_reprs_match_pytorch():
    assert repr(nn.Conv2d(3, 16, 3, padding=1, bias=False)) == \
        "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"
    assert repr(nn.Conv2d(4, 8, (3, 5), stride=2, dilation=2, groups=4)) == \
        "Conv2d(4, 8, kernel_size=(3, 5), stride=(2, 2), dilation=(2, 2), groups=4)"
    assert repr(nn.Conv2d(4, 8, 3, padding="same")) == "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=same)"
    assert repr(nn.Conv1d(3, 16, 3)) == "Conv1d(3, 16, kernel_size=(3,), stride=(1,))"
    assert repr(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1, output_padding=1)) == \
        "ConvTranspose2d(16, 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))"
    assert repr(nn.BatchNorm2d(16)) == \
        "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
    assert repr(nn.BatchNorm1d(4, momentum=None)) == \
        "BatchNorm1d(4, eps=1e-05, momentum=None, affine=True, track_running_stats=True)"
    assert repr(nn.GroupNorm(4, 16)) == "GroupNorm(4, 16, eps=1e-05, affine=True)"
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d((3, 3), stride=1, padding=1)) == "AvgPool2d(kernel_size=(3, 3), stride=1, padding=1)"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(8, 8), mode="bilinear")) == "Upsample(size=(8, 8), mode='bilinear')"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


def test_state_dict_keys_and_buffers():
    assert list(nn.Conv2d(4, 8, 3).state_dict()) == ["weight", "bias"]
    assert list(nn.Conv2d(4, 8, 3, bias=False).state_dict()) == ["weight"]
    bn = nn.BatchNorm2d(6)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == anatomy.int64 and bn.num_batches_tracked.dim() == 0
    np.testing.assert_array_equal(arr(bn.weight), np.ones(6))
    np.testing.assert_array_equal(arr(bn.bias), np.zeros(6))
    np.testing.assert_array_equal(arr(bn.running_mean), np.zeros(6))
    np.testing.assert_array_equal(arr(bn.running_var), np.ones(6))
    assert list(nn.BatchNorm2d(6, affine=False).state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]
    assert list(nn.BatchNorm2d(6, track_running_stats=False).state_dict()) == ["weight", "bias"]
    assert list(nn.GroupNorm(2, 6).state_dict()) == ["weight", "bias"]
    assert len(nn.MaxPool2d(2).state_dict()) == 0
    bn.double()
    assert bn.running_mean.dtype == anatomy.float64 and bn.num_batches_tracked.dtype == anatomy.int64
    # A ResNet-style block's dotted names, as torchvision's.
    down = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
    assert list(down.state_dict()) == ["0.weight", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                       "1.num_batches_tracked"]


def test_default_initialization_bounds():
    conv = nn.Conv2d(64, 256, 3)
    assert tuple(conv.weight.shape) == (256, 64, 3, 3)
    bound = ref.kaiming_bound(64 * 9)
    w, b = arr(conv.weight), arr(conv.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    grouped = nn.Conv2d(8, 16, 3, groups=4)
    assert tuple(grouped.weight.shape) == (16, 2, 3, 3)
    t = nn.ConvTranspose2d(64, 128, 2)  # weight [in, out / groups, k, k]; fan_in from size(1), as PyTorch's
    assert tuple(t.weight.shape) == (64, 128, 2, 2)
    assert np.abs(arr(t.bias)).max() <= ref.kaiming_bound(128 * 4)
    assert nn.Conv1d(3, 4, 5).weight.requires_grad


@pytest.mark.parametrize("make, kind", [
    (lambda: nn.Conv2d(3, 16, 3, groups=2), ValueError),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), ValueError),
    (lambda: nn.Conv2d(4, 8, 3, groups=0), ValueError),
    (lambda: nn.Conv2d(-1, 8, 3), ValueError),
    (lambda: nn.Conv2d(3, 8, 0), ValueError),
    (lambda: nn.Conv2d(3, 8, (3, 3, 3)), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, stride=0), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, padding=-1), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, dilation=0), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, padding="full"), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, stride=2, padding="same"), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, padding_mode="mirror"), ValueError),
    (lambda: nn.Conv2d(3, 8, 3, padding_mode="reflect"), NotImplementedError),
    (lambda: nn.Conv1d(3, 8, 3, padding_mode="circular"), NotImplementedError),
    (lambda: nn.ConvTranspose2d(3, 8, 3, padding_mode="replicate"), ValueError),
    (lambda: nn.BatchNorm2d(-2), ValueError),
    (lambda: nn.GroupNorm(3, 16), ValueError),
    (lambda: nn.GroupNorm(0, 16), ValueError),
    (lambda: nn.MaxPool2d(0), ValueError),
    (lambda: nn.MaxPool2d(2, stride=0), ValueError),
    (lambda: nn.AvgPool2d(2, padding=-1), ValueError),
    (lambda: nn.AvgPool2d(2, divisor_override=0), ValueError),
    (lambda: nn.AdaptiveAvgPool2d(-1), ValueError),
    (lambda: nn.Upsample(), ValueError),
    (lambda: nn.Upsample(size=4, scale_factor=2), ValueError),
    (lambda: nn.Upsample(scale_factor=2, mode="cubic"), ValueError),
    (lambda: nn.Upsample(scale_factor=2, mode="bicubic"), NotImplementedError),
    (lambda: nn.Upsample(scale_factor=2, align_corners=True), ValueError),
])
def test_bad_arguments(make, kind):
    with pytest.raises(kind):
        make()


def test_padding_mode_error_names_the_mode():
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(NotImplementedError, match=mode):
            nn.Conv2d(3, 8, 3, padding_mode=mode)


def test_flatten():
    x = anatomy.randn(2, 3, 4, 5)
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 1)(x).shape) == (6, 4, 5)


def test_batch_norm_refuses_before_counting():
    bn = nn.BatchNorm2d(2)
    with pytest.raises(ValueError, match="4D"):
        bn(anatomy.randn(2, 2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(anatomy.randn(1, 2, 1, 1))
    assert int(bn.num_batches_tracked.item()) == 0
    with pytest.raises(ValueError, match="2D or 3D"):
        nn.BatchNorm1d(2)(anatomy.randn(2, 2, 3, 3))


# ---- forwards against NumPy ----

@pytest.mark.parametrize("kw", [{}, {"stride": (2, 1), "padding": 1}, {"dilation": (1, 2), "padding": (2, 1)},
                                {"groups": 2, "padding": 1}, {"padding": "same", "dilation": 2},
                                {"padding": "valid"}])
def test_conv2d_against_numpy(kw):
    conv = nn.Conv2d(4, 6, (3, 2), **kw)
    x = anatomy.randn(2, 4, 7, 8)
    p = kw.get("padding", 0)
    if p == "same":
        # The total padding dilation * (k - 1) = (4, 2), split evenly.
        xs = np.pad(arr(x), ((0, 0), (0, 0), (2, 2), (1, 1)))
        expected = ref.conv2d(xs, arr(conv.weight), arr(conv.bias), dilation=kw["dilation"])
        assert expected.shape[2:] == (7, 8)
    else:
        expected = ref.conv2d(arr(x), arr(conv.weight), arr(conv.bias), kw.get("stride", 1),
                              0 if p == "valid" else p, kw.get("dilation", 1), kw.get("groups", 1))
    close(conv(x), expected, 1e-4)
    close(conv(x[0]), expected[0], 1e-4)  # unbatched


def test_conv1d_and_conv_transpose2d_against_numpy():
    c1 = nn.Conv1d(3, 4, 5, stride=2, padding=2)
    s = anatomy.randn(2, 3, 16)
    expected = ref.conv2d(arr(s)[:, :, None, :], arr(c1.weight)[:, :, None, :], arr(c1.bias), (1, 2), (0, 2))
    close(c1(s), expected[:, :, 0, :], 1e-4)
    up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    x = anatomy.randn(2, 4, 5, 4)
    y = up(x)
    assert tuple(y.shape) == (2, 6, 10, 8)
    close(y, ref.conv_transpose2d(arr(x), arr(up.weight), arr(up.bias), 2, 1, 1, 2), 1e-4)
    assert tuple(up(x, output_size=[9, 7]).shape) == (2, 6, 9, 7)
    with pytest.raises(ValueError):
        up(x, output_size=[12, 8])


def test_conv_gradients_reach_the_parameters():
    conv = nn.Conv2d(2, 3, 3, padding=1)
    x = anatomy.randn(2, 2, 5, 5, requires_grad=True)
    (conv(x) * conv(x)).sum().backward()
    assert conv.weight.grad is not None and conv.bias.grad is not None and x.grad is not None


def test_pooling_against_numpy():
    x = anatomy.randn(2, 3, 8, 7)
    close(nn.MaxPool2d(2)(x), ref.max_pool2d(arr(x), 2))
    close(nn.MaxPool2d(3, stride=(2, 1), padding=1, dilation=1)(x), ref.max_pool2d(arr(x), 3, (2, 1), 1))
    close(nn.MaxPool2d((2, 3), dilation=2)(x), ref.max_pool2d(arr(x), (2, 3), (2, 3), 0, 2))
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    close(out, ref.max_pool2d(arr(x), 2))
    flat = arr(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, arr(idx).reshape(2, 3, -1), -1).reshape(arr(out).shape),
                                  arr(out))
    close(nn.AvgPool2d(2)(x), ref.avg_pool2d(arr(x), 2))
    close(nn.AvgPool2d(3, stride=1, padding=1)(x), ref.avg_pool2d(arr(x), 3, 1, 1))
    close(nn.AdaptiveAvgPool2d(1)(x), ref.adaptive_avg_pool2d(arr(x), 1))
    close(nn.AdaptiveAvgPool2d((3, 5))(x), ref.adaptive_avg_pool2d(arr(x), (3, 5)))
    close(nn.AdaptiveAvgPool2d((None, 2))(x), ref.adaptive_avg_pool2d(arr(x), (8, 2)))
    close(nn.MaxPool2d(2)(x[0]), ref.max_pool2d(arr(x)[:1], 2)[0])  # unbatched [C, H, W]


@pytest.mark.parametrize("kw, size, scales", [
    ({"scale_factor": 2}, (6, 8), (2.0, 2.0)),
    ({"size": (5, 7)}, (5, 7), (None, None)),
    ({"scale_factor": (1.5, 2), "mode": "bilinear"}, (4, 8), (1.5, 2.0)),
    ({"size": (5, 7), "mode": "bilinear", "align_corners": True}, (5, 7), (None, None)),
    ({"size": (2, 3), "mode": "bilinear"}, (2, 3), (None, None)),
])
def test_upsample_against_numpy(kw, size, scales):
    x = anatomy.randn(2, 3, 3, 4)
    up = nn.Upsample(**kw)
    expected = ref.interpolate(arr(x), size, kw.get("mode", "nearest"), kw.get("align_corners", False), scales)
    close(up(x), expected)
    close(F.interpolate(x, **kw), expected)


def test_batch_norm_training_eval_and_running_stats():
    bn = nn.BatchNorm2d(3)
    with anatomy.no_grad():
        bn.weight.normal_()
        bn.bias.normal_()
    x = anatomy.randn(4, 3, 5, 5) * 2 + 1
    xn = arr(x)
    mean, var, unbiased = xn.mean((0, 2, 3)), xn.var((0, 2, 3)), xn.var((0, 2, 3), ddof=1)
    close(bn(x), ref.batch_norm(xn, mean, var, arr(bn.weight), arr(bn.bias)), 1e-4)
    close(bn.running_mean, 0.1 * mean)
    close(bn.running_var, 0.9 + 0.1 * unbiased)
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    rm, rv = arr(bn.running_mean), arr(bn.running_var)
    close(bn(x), ref.batch_norm(xn, rm, rv, arr(bn.weight), arr(bn.bias)), 1e-4)
    close(bn.running_mean, rm)  # eval changes nothing
    assert int(bn.num_batches_tracked.item()) == 1


def test_batch_norm_cumulative_average_and_untracked():
    bn = nn.BatchNorm1d(4, momentum=None)
    a, b = anatomy.randn(8, 4), anatomy.randn(8, 4) + 3
    bn(a)
    bn(b)
    close(bn.running_mean, (arr(a).mean(0) + arr(b).mean(0)) / 2)
    close(bn.running_var, (arr(a).var(0, ddof=1) + arr(b).var(0, ddof=1)) / 2)
    s = anatomy.randn(3, 4, 5)  # [N, C, L]
    bn.reset_running_stats()
    y = arr(bn(s))
    assert np.abs(y.mean((0, 2))).max() < 1e-5
    free = nn.BatchNorm2d(2, affine=False, track_running_stats=False).eval()
    x = anatomy.randn(3, 2, 4, 4)
    close(free(x), ref.batch_norm(arr(x), arr(x).mean((0, 2, 3)), arr(x).var((0, 2, 3))), 1e-4)
    close(F.batch_norm(x, None, None, training=True), ref.batch_norm(arr(x), arr(x).mean((0, 2, 3)),
                                                                     arr(x).var((0, 2, 3))), 1e-4)


def test_group_norm_against_numpy():
    gn = nn.GroupNorm(2, 6)
    with anatomy.no_grad():
        gn.weight.normal_()
        gn.bias.normal_()
    x = anatomy.randn(2, 6, 3, 3)
    close(gn(x), ref.group_norm(arr(x), 2, arr(gn.weight), arr(gn.bias)), 1e-4)
    close(F.group_norm(x, 3), ref.group_norm(arr(x), 3), 1e-4)

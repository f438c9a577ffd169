"""NumPy references for the CNN layers' tests (CPU and GPU): convolution, pooling, batch and group
norm and interpolation written with plain loops from PyTorch's documented formulas, in float64."""

import math

import numpy as np


def pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """x [N, C, H, W], w [O, C / groups, kH, kW]."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def conv_transpose2d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """x [N, C_in, H, W], w [C_in, C_out / groups, kH, kW]: each input value scatters w."""
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = pair(stride), pair(padding), pair(output_padding), pair(dilation)
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    full = np.zeros((n, og * groups, full_h, full_w))
    cg = cin // groups
    for ci in range(cin):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for c in range(kw):
                        full[:, g * og:(g + 1) * og, i * sh + a * dh, j * sw + c * dw] += \
                            x[:, ci, i, j][:, None] * w[ci, :, a, c][None, :]
    out = full[:, :, ph:full_h - ph, pw:full_w - pw]
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def _windows(x, kernel, stride, padding, dilation, fill):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = pair(kernel), pair(stride), pair(padding), pair(dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    oh = (x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return [[xp[:, :, i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw] for j in range(ow)]
            for i in range(oh)]


def max_pool2d(x, kernel, stride=None, padding=0, dilation=1):
    win = _windows(x, kernel, kernel if stride is None else stride, padding, dilation, -np.inf)
    return np.stack([np.stack([w.max(axis=(2, 3)) for w in row], -1) for row in win], -2)


def avg_pool2d(x, kernel, stride=None, padding=0):
    """count_include_pad = True: the window's size divides."""
    win = _windows(x, kernel, kernel if stride is None else stride, padding, 1, 0.0)
    return np.stack([np.stack([w.mean(axis=(2, 3)) for w in row], -1) for row in win], -2)


def adaptive_avg_pool2d(x, out):
    oh, ow = pair(out)
    h, w = x.shape[-2:]
    res = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            res[..., i, j] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return res


def batch_norm(x, mean, var, w=None, b=None, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))


def group_norm(x, groups, w=None, b=None, eps=1e-5):
    n = x.shape[0]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))


def _source(out, inp, scale, align_corners, nearest):
    """PyTorch's source coordinate of each output index (scale: the given factor or None)."""
    d = np.arange(out, dtype=np.float64)
    ratio = 1.0 / scale if scale else inp / out
    if nearest:
        return np.minimum(np.floor(d * ratio).astype(np.int64), inp - 1)
    if align_corners:
        return d * ((inp - 1) / (out - 1)) if out > 1 else d * 0
    return np.maximum((d + 0.5) * ratio - 0.5, 0)


def interpolate(x, size, mode="nearest", align_corners=False, scales=(None, None)):
    h, w = x.shape[-2:]
    if mode == "nearest":
        ih = _source(size[0], h, scales[0], False, True)
        iw = _source(size[1], w, scales[1], False, True)
        return x[..., ih, :][..., iw]
    out = x
    for axis, (n, s) in zip((-2, -1), zip(size, scales)):
        src = _source(n, out.shape[axis], s, align_corners, False)
        lo = np.minimum(np.floor(src).astype(np.int64), out.shape[axis] - 1)
        hi = np.minimum(lo + 1, out.shape[axis] - 1)
        frac = src - lo
        shape = [1] * out.ndim
        shape[axis] = n
        a, b = np.take(out, lo, axis=axis), np.take(out, hi, axis=axis)
        out = a + (b - a) * frac.reshape(shape)
    return out


def kaiming_bound(fan_in):
    return 1 / math.sqrt(fan_in)

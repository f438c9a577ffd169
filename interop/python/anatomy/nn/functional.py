"""anatomy.nn.functional: the layers and losses as functions, with torch.nn.functional's names,
argument names and reduction strings, each one call of an aten operator (or a Tensor method).

The losses' ``reduction`` is a string here ('none', 'mean', 'sum') and an int in the operators'
schemas (0, 1, 2), as at::Reduction. ``size_average`` and ``reduce``, deprecated in PyTorch, are
read as PyTorch reads them when given.
"""

import math

from .. import ops as _ops
from ._factory import check_probability, expand

_aten = _ops.aten

__all__ = [
    "linear", "gelu", "relu", "layer_norm", "dropout", "softmax", "log_softmax",
    "scaled_dot_product_attention", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "binary_cross_entropy_with_logits", "embedding",
    "conv1d", "conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "batch_norm", "group_norm", "interpolate",
]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(function, reduction, size_average=None, reduce=None):
    """The operators' int for a reduction string, or for the legacy pair (torch's
    _Reduction.legacy_get_string: reduce=False is 'none', size_average=False is 'sum')."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{function}: {reduction!r} is not a valid value for reduction "
                         "(expected 'none', 'mean' or 'sum')")
    return _REDUCTIONS[reduction]


def linear(input, weight, bias=None):  # noqa: A002 (PyTorch's argument names)
    """input @ weight.T + bias."""
    return _aten.linear(input, weight, bias)


def gelu(input, approximate="none"):  # noqa: A002
    """GELU, exact (erf) or with approximate='tanh'."""
    return input.gelu(approximate=approximate)


def relu(input, inplace=False):  # noqa: A002
    """max(input, 0); inplace=True writes it into input."""
    return _aten.relu_(input) if inplace else _aten.relu(input)


def silu(input, inplace=False):  # noqa: A002
    """x * sigmoid(x); inplace=True writes it into input."""
    return _aten.silu_(input) if inplace else _aten.silu(input)


def sigmoid(input):  # noqa: A002
    """1 / (1 + exp(-x))."""
    return _aten.sigmoid(input)


def tanh(input):  # noqa: A002
    """The hyperbolic tangent."""
    return _aten.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    return _aten.softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    return _aten.elu_(input, alpha) if inplace else _aten.elu(input, alpha)


def selu(input, inplace=False):  # noqa: A002
    """elu with alpha 1.6732632423543772 and scale 1.0507009873554805."""
    return _aten.selu_(input) if inplace else _aten.selu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    """x where x > 0, negative_slope * x elsewhere."""
    return _aten.leaky_relu_(input, negative_slope) if inplace else _aten.leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """x clamped to [min_val, max_val]: min(max(x, min_val), max_val), as torch's, so a min_val above
    max_val gives max_val everywhere (the module Hardtanh refuses such bounds, as torch's asserts)."""
    return _aten.hardtanh_(input, min_val, max_val) if inplace else _aten.hardtanh(input, min_val, max_val)


def relu6(input, inplace=False):  # noqa: A002
    """x clamped to [0, 6]."""
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False):  # noqa: A002
    """x * tanh(softplus(x))."""
    return _aten.mish_(input) if inplace else _aten.mish(input)


def hardswish(input, inplace=False):  # noqa: A002
    """x * relu6(x + 3) / 6."""
    return _aten.hardswish_(input) if inplace else _aten.hardswish(input)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(x + 3) / 6."""
    return _aten.hardsigmoid_(input) if inplace else _aten.hardsigmoid(input)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalizes over the last len(normalized_shape) dimensions."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _aten.layer_norm(input, list(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight; eps
    defaults to the dtype's machine epsilon, as in PyTorch."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _aten.rms_norm(input, list(normalized_shape), weight, eps)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zeroes elements with probability p and scales the rest by 1/(1-p) while training."""
    out = _aten.dropout(input, check_probability("dropout", p), bool(training))
    return input.copy_(out) if inplace else out


def _softmax_dim(input, dim):  # noqa: A002
    """dim, or PyTorch's implicit choice when it is None (0 for 0-, 1- and 3-D inputs, else 1)."""
    if dim is not None:
        return dim
    return 0 if input.dim() in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """exp(x) / sum(exp(x)) along dim (in dtype when given)."""
    return _aten.softmax(input, _softmax_dim(input, dim), dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """x - logsumexp(x) along dim (in dtype when given)."""
    return _aten.log_softmax(input, _softmax_dim(input, dim), dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v over [..., L, E] queries and [..., S, E] keys; a bool mask
    marks the positions that may be attended to, a float mask is added to the scores."""
    dropout_p = check_probability("scaled_dot_product_attention", dropout_p)
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention: enable_gqa (grouped-query attention) is not supported")
    return _aten.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                              bool(is_causal), scale=scale)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits [N, C, ...] (or [C]) and class indices or class
    probabilities; one fused operator (log-softmax and the gather in one pass)."""
    r = _reduction("cross_entropy", reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    return _aten.cross_entropy_loss(input, target, weight, r, ignore_index, float(label_smoothing))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
             reduction="mean"):
    """The negative log-likelihood of class indices under log-probabilities [N, C, ...]."""
    r = _reduction("nll_loss", reduction, size_average, reduce)
    return _aten.nll_loss(input, target, weight, r, ignore_index)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """(input - target)^2, reduced."""
    return _aten.mse_loss(input, target, _reduction("mse_loss", reduction, size_average, reduce))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """|input - target|, reduced."""
    return _aten.l1_loss(input, target, _reduction("l1_loss", reduction, size_average, reduce))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
                   beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta; reduced."""
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must not be negative, got {beta}")
    r = _reduction("smooth_l1_loss", reduction, size_average, reduce)
    return _aten.smooth_l1_loss(input, target, r, float(beta))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    """Binary cross entropy of sigmoid(input) against target, computed stably from the logits."""
    r = _reduction("binary_cross_entropy_with_logits", reduction, size_average, reduce)
    return _aten.binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def embedding(input, weight, padding_idx=None):  # noqa: A002
    """The rows of weight at the indices of input; the padding_idx row, when given, receives no
    gradient (its positions read the row without history)."""
    out = _aten.embedding(weight, input)
    if padding_idx is None:
        return out
    if padding_idx < 0:
        padding_idx += weight.shape[0]
    is_pad = input.eq(padding_idx).unsqueeze(-1)
    return _aten.embedding(weight.detach(), input).where(is_pad, out)


def _conv(function, op, input, weight, bias, stride, padding, dilation, groups, dims):  # noqa: A002
    stride = list(expand(function, "stride", stride, dims, 1))
    dilation = list(expand(function, "dilation", dilation, dims, 1))
    if not isinstance(padding, str):
        padding = list(expand(function, "padding", padding, dims, 0))
    elif padding not in ("same", "valid"):
        raise ValueError(f"{function}: invalid padding string {padding!r}, should be one of 'same', 'valid'")
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """1-D convolution of [N, C_in, L] (or [C_in, L]) by weight [C_out, C_in / groups, k];
    padding ints or 'same' / 'valid'."""
    return _conv("conv1d", _aten.conv1d, input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution of [N, C_in, H, W] (or [C_in, H, W]) by weight [C_out, C_in / groups, kH,
    kW]; padding ints or 'same' / 'valid'."""
    return _conv("conv2d", _aten.conv2d, input, weight, bias, stride, padding, dilation, groups, 2)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """The transpose (gradient) of conv2d, weight [C_in, C_out / groups, kH, kW]."""
    f = "conv_transpose2d"
    return _aten.conv_transpose2d(input, weight, bias, list(expand(f, "stride", stride, 2, 1)),
                                  list(expand(f, "padding", padding, 2, 0)),
                                  list(expand(f, "output_padding", output_padding, 2, 0)), groups,
                                  list(expand(f, "dilation", dilation, 2, 1)))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """The maximum of each window; with return_indices, also its flat index in the H x W plane."""
    f = "max_pool2d"
    args = (list(expand(f, "kernel_size", kernel_size, 2, 1)),
            [] if stride is None else list(expand(f, "stride", stride, 2, 1)),
            list(expand(f, "padding", padding, 2, 0)), list(expand(f, "dilation", dilation, 2, 1)),
            bool(ceil_mode))
    if return_indices:
        return tuple(_aten.max_pool2d_with_indices(input, *args))
    return _aten.max_pool2d(input, *args)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """The mean of each window (the padding counted with count_include_pad)."""
    f = "avg_pool2d"
    if divisor_override == 0:
        raise ValueError("avg_pool2d: divisor_override must not be zero")
    return _aten.avg_pool2d(input, list(expand(f, "kernel_size", kernel_size, 2, 1)),
                            [] if stride is None else list(expand(f, "stride", stride, 2, 1)),
                            list(expand(f, "padding", padding, 2, 0)), bool(ceil_mode),
                            bool(count_include_pad), divisor_override)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """The mean over output_size adaptive windows; a None size keeps the input's."""
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        output_size = (output_size, output_size)
    if isinstance(output_size, (tuple, list)) and len(output_size) == 2:
        output_size = [input.shape[i - 2] if s is None else s for i, s in enumerate(output_size)]
    return _aten.adaptive_avg_pool2d(input, list(expand("adaptive_avg_pool2d", "output_size", output_size, 2, 0)))


def _check_batch_size(function, input):  # noqa: A002
    """PyTorch's _verify_batch_size: training needs more than one value per channel."""
    per_channel = input.shape[0] * math.prod(input.shape[2:])
    if per_channel == 1:
        raise ValueError(f"{function}: expected more than 1 value per channel when training, "
                         f"got input size {tuple(input.shape)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,  # noqa: A002
               momentum=0.1, eps=1e-5):
    """Normalizes each channel (dim 1) by the batch's statistics (training, which also updates the
    running ones in place when given) or by running_mean and running_var."""
    if training:
        _check_batch_size("batch_norm", input)
    # The schema's last argument is aten's cudnn_enabled (the backend picks its kernel itself).
    return _aten.batch_norm(input, weight, bias, running_mean, running_var, bool(training), float(momentum),
                            float(eps), True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalizes each group of channels over its channels and the spatial dims."""
    return _aten.group_norm(input, num_groups, weight, bias, float(eps))


_INTERPOLATE_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """Resamples [N, C, H, W] to size, or to each size times its scale_factor rounded down;
    mode 'nearest' or 'bilinear' (align_corners for bilinear only, False by default)."""
    if mode not in _INTERPOLATE_MODES:
        raise ValueError(f"interpolate: mode must be one of {', '.join(map(repr, _INTERPOLATE_MODES))}, got {mode!r}")
    if mode not in ("nearest", "bilinear"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented (only 'nearest' and 'bilinear' are)")
    if antialias:
        raise NotImplementedError("interpolate: antialias is not implemented")
    if align_corners is not None and mode == "nearest":
        raise ValueError("interpolate: align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: only one of size or scale_factor should be defined" if size is not None
                         else "interpolate: either size or scale_factor should be defined")
    if input.dim() != 4:
        raise NotImplementedError(f"interpolate: only 4-D [N, C, H, W] inputs are implemented, got a {input.dim()}-D input")
    scales = [None, None]
    if size is not None:
        size = list(expand("interpolate", "size", size, 2, 0))
    else:
        factors = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * 2
        if len(factors) != 2 or not all(isinstance(f, (int, float)) and math.isfinite(f) and f > 0 for f in factors):
            raise ValueError(f"interpolate: scale_factor must be one or 2 positive numbers, got {scale_factor!r}")
        size = [math.floor(input.shape[2 + i] * float(f)) for i, f in enumerate(factors)]
        if not recompute_scale_factor:
            scales = [float(f) for f in factors]
    if mode == "nearest":
        return _aten.upsample_nearest2d(input, size, *scales)
    return _aten.upsample_bilinear2d(input, size, bool(align_corners), *scales)

"""anatomy.nn.functional: the layers and losses as functions, with torch.nn.functional's names,
argument names and reduction strings, each one call of an aten operator (or a Tensor method).

The losses' ``reduction`` is a string here ('none', 'mean', 'sum') and an int in the operators'
schemas (0, 1, 2), as at::Reduction. ``size_average`` and ``reduce``, deprecated in PyTorch, are
read as PyTorch reads them when given.
"""

from .. import ops as _ops
from ._factory import check_probability

_aten = _ops.aten

__all__ = [
    "linear", "gelu", "relu", "layer_norm", "dropout", "softmax", "log_softmax",
    "scaled_dot_product_attention", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "binary_cross_entropy_with_logits", "embedding",
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


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalizes over the last len(normalized_shape) dimensions."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _aten.layer_norm(input, list(normalized_shape), weight, bias, eps)


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

"""NumPy references for the anatomy.nn tests (CPU and GPU): the layers, the losses and the
optimizers' steps written from PyTorch's documented formulas, in float64."""

import math

import numpy as np

import anatomy
from tensor_reference import to_numpy

_erf = np.vectorize(math.erf)


def arr(t):
    """A tensor's values as float64 (or int64) NumPy, detached and on the CPU."""
    out = to_numpy(t.detach().cpu())
    return out.astype(np.float64) if out.dtype.kind == "f" else out


def tensor(a, dtype=anatomy.float32, device="cpu", requires_grad=False):
    t = anatomy.tensor(np.asarray(a).tolist(), dtype=dtype, device=device)
    return t.requires_grad_() if requires_grad else t


def linear(x, w, b=None):
    return x @ w.T + (0 if b is None else b)


def relu(x):
    return np.maximum(x, 0)


def gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def layer_norm(x, w=None, b=None, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def softmax(x, dim=-1):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def log_softmax(x, dim=-1):
    m = x.max(dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(dim, keepdims=True))


def attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d) + mask) v over [..., L, D]; mask additive."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    return softmax(scores) @ v


def causal_mask(length):
    return np.triu(np.full((length, length), -np.inf), 1)


def mha(x_q, x_k, x_v, in_w, in_b, out_w, out_b, heads, mask=None):
    """Batch-first multi-head attention [N, L, E] with PyTorch's packed in_proj."""
    n, length, e = x_q.shape
    dh = e // heads

    def project(x, part):
        y = linear(x, in_w[part * e:(part + 1) * e], in_b[part * e:(part + 1) * e])
        return y.reshape(n, x.shape[1], heads, dh).transpose(0, 2, 1, 3)

    out = attention(project(x_q, 0), project(x_k, 1), project(x_v, 2), mask)
    return linear(out.transpose(0, 2, 1, 3).reshape(n, length, e), out_w, out_b)


def encoder_layer(x, sd, heads, activation, norm_first, mask=None):
    """TransformerEncoderLayer (dropout 0) from its state_dict as NumPy arrays."""
    def sa(h):
        return mha(h, h, h, sd["self_attn.in_proj_weight"], sd["self_attn.in_proj_bias"],
                   sd["self_attn.out_proj.weight"], sd["self_attn.out_proj.bias"], heads, mask)

    def ff(h):
        return linear(activation(linear(h, sd["linear1.weight"], sd["linear1.bias"])), sd["linear2.weight"],
                      sd["linear2.bias"])

    def norm(h, i):
        return layer_norm(h, sd[f"norm{i}.weight"], sd[f"norm{i}.bias"])

    if norm_first:
        x = x + sa(norm(x, 1))
        return x + ff(norm(x, 2))
    x = norm(x + sa(x), 1)
    return norm(x + ff(x), 2)


def reduce(loss, reduction, weights=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weights.sum() if weights is not None else loss.mean()


def cross_entropy(logits, target, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """PyTorch's cross_entropy over [N, C] logits and class indices."""
    n, c = logits.shape
    w = np.ones(c) if weight is None else weight
    lp = log_softmax(logits)
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    wt = w[t] * keep
    nll = -lp[np.arange(n), t] * wt
    smooth = -(lp * w).sum(-1) * keep
    if reduction == "none":
        return (1 - label_smoothing) * nll + label_smoothing / c * smooth
    if reduction == "sum":
        return (1 - label_smoothing) * nll.sum() + label_smoothing / c * smooth.sum()
    return (1 - label_smoothing) * nll.sum() / wt.sum() + label_smoothing / c * smooth.sum() / wt.sum()


def nll_loss(logp, target, weight=None, reduction="mean", ignore_index=-100):
    n, c = logp.shape
    w = np.ones(c) if weight is None else weight
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    wt = w[t] * keep
    return reduce(-logp[np.arange(n), t] * wt, reduction, wt)


def smooth_l1(d, beta):
    a = np.abs(d)
    return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


def bce_with_logits(x, y, weight=None, pos_weight=None):
    log_sig = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    pw = 1 if pos_weight is None else pos_weight
    loss = -(pw * y * log_sig + (1 - y) * log_one_minus)
    return loss * (1 if weight is None else weight)


def adamw_steps(p, grads, lr, betas, eps, weight_decay):
    """torch.optim.AdamW's parameter after one step per gradient in grads."""
    b1, b2 = betas
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lr * weight_decay)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr / (1 - b1 ** t) * m / (np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps)
    return p


def sgd_steps(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    buf = None
    for g in grads:
        d = g + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return p

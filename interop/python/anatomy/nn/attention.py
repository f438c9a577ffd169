"""MultiheadAttention on scaled_dot_product_attention (as the engine's nn/attention.cpp)."""

import math

from .. import _C
from . import functional as F
from . import init
from ._factory import check_probability, check_size, new_parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


def _additive(mask, dtype, what):
    """A mask as scores to add: bool True -> -inf (not allowed), floating as it is, in dtype."""
    if mask.dtype == _C.dtype.bool:
        return _C.zeros(list(mask.shape), dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not mask.is_floating_point():
        raise TypeError(f"MultiheadAttention: {what} must be bool or floating, got {mask.dtype}")
    return mask.to(dtype)


def _add(total, mask):
    return mask if total is None else total + mask


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim / num_heads features. The q, k and v
    projections share in_proj_weight [3 * embed_dim, embed_dim] (xavier_uniform_), the biases
    start at zero; out_proj is a Linear.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None). is_causal=True
    applies the causal mask by itself (PyTorch requires attn_mask with it, as a hint)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        check_size("MultiheadAttention", "embed_dim", embed_dim)
        if num_heads <= 0:
            raise ValueError(f"MultiheadAttention: num_heads must be positive, got {num_heads}")
        if embed_dim % num_heads != 0:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim other than "
                                      "embed_dim are not supported")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = check_probability("MultiheadAttention", dropout)
        self.batch_first = batch_first
        self.in_proj_weight = new_parameter((3 * embed_dim, embed_dim), device, dtype)
        self.register_parameter("in_proj_bias", new_parameter((3 * embed_dim,), device, dtype) if bias else None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _check_inputs(self, query, key, value):
        qdim = query.dim()
        if qdim not in (2, 3):
            raise ValueError(f"MultiheadAttention: query must be 2-D (unbatched) or 3-D (batched), "
                             f"got shape {list(query.shape)}")
        if key.dim() != qdim or value.dim() != qdim:
            raise ValueError(f"MultiheadAttention: query {list(query.shape)}, key {list(key.shape)} and value "
                             f"{list(value.shape)} must have the same number of dims")
        e = self.embed_dim
        if query.shape[-1] != e or key.shape[-1] != e or value.shape[-1] != e:
            raise ValueError(f"MultiheadAttention: query {list(query.shape)}, key {list(key.shape)} and value "
                             f"{list(value.shape)} must have embed_dim {e} features")
        if key.shape != value.shape:
            raise ValueError(f"MultiheadAttention: key {list(key.shape)} and value {list(value.shape)} must match")

    def _merged_mask(self, attn_mask, key_padding_mask, batched, n, l, s, dtype):
        """attn_mask and key_padding_mask as one additive mask broadcasting to [N, H, L, S]."""
        mask = None
        if attn_mask is not None:
            m = attn_mask
            is_2d = m.dim() == 2 and tuple(m.shape) == (l, s)
            is_3d = m.dim() == 3 and tuple(m.shape) == (n * self.num_heads, l, s)
            if not (is_2d or is_3d):
                raise ValueError(f"MultiheadAttention: attn_mask must be [{l}, {s}] or "
                                 f"[{n * self.num_heads}, {l}, {s}], got shape {list(m.shape)}")
            a = _additive(m, dtype, "attn_mask")
            mask = _add(mask, a.reshape(n, self.num_heads, l, s) if is_3d else a)
        if key_padding_mask is not None:
            m = key_padding_mask
            ok = tuple(m.shape) == ((n, s) if batched else (s,))
            if not ok:
                want = f"[{n}, {s}]" if batched else f"[{s}]"
                raise ValueError(f"MultiheadAttention: key_padding_mask must be {want}, got shape {list(m.shape)}")
            mask = _add(mask, _additive(m, dtype, "key_padding_mask").reshape(n, 1, 1, s))
        return mask

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        self._check_inputs(query, key, value)
        batched = query.dim() == 3

        def to_batch_major(t):
            return t.unsqueeze(0) if not batched else t if self.batch_first else t.transpose(0, 1)

        q_in, k_in, v_in = to_batch_major(query), to_batch_major(key), to_batch_major(value)
        n, l, s = q_in.shape[0], q_in.shape[1], k_in.shape[1]
        if k_in.shape[0] != n:
            raise ValueError(f"MultiheadAttention: query batch {n} and key batch {k_in.shape[0]} differ")
        e, h, dh = self.embed_dim, self.num_heads, self.head_dim

        # The three projections share in_proj_weight: rows [0, E) for q, [E, 2E) for k, [2E, 3E) for v.
        def project(x, part):
            b = None if self.in_proj_bias is None else self.in_proj_bias.narrow(0, part * e, e)
            y = F.linear(x, self.in_proj_weight.narrow(0, part * e, e), b)
            return y.reshape(n, x.shape[1], h, dh).transpose(1, 2)  # [N, H, len, Dh]

        q, k, v = project(q_in, 0), project(k_in, 1), project(v_in, 2)
        mask = self._merged_mask(attn_mask, key_padding_mask, batched, n, l, s, q.dtype)
        causal = bool(is_causal)
        if causal and (mask is not None or need_weights):  # the operator takes a mask or is_causal
            above = _C.ones([l, s], dtype=_C.dtype.bool, device=q.device).triu(1)
            mask = _add(mask, _additive(above, q.dtype, "the causal mask"))
            causal = False
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            # The scores formed here, as scaled_dot_product_attention's math (scale 1/sqrt(head_dim)).
            scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
            if mask is not None:
                scores = scores + mask
            weights = F.dropout(scores.softmax(-1), p, p > 0)
            out = weights.matmul(v)
            if average_attn_weights:
                weights = weights.mean(1)
            if not batched:
                weights = weights.squeeze(0)
        else:
            out = F.scaled_dot_product_attention(q, k, v, mask, p, causal)
        out = self.out_proj(out.transpose(1, 2).reshape(n, l, e))
        out = out.squeeze(0) if not batched else out if self.batch_first else out.transpose(0, 1)
        return out, weights

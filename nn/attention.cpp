// nn::MultiheadAttention (see attention.h): projections, head split, masks merged into one
// additive mask, and scaled_dot_product_attention.
#include "anatomy/nn/attention.h"

#include <cmath>
#include <limits>

#include "anatomy/nn/init.h"
#include "anatomy/nn/layer_args.h"

namespace anatomy::nn {

namespace {

int64_t checked_heads(int64_t embed_dim, int64_t num_heads) {
  checked_size("MultiheadAttention", "embed_dim", embed_dim);
  ANATOMY_CHECK(num_heads > 0, ValueError, "MultiheadAttention: num_heads must be positive, got {}", num_heads);
  ANATOMY_CHECK(embed_dim % num_heads == 0, ValueError,
                "MultiheadAttention: embed_dim {} must be divisible by num_heads {}", embed_dim, num_heads);
  return embed_dim / num_heads;
}

// A mask as scores to add: bool true -> -inf (not allowed), floating as it is, in dtype.
Tensor additive(const Tensor& mask, DType dtype, const char* what) {
  if (mask.dtype() == DType::Bool) {
    return zeros(mask.sizes(), TensorOptions().dtype(dtype).device(mask.device()))
        .masked_fill(mask, -std::numeric_limits<double>::infinity());
  }
  ANATOMY_CHECK(mask.is_floating_point(), TypeError, "MultiheadAttention: {} must be bool or floating, got {}", what,
                name(mask.dtype()));
  return mask.to(dtype);
}

void add_mask(std::optional<Tensor>& total, const Tensor& mask) { total = total ? total->add(mask) : mask; }

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_, bool bias,
                                       bool batch_first_, TensorOptions options)
    : Module("MultiheadAttention"),
      embed_dim(embed_dim_),
      num_heads(num_heads_),
      head_dim(checked_heads(embed_dim_, num_heads_)),
      dropout(checked_probability("MultiheadAttention", dropout_)),
      batch_first(batch_first_),
      in_proj_weight(register_parameter("in_proj_weight", empty({3 * embed_dim_, embed_dim_}, options))),
      in_proj_bias(register_parameter("in_proj_bias", bias ? empty({3 * embed_dim_}, options) : Tensor())),
      out_proj(register_module("out_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, bias, options))) {
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const AttentionOptions& options) {
  return forward_with_weights(query, key, value, options).first;
}

std::pair<Tensor, Tensor> MultiheadAttention::forward_with_weights(const Tensor& query, const Tensor& key,
                                                                   const Tensor& value, const AttentionOptions& masks) {
  const int64_t qdim = query.dim();
  ANATOMY_CHECK(qdim == 2 || qdim == 3, ValueError,
                "MultiheadAttention: query must be 2-D (unbatched) or 3-D (batched), got shape {}",
                shape_string(query.sizes()));
  ANATOMY_CHECK(key.dim() == qdim && value.dim() == qdim, ValueError,
                "MultiheadAttention: query {}, key {} and value {} must have the same number of dims",
                shape_string(query.sizes()), shape_string(key.sizes()), shape_string(value.sizes()));
  ANATOMY_CHECK(query.size(-1) == embed_dim && key.size(-1) == embed_dim && value.size(-1) == embed_dim, ValueError,
                "MultiheadAttention: query {}, key {} and value {} must have embed_dim {} features",
                shape_string(query.sizes()), shape_string(key.sizes()), shape_string(value.sizes()), embed_dim);
  ANATOMY_CHECK(key.sizes() == value.sizes(), ValueError, "MultiheadAttention: key {} and value {} must match",
                shape_string(key.sizes()), shape_string(value.sizes()));

  // To [N, L, E].
  const bool batched = qdim == 3;
  auto to_batch_major = [&](const Tensor& t) {
    return !batched ? t.unsqueeze(0) : batch_first ? t : t.transpose(0, 1);
  };
  const Tensor q_in = to_batch_major(query), k_in = to_batch_major(key), v_in = to_batch_major(value);
  const int64_t n = q_in.size(0), l = q_in.size(1), s = k_in.size(1);
  ANATOMY_CHECK(k_in.size(0) == n, ValueError, "MultiheadAttention: query batch {} and key batch {} differ", n,
                k_in.size(0));

  // The three projections share in_proj_weight: rows [0, E) for q, [E, 2E) for k, [2E, 3E) for v.
  auto project = [&](const Tensor& x, int64_t part) {
    std::optional<Tensor> b;
    if (in_proj_bias.defined()) b = in_proj_bias.narrow(0, part * embed_dim, embed_dim);
    Tensor y = linear(x, in_proj_weight.narrow(0, part * embed_dim, embed_dim), b);
    return y.reshape({n, x.size(1), num_heads, head_dim}).transpose(1, 2);  // [N, H, len, Dh]
  };
  const Tensor q = project(q_in, 0), k = project(k_in, 1), v = project(v_in, 2);

  std::optional<Tensor> mask;
  if (masks.attn_mask) {
    const Tensor& m = *masks.attn_mask;
    const bool is_2d = m.dim() == 2 && m.size(0) == l && m.size(1) == s;
    const bool is_3d = m.dim() == 3 && m.size(0) == n * num_heads && m.size(1) == l && m.size(2) == s;
    ANATOMY_CHECK(is_2d || is_3d, ValueError,
                  "MultiheadAttention: attn_mask must be [{}, {}] or [{}, {}, {}], got shape {}", l, s, n * num_heads,
                  l, s, shape_string(m.sizes()));
    Tensor a = additive(m, q.dtype(), "attn_mask");
    add_mask(mask, is_3d ? a.reshape({n, num_heads, l, s}) : a);
  }
  if (masks.key_padding_mask) {
    const Tensor& m = *masks.key_padding_mask;
    const bool ok = batched ? (m.dim() == 2 && m.size(0) == n && m.size(1) == s) : (m.dim() == 1 && m.size(0) == s);
    ANATOMY_CHECK(ok, ValueError, "MultiheadAttention: key_padding_mask must be [{}{}], got shape {}",
                  batched ? std::to_string(n) + ", " : "", s, shape_string(m.sizes()));
    add_mask(mask, additive(m, q.dtype(), "key_padding_mask").reshape({n, 1, 1, s}));
  }
  bool causal = masks.is_causal;
  if (causal && (mask || masks.need_weights)) {  // one mask: the engine takes a mask or is_causal
    Tensor above = ones({l, s}, TensorOptions().dtype(DType::Bool).device(q.device())).triu(1);
    add_mask(mask, additive(above, q.dtype(), "the causal mask"));
    causal = false;
  }

  const double p = is_training() ? dropout : 0.0;
  Tensor out, weights;
  if (masks.need_weights) {
    // The scores formed here, as scaled_dot_product_attention's math (scale 1/sqrt(head_dim)).
    Tensor scores = q.matmul(k.transpose(-2, -1)).mul(1.0 / std::sqrt(static_cast<double>(head_dim)));
    if (mask) scores = scores + *mask;
    weights = anatomy::dropout(scores.softmax(-1), p, p > 0);
    out = weights.matmul(v);
    if (masks.average_attn_weights) weights = weights.mean(std::vector<int64_t>{1});
    if (!batched) weights = weights.squeeze(0);
  } else {
    out = scaled_dot_product_attention(q, k, v, mask, p, causal);
  }
  out = out_proj->forward(out.transpose(1, 2).reshape({n, l, embed_dim}));
  out = !batched ? out.squeeze(0) : batch_first ? out : out.transpose(0, 1);
  return {out, weights};
}

}  // namespace anatomy::nn

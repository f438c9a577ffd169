// Dropout and scaled dot-product attention: composites of the element-wise, reduction and
// matrix-product operators, so every backend that has those runs them.
#include <cmath>
#include <limits>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

void check_dropout_args(const Tensor& input, double p) {
  ANATOMY_CHECK(input.is_floating_point(), TypeError, "dropout: expected a floating input, got {}",
                name(input.dtype()));
  ANATOMY_CHECK(p >= 0 && p <= 1, ValueError, "dropout: probability has to be between 0 and 1, but got {}", p);
}

std::tuple<Tensor, Tensor> native_dropout_composite(const Tensor& input, double p, bool train) {
  check_dropout_args(input, p);
  if (!train || p == 0) return {input.clone(), ones_like(input, TensorOptions().dtype(DType::Bool))};
  if (p == 1) return {zeros_like(input), zeros_like(input, TensorOptions().dtype(DType::Bool))};
  // Keep an element when its uniform draw in [0, 1) is at least p: probability 1 - p.
  Tensor keep = ge(rand_like(input, TensorOptions().dtype(DType::Float32)), Scalar(p));
  return {input * keep * Scalar(1.0 / (1.0 - p)), keep};
}

Tensor dropout_composite(const Tensor& input, double p, bool train) {
  check_dropout_args(input, p);
  if (!train || p == 0) return input;
  return std::get<0>(native_dropout_composite(input, p, train));
}

Tensor sdpa_math(const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
                 double dropout_p, bool is_causal, std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  ANATOMY_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, ValueError,
                "{}: query, key and value need at least 2 dims, got {}, {} and {}", op, query.dim(), key.dim(),
                value.dim());
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1);
  ANATOMY_CHECK(key.size(-1) == E, ValueError, "{}: query has embedding size {} but key has {}", op, E, key.size(-1));
  ANATOMY_CHECK(value.size(-2) == S, ValueError, "{}: key has {} positions but value has {}", op, S, value.size(-2));
  ANATOMY_CHECK(query.is_floating_point(), TypeError, "{}: expected floating inputs, got {}", op, name(query.dtype()));
  ANATOMY_CHECK(!(is_causal && attn_mask.has_value()), ValueError, "{}: pass either attn_mask or is_causal, not both",
                op);
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  Tensor scores = matmul(query, key.transpose(-2, -1)) * Scalar(s);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  // The masks fill `scores` in place: it is this function's own temporary (the product's scaled
  // copy, saved by no backward), and an out-of-place masked_fill would copy it first.
  if (is_causal) {
    Tensor future = triu(ones({L, S}, TensorOptions().dtype(DType::Bool).device(query.device())), 1);
    scores.masked_fill_(future, neg_inf);
  }
  if (attn_mask.has_value()) {
    if (attn_mask->dtype() == DType::Bool) scores.masked_fill_(logical_not(*attn_mask), neg_inf);
    else scores = scores + *attn_mask;
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = dropout(weights, dropout_p, true);
  return matmul(weights, value);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("dropout(Tensor input, float p, bool train) -> Tensor");
  m.def("native_dropout(Tensor input, float p, bool train) -> (Tensor, Tensor)");
  m.def(
      "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
      "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("dropout", ANATOMY_KERNEL(dropout_composite));
  m.impl("scaled_dot_product_attention", ANATOMY_KERNEL(sdpa_math));
}
ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("native_dropout", ANATOMY_KERNEL(native_dropout_composite));
}

Tensor dropout(const Tensor& input, double p, bool train) {
  ANATOMY_OP(op, "aten::dropout", Tensor(const Tensor&, double, bool));
  return op.call(input, p, train);
}
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, bool train) {
  ANATOMY_OP(op, "aten::native_dropout", std::tuple<Tensor, Tensor>(const Tensor&, double, bool));
  return op.call(input, p, train);
}
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  ANATOMY_OP(op, "aten::scaled_dot_product_attention",
             Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, double, bool,
                    std::optional<double>));
  return op.call(query, key, value, attn_mask, dropout_p, is_causal, scale);
}

}  // namespace anatomy

// MultiheadAttention and the TransformerEncoderLayer (pre- and post-norm) against a reference written with
// matmul and softmax per head: layouts (batch_first, sequence first, unbatched), bool and float
// attention masks, key padding, is_causal, gradients and bad inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

// Batch-first q [N, L, E], k and v [N, S, E]; mask additive [N, H, L, S] (or broadcastable).
Tensor reference_mha(const nn::MultiheadAttention& m, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& additive_mask) {
  const int64_t e = m.embed_dim, h = m.num_heads, d = m.head_dim;
  const int64_t n = q.size(0), l = q.size(1), s = k.size(1);
  auto proj = [&](const Tensor& x, int64_t part, int64_t len) {
    const Tensor w = m.in_proj_weight.narrow(0, part * e, e);
    const Tensor b = m.in_proj_bias.narrow(0, part * e, e);
    return (x.matmul(w.t()) + b).reshape({n, len, h, d}).permute({0, 2, 1, 3});
  };
  const Tensor scores = proj(q, 0, l).matmul(proj(k, 1, s).transpose(-2, -1)) / std::sqrt(double(d)) + additive_mask;
  const Tensor weights = scores.softmax(-1);
  const Tensor out = weights.matmul(proj(v, 2, s)).permute({0, 2, 1, 3}).reshape({n, l, e});
  return out.matmul(m.out_proj->weight.t()) + m.out_proj->bias;
}

void randomize(nn::Module& m) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : m.parameters()) p.normal_(0, 0.3);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("nn: MultiheadAttention against per-head matmul and softmax, in every layout") {
  manual_seed(10);
  nn::MultiheadAttention bf(8, 2, 0.0, true, /*batch_first=*/true);
  randomize(bf);
  const Tensor q = randn({3, 5, 8}), k = randn({3, 6, 8}), v = randn({3, 6, 8});
  const Tensor expected = reference_mha(bf, q, k, v, zeros({1}));
  CHECK(bf.forward(q, k, v).allclose(expected, 1e-4, 1e-5));
  // Self-attention through the one-tensor forward.
  CHECK(bf.forward(q).allclose(reference_mha(bf, q, q, q, zeros({1})), 1e-4, 1e-5));

  // Sequence-first: the same module's weights in a layer without batch_first.
  nn::MultiheadAttention sf(8, 2);
  sf.load_state_dict(bf.state_dict());
  const Tensor out = sf.forward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1));
  CHECK(out.sizes() == IntArrayRef{5, 3, 8});
  CHECK(out.transpose(0, 1).allclose(expected, 1e-4, 1e-5));
  // Unbatched: [L, E].
  const Tensor single = sf.forward(q.select(0, 1), k.select(0, 1), v.select(0, 1));
  CHECK(single.sizes() == IntArrayRef{5, 8});
  CHECK(single.allclose(expected.select(0, 1), 1e-4, 1e-5));
}

TEST_CASE("nn: MultiheadAttention masks: bool and float attn_mask, key_padding_mask, is_causal") {
  manual_seed(11);
  nn::MultiheadAttention m(8, 2, 0.0, true, true);
  randomize(m);
  const Tensor x = randn({2, 4, 8});
  // bool attn_mask [L, S]: true = not allowed.
  const Tensor causal_bool = ones({4, 4}, DType::Bool).triu(1);
  const Tensor causal_add = zeros({4, 4}).masked_fill(causal_bool, -kInf);
  const Tensor causal_expected = reference_mha(m, x, x, x, causal_add);
  CHECK(m.forward(x, x, x, {.attn_mask = causal_bool}).allclose(causal_expected, 1e-4, 1e-5));
  CHECK(m.forward(x, x, x, {.attn_mask = causal_add}).allclose(causal_expected, 1e-4, 1e-5));
  CHECK(m.forward(x, x, x, {.is_causal = true}).allclose(causal_expected, 1e-4, 1e-5));
  // A float mask per batch and head: [N * H, L, S].
  const Tensor per_head = randn({4, 4, 4});
  CHECK(m.forward(x, x, x, {.attn_mask = per_head})
            .allclose(reference_mha(m, x, x, x, per_head.reshape({2, 2, 4, 4})), 1e-4, 1e-5));
  // key_padding_mask [N, S]: true = ignore that key; with is_causal both apply.
  const Tensor pad = tensor<bool>({false, false, false, true, false, false, true, true}).reshape({2, 4});
  const Tensor pad_add = zeros({2, 4}).masked_fill(pad, -kInf).reshape({2, 1, 1, 4});
  CHECK(m.forward(x, x, x, {.key_padding_mask = pad}).allclose(reference_mha(m, x, x, x, pad_add), 1e-4, 1e-5));
  CHECK(m.forward(x, x, x, {.key_padding_mask = pad, .is_causal = true})
            .allclose(reference_mha(m, x, x, x, pad_add + causal_add), 1e-4, 1e-5));
}

TEST_CASE("nn: MultiheadAttention gradients reach every parameter; bad inputs are typed errors") {
  manual_seed(12);
  nn::MultiheadAttention m(8, 4, 0.0, true, true);
  const Tensor x = randn({2, 3, 8}).requires_grad_();
  m.forward(x, x, x, {.is_causal = true}).square().sum().backward();
  for (const auto& [name, p] : m.named_parameters()) {
    CAPTURE(name);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() > 0);
  }
  CHECK(x.grad().defined());
  CHECK_THROWS_AS(m.forward(randn({2, 3, 6})), ValueError);
  CHECK_THROWS_AS(m.forward(randn({8})), ValueError);
  CHECK_THROWS_AS(m.forward(x, randn({2, 5, 8}), randn({2, 4, 8})), ValueError);
  CHECK_THROWS_AS(m.forward(x, x, x, {.attn_mask = ones({2, 2}, DType::Bool)}), ValueError);
  CHECK_THROWS_AS(m.forward(x, x, x, {.key_padding_mask = ones({3, 3}, DType::Bool)}), ValueError);
  CHECK_THROWS_AS(m.forward(x, x, x, {.attn_mask = ones({3, 3}, DType::Int64)}), TypeError);
  nn::MultiheadAttention no_bias(8, 2, 0.0, /*bias=*/false);
  CHECK(no_bias.named_parameters().size() == 2);
  CHECK(no_bias.forward(randn({3, 2, 8})).sizes() == IntArrayRef{3, 2, 8});
}

TEST_CASE("nn: MultiheadAttention's weights, averaged over the heads or per head") {
  manual_seed(14);
  nn::MultiheadAttention m(8, 2);
  randomize(m);
  const Tensor x = randn({4, 3, 8});  // [L, N, E]
  const Tensor pad =
      tensor<bool>({false, false, false, true, false, true, false, false, false, false, false, false}).reshape({3, 4});
  const nn::AttentionOptions opts{.key_padding_mask = pad, .is_causal = true, .need_weights = true};
  auto [out, weights] = m.forward_with_weights(x, x, x, opts);
  CHECK(out.allclose(m.forward(x, x, x, {.key_padding_mask = pad, .is_causal = true}), 1e-4, 1e-5));
  // The reference's weights: softmax of the masked scores per head.
  const Tensor xb = x.transpose(0, 1);
  const Tensor wq = m.in_proj_weight.narrow(0, 0, 8), wk = m.in_proj_weight.narrow(0, 8, 8);
  const Tensor qh = (xb.matmul(wq.t()) + m.in_proj_bias.narrow(0, 0, 8)).reshape({3, 4, 2, 4}).transpose(1, 2);
  const Tensor kh = (xb.matmul(wk.t()) + m.in_proj_bias.narrow(0, 8, 8)).reshape({3, 4, 2, 4}).transpose(1, 2);
  const Tensor mask = zeros({3, 4}).masked_fill(pad, -kInf).reshape({3, 1, 1, 4}) +
                      zeros({4, 4}).masked_fill(ones({4, 4}, DType::Bool).triu(1), -kInf);
  const Tensor per_head = (qh.matmul(kh.transpose(-2, -1)) / 2.0 + mask).softmax(-1);
  CHECK(weights.sizes() == IntArrayRef{3, 4, 4});
  CHECK(weights.allclose(per_head.mean(std::vector<int64_t>{1}), 1e-4, 1e-6));
  nn::AttentionOptions each = opts;
  each.average_attn_weights = false;
  CHECK(m.forward_with_weights(x, x, x, each).second.allclose(per_head, 1e-4, 1e-6));
  // Unbatched: no batch dim; without need_weights no weights.
  CHECK(m.forward_with_weights(x.select(1, 0), x.select(1, 0), x.select(1, 0), {.need_weights = true}).second.sizes() ==
        IntArrayRef{4, 4});
  CHECK_FALSE(m.forward_with_weights(x, x, x, {}).second.defined());
}

TEST_CASE("nn: TransformerEncoderLayer is the post-norm block (norm_first = false) written out with its submodules") {
  manual_seed(14);
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.1, "relu", 1e-5, /*batch_first=*/true, /*norm_first=*/false);
  CHECK_FALSE(layer.norm_first);
  randomize(layer);
  layer.eval();
  const Tensor x = randn({2, 5, 8});
  const Tensor a = layer.norm1->forward(x + reference_mha(*layer.self_attn, x, x, x, zeros({5, 5})));
  const Tensor expected = layer.norm2->forward(a + layer.linear2->forward(layer.linear1->forward(a).relu()));
  CHECK(layer.forward(x).allclose(expected, 1e-4, 1e-5));
}

TEST_CASE("nn: TransformerEncoderLayer is the pre-norm block written out with its submodules") {
  manual_seed(13);
  for (const char* act : {"relu", "gelu"}) {
    CAPTURE(act);
    nn::TransformerEncoderLayer layer(8, 2, 16, 0.1, act, 1e-5, /*batch_first=*/true);
    randomize(layer);
    layer.eval();  // dropout off
    const Tensor x = randn({2, 5, 8});
    const Tensor causal = ones({5, 5}, DType::Bool).triu(1);
    const Tensor h = layer.norm1->forward(x);
    const Tensor a = x + reference_mha(*layer.self_attn, h, h, h, zeros({5, 5}).masked_fill(causal, -kInf));
    Tensor f = layer.linear1->forward(layer.norm2->forward(a));
    f = std::string(act) == "gelu" ? f.gelu() : f.relu();
    const Tensor expected = a + layer.linear2->forward(f);
    CHECK(layer.forward(x, {.attn_mask = causal}).allclose(expected, 1e-4, 1e-5));
    CHECK(layer.forward(x, {.is_causal = true}).allclose(expected, 1e-4, 1e-5));
  }
  // In training mode dropout is active: two calls differ; in eval they agree.
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.5);
  const Tensor x = randn({5, 2, 8});
  CHECK_FALSE(layer.forward(x).equal(layer.forward(x)));
  layer.eval();
  CHECK(layer.forward(x).equal(layer.forward(x)));
}

// The neural-network operators in the fuzzer's catalogue (catalogue.h): softmax, the norms,
// convolutions, pooling, resampling, products, joins and losses. Their arguments are mostly a
// valid layer of self's shape, with parameters of the wrong shape or dtype, windows, strides,
// paddings and dilations of zero, negative or extreme size, group counts that do not divide the
// channels, class indices out of range and epsilons that are not numbers. Optional tensors
// (weight, bias) travel in a tensor list (X) whose entries may be none.
#include <cmath>

#include "catalogue.h"
#include "generator.h"

namespace anatomy_fuzz {
namespace {

using anatomy::DType;
using anatomy::Tensor;
using Out = std::vector<Tensor>;

std::optional<Tensor> opt(const std::vector<Tensor>& list, size_t k) {
  if (k >= list.size() || !list[k].defined()) return std::nullopt;
  return list[k];
}

DType floating(Gen& g) {
  if (g.chance(0.85)) return g.chance(0.7) ? DType::Float32 : DType::Float64;
  return g.dtype();
}

// A layer's input: (N, C, spatial...) with `spatial` dims mostly, the odd other rank.
TensorSpec layer_input(Gen& g, int64_t spatial) {
  std::vector<int64_t> s = {g.uniform(0, 3), g.uniform(1, 4)};
  for (int64_t d = 0; d < spatial; ++d) s.push_back(g.chance(0.1) ? 0 : g.uniform(1, 6));
  if (g.chance(0.1)) s = g.shape();
  return g.tensor(floating(g), s);
}

// A parameter of `shape` (mostly), of self's dtype (mostly), or none.
std::optional<TensorSpec> parameter(Gen& g, const SelfInfo& s, std::vector<int64_t> shape, double none = 0.3) {
  if (g.chance(none)) return std::nullopt;
  if (g.chance(0.1)) shape = g.shape(2);
  return g.tensor(g.chance(0.85) ? s.dtype : g.dtype(), shape);
}

Number epsilon(Gen& g) {
  static const std::vector<double> kOdd = {0.0, -1.0, std::nan(""), INFINITY, 1e300};
  return Number::of_float(g.chance(0.85) ? 1e-5 : g.pick(kOdd));
}

// A window's sizes (kernel, stride, padding, dilation): `n` entries of about `typical`, or one
// entry, none, zero, negative or extreme.
std::vector<int64_t> window(Gen& g, int64_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(static_cast<size_t>(g.chance(0.85) ? n : g.uniform(0, 3)));
  for (int64_t& x : v) x = g.chance(0.9) ? g.uniform(lo, hi) : g.chance(0.5) ? g.uniform(-2, 0) : g.extreme();
  return v;
}

int64_t channels(const SelfInfo& s) { return s.dim() >= 2 ? s.sizes[1] : 1; }

// Mostly a divisor of c, else anything.
int64_t groups_of(Gen& g, int64_t c) {
  if (g.chance(0.85) && c > 0) {
    for (int64_t k = g.uniform(1, c); k >= 1; --k) {
      if (c % k == 0) return k;
    }
  }
  return g.chance(0.5) ? g.uniform(-1, 5) : g.extreme();
}

// The trailing dims of self (1 to 3 of them), or a shape that does not match.
std::vector<int64_t> normalized_shape(Gen& g, const SelfInfo& s) {
  if (g.chance(0.1) || s.dim() == 0) return g.chance(0.5) ? std::vector<int64_t>{} : g.shape(2);
  const int64_t k = g.uniform(1, std::min<int64_t>(s.dim(), 3));
  std::vector<int64_t> shape(s.sizes.end() - k, s.sizes.end());
  if (g.chance(0.05)) shape.back() += 1;
  return shape;
}

// convolution's arguments after input: weight, (bias), stride, padding, dilation, transposed,
// output_padding, groups.
void conv_args(Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
  const int64_t spatial = std::max<int64_t>(s.dim() - 2, 1), c = channels(s);
  const bool transposed = g.chance(0.25);
  const int64_t groups = groups_of(g, c);
  const int64_t per_group = groups > 0 && c % groups == 0 ? c / groups : c;
  const int64_t out = g.uniform(1, 4) * (groups > 0 && groups < 8 ? groups : 1);
  std::vector<int64_t> w =
      transposed ? std::vector<int64_t>{c, out / std::max<int64_t>(groups, 1)} : std::vector<int64_t>{out, per_group};
  if (w[1] == 0) w[1] = 1;
  for (int64_t d = 0; d < spatial; ++d) w.push_back(g.chance(0.9) ? g.uniform(1, 3) : g.uniform(0, 7));
  if (g.chance(0.05)) w.pop_back();
  args.emplace_back(g.tensor(g.chance(0.9) ? s.dtype : g.dtype(), w));
  args.emplace_back(TensorList{parameter(g, s, {transposed ? w[1] * std::max<int64_t>(groups, 1) : out})});
  args.emplace_back(window(g, spatial, 1, 2));
  args.emplace_back(window(g, spatial, 0, 2));
  args.emplace_back(window(g, spatial, 1, 2));
  args.emplace_back(transposed);
  // output_padding: zeros mostly (a plain convolution takes nothing else), else 0 or 1.
  args.emplace_back(g.chance(0.7) ? std::vector<int64_t>(static_cast<size_t>(spatial), 0) : window(g, spatial, 0, 1));
  args.emplace_back(groups);
}

// A class-index target for (N, C, d...) logits: int64 in [0, C) mostly, ignore_index, or out of
// range; or class probabilities of self's shape.
TensorSpec class_target(Gen& g, const SelfInfo& s, bool probabilities_ok) {
  if (probabilities_ok && g.chance(0.2)) return g.tensor(s.dtype, s.sizes);
  std::vector<int64_t> shape = s.sizes;
  if (shape.size() >= 2) shape.erase(shape.begin() + 1);
  else shape.clear();
  if (g.chance(0.05)) shape.push_back(2);
  TensorSpec t = g.index_tensor(channels(s), shape, false);
  if (g.chance(0.1)) t.values.push_back(Number::of_int(-100));
  return t;
}

int64_t reduction(Gen& g) { return g.chance(0.95) ? g.uniform(0, 2) : g.any_int(); }

void pool_args(Gen& g, const SelfInfo&, std::vector<Arg>& args) {
  args.emplace_back(window(g, 2, 1, 3));
  args.emplace_back(g.chance(0.2) ? std::vector<int64_t>{} : window(g, 2, 1, 2));
  args.emplace_back(window(g, 2, 0, 1));
}

TensorSpec image(Gen& g) { return layer_input(g, 2); }

std::vector<int64_t> output_size(Gen& g) { return window(g, 2, 0, 7); }

// Products: an (n, k) self and a (k, m) other, mostly.
TensorSpec matrix(Gen& g) {
  return g.tensor(floating(g), g.chance(0.9) ? std::vector<int64_t>{g.uniform(0, 4), g.uniform(0, 4)} : g.shape());
}

std::vector<int64_t> product_other(Gen& g, const SelfInfo& s) {
  const int64_t k = s.dim() >= 1 ? s.sizes.back() : 1;
  std::vector<int64_t> shape = {g.chance(0.9) ? k : g.uniform(0, 4), g.uniform(0, 4)};
  if (s.dim() == 3 && g.chance(0.8)) shape.insert(shape.begin(), s.sizes[0]);
  return shape;
}

}  // namespace

std::vector<OpDef> nn_ops() {
  return {
      // ---- softmax ----
      {"softmax", "Tiu", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::softmax(a.t(0), a.i(1), a.u(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.chance(0.8) ? std::nullopt : g.maybe_dtype());
       }},
      {"log_softmax", "Tiu", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::log_softmax(a.t(0), a.i(1), a.u(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.chance(0.8) ? std::nullopt : g.maybe_dtype());
       }},
      // ---- norms ----
      {"native_layer_norm", "TlXs", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [y, mean, rstd] = anatomy::native_layer_norm(a.t(0), a.l(1), opt(a.x(2), 0), opt(a.x(2), 1), a.f(3));
         return {y, mean, rstd};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         std::vector<int64_t> shape = normalized_shape(g, s);
         args.emplace_back(shape);
         args.emplace_back(TensorList{parameter(g, s, shape), parameter(g, s, shape)});
         args.emplace_back(epsilon(g));
       },
       [](Gen& g) { return g.tensor(floating(g), g.shape()); }},
      {"rms_norm", "TlXs", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::rms_norm(a.t(0), a.l(1), opt(a.x(2), 0), a.f(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         std::vector<int64_t> shape = normalized_shape(g, s);
         args.emplace_back(shape);
         args.emplace_back(TensorList{parameter(g, s, shape)});
         args.emplace_back(epsilon(g));
       },
       [](Gen& g) { return g.tensor(floating(g), g.shape()); }},
      {"group_norm", "TiXs", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         return {anatomy::group_norm(a.t(0), a.i(1), opt(a.x(2), 0), opt(a.x(2), 1), a.f(3))};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t c = channels(s);
         args.emplace_back(groups_of(g, c));
         args.emplace_back(TensorList{parameter(g, s, {c}), parameter(g, s, {c})});
         args.emplace_back(epsilon(g));
       },
       [](Gen& g) { return layer_input(g, g.uniform(0, 2)); }},
      // Running statistics only in eval, where they are read: training would write them, and
      // this row's inputs must come back unchanged.
      {"native_batch_norm", "TXbss", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [y, mean, invstd] = anatomy::native_batch_norm(a.t(0), opt(a.x(1), 0), opt(a.x(1), 1), opt(a.x(1), 2),
                                                             opt(a.x(1), 3), a.b(2), a.f(3), a.f(4));
         return {y, mean, invstd};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t c = channels(s);
         const bool training = g.chance(0.6);
         TensorList params{parameter(g, s, {c}), parameter(g, s, {c})};
         if (!training) {
           params.push_back(parameter(g, s, {c}, 0.2));
           params.push_back(parameter(g, s, {c}, 0.2));
         }
         args.emplace_back(params);
         args.emplace_back(training);
         args.emplace_back(Number::of_float(0.1));
         args.emplace_back(epsilon(g));
       },
       [](Gen& g) { return layer_input(g, g.uniform(0, 2)); }},
      // ---- convolution ----
      {"convolution", "TTXlllbli", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         return {anatomy::convolution(a.t(0), a.t(1), opt(a.x(2), 0), a.l(3), a.l(4), a.l(5), a.b(6), a.l(7), a.i(8))};
       },
       conv_args, [](Gen& g) { return layer_input(g, g.uniform(1, 3)); }},
      // ---- pooling and resampling ----
      {"max_pool2d_with_indices", "Tllllb", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [values, indices] = anatomy::max_pool2d_with_indices(a.t(0), a.l(1), a.l(2), a.l(3), a.l(4), a.b(5));
         return {values, indices};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         pool_args(g, s, args);
         args.emplace_back(window(g, 2, 1, 2));
         args.emplace_back(g.chance(0.3));
       },
       image},
      {"avg_pool2d", "Tlllbbo", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         return {anatomy::avg_pool2d(a.t(0), a.l(1), a.l(2), a.l(3), a.b(4), a.b(5), a.o(6))};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         pool_args(g, s, args);
         args.emplace_back(g.chance(0.3));
         args.emplace_back(g.chance(0.7));
         args.emplace_back(g.chance(0.8) ? std::optional<int64_t>() : std::optional<int64_t>(g.any_int()));
       },
       image},
      {"adaptive_avg_pool2d", "Tl", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::adaptive_avg_pool2d(a.t(0), a.l(1))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) { args.emplace_back(output_size(g)); }, image},
      {"upsample_nearest2d", "Tl", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::upsample_nearest2d(a.t(0), a.l(1))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) { args.emplace_back(output_size(g)); }, image},
      {"upsample_bilinear2d", "Tlb", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::upsample_bilinear2d(a.t(0), a.l(1), a.b(2))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(output_size(g));
         args.emplace_back(g.chance(0.5));
       },
       image},
      // ---- products ----
      {"mm", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::mm(a.t(0), a.t(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.tensor(g.chance(0.9) ? s.dtype : g.dtype(), product_other(g, s)));
       },
       matrix},
      {"matmul", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::matmul(a.t(0), a.t(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         std::vector<int64_t> other = product_other(g, s);
         if (g.chance(0.2)) other.erase(other.begin() + static_cast<int64_t>(other.size()) - 1);  // a vector
         args.emplace_back(g.tensor(g.chance(0.9) ? s.dtype : g.dtype(), other));
       },
       matrix},
      {"addmm", "TTTss", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::addmm(a.t(0), a.t(1), a.t(2), a.s(3), a.s(4))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t n = g.uniform(0, 4), k = g.uniform(0, 4);
         const int64_t m = s.dim() >= 1 ? s.sizes.back() : 1;
         args.emplace_back(g.tensor(s.dtype, {n, k}));
         args.emplace_back(g.tensor(s.dtype, {g.chance(0.9) ? k : k + 1, m}));
         args.emplace_back(g.scalar(s.dtype));
         args.emplace_back(g.scalar(s.dtype));
       },
       matrix},
      {"linear", "TTX", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::linear(a.t(0), a.t(1), opt(a.x(2), 0))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t in = s.dim() >= 1 ? s.sizes.back() : 1, out = g.uniform(0, 4);
         args.emplace_back(g.tensor(g.chance(0.9) ? s.dtype : g.dtype(), {out, g.chance(0.9) ? in : in + 1}));
         args.emplace_back(TensorList{parameter(g, s, {out})});
       }},
      // ---- joins: self first, then the list ----
      {"cat", "TXi", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         std::vector<Tensor> all = {a.t(0)};
         all.insert(all.end(), a.x(1).begin(), a.x(1).end());
         return {anatomy::cat(all, a.i(2))};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t d = g.dim(s.dim());
         TensorList rest;
         for (int64_t k = g.uniform(0, 3); k > 0; --k) {
           std::vector<int64_t> shape = s.sizes;
           if (!shape.empty() && g.chance(0.8))
             shape[static_cast<size_t>((d % s.dim() + s.dim()) % s.dim())] = g.uniform(0, 3);
           if (g.chance(0.1)) shape = g.shape();
           rest.push_back(g.tensor(g.chance(0.85) ? s.dtype : g.dtype(), shape));
         }
         args.emplace_back(rest);
         args.emplace_back(d);
       }},
      {"stack", "TXi", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         std::vector<Tensor> all = {a.t(0)};
         all.insert(all.end(), a.x(1).begin(), a.x(1).end());
         return {anatomy::stack(all, a.i(2))};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         TensorList rest;
         for (int64_t k = g.uniform(0, 3); k > 0; --k) {
           rest.push_back(g.tensor(g.chance(0.85) ? s.dtype : g.dtype(), g.chance(0.9) ? s.sizes : g.shape()));
         }
         args.emplace_back(rest);
         args.emplace_back(g.dim(s.dim() + 1));
       }},
      // ---- losses ----
      {"cross_entropy", "TTXiis", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         return {anatomy::cross_entropy(a.t(0), a.t(1), opt(a.x(2), 0), a.i(3), a.i(4), a.f(5))};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(class_target(g, s, true));
         args.emplace_back(TensorList{parameter(g, s, {channels(s)}, 0.7)});
         args.emplace_back(reduction(g));
         args.emplace_back(g.chance(0.8) ? int64_t{-100} : g.uniform(-1, 3));
         static const std::vector<double> kSmoothing = {0.0, 0.0, 0.1, 1.0, -0.5, 2.0, std::nan("")};
         args.emplace_back(Number::of_float(g.pick(kSmoothing)));
       },
       [](Gen& g) { return layer_input(g, g.chance(0.7) ? 0 : g.uniform(1, 2)); }},
      {"nll_loss", "TTXii", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::nll_loss(a.t(0), a.t(1), opt(a.x(2), 0), a.i(3), a.i(4))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(class_target(g, s, false));
         args.emplace_back(TensorList{parameter(g, s, {channels(s)}, 0.7)});
         args.emplace_back(reduction(g));
         args.emplace_back(g.chance(0.8) ? int64_t{-100} : g.uniform(-1, 3));
       },
       [](Gen& g) { return layer_input(g, g.chance(0.7) ? 0 : 1); }},
      {"mse_loss", "TTi", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::mse_loss(a.t(0), a.t(1), a.i(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.tensor(g.chance(0.9) ? s.dtype : g.dtype(), g.chance(0.85) ? s.sizes : g.shape()));
         args.emplace_back(reduction(g));
       }},
      {"one_hot", "Ti", Kind::Fresh, false, [](const Bound& a) -> Out { return {anatomy::one_hot(a.t(0), a.i(1))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(g.chance(0.3) ? int64_t{-1} : g.chance(0.85) ? g.uniform(0, 6) : g.any_int());
       },
       [](Gen& g) { return g.index_tensor(5, g.shape(3), false); }},
  };
}

}  // namespace anatomy_fuzz

// Factories, reductions, copies and dtype conversions in the fuzzer's catalogue (catalogue.h):
// sizes and ranges whose element counts overflow, dims lists with repeats and out-of-range
// entries, empty inputs, and conversions between every pair of the nine dtypes.
#include <cmath>

#include "catalogue.h"
#include "generator.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;
using anatomy::TensorOptions;
using Out = std::vector<Tensor>;

TensorOptions opts(std::optional<anatomy::DType> d) { return d ? TensorOptions(*d) : TensorOptions(); }

// Range ends for arange and linspace: small numbers, extreme integers, and floats whose
// element count overflows or is not a number.
Number range_end(Gen& g) {
  static const std::vector<double> kFloats = {0.5, -1.5, 3.25, 1e30, -1e30, 1e-30, std::nan(""), INFINITY, -INFINITY};
  if (g.chance(0.55)) return Number::of_int(g.uniform(-5, 5));
  if (g.chance(0.5)) return Number::of_int(g.extreme());
  return Number::of_float(g.pick(kFloats));
}

// A reduction's dims: none (every dim) or a list, which may be empty (no dim).
std::optional<std::vector<int64_t>> reduce_dims(Gen& g, const SelfInfo& s) {
  if (g.chance(0.2)) return std::nullopt;
  return g.dims(s.dim());
}

void reduce_args(Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
  args.emplace_back(reduce_dims(g, s));
  args.emplace_back(g.chance(0.5));
}

Number correction(Gen& g) {
  static const std::vector<double> kOdd = {-1.0, 0.5, 1e300, std::nan(""), INFINITY};
  return g.chance(0.8) ? Number::of_float(static_cast<double>(g.uniform(0, 2))) : Number::of_float(g.pick(kOdd));
}

Number norm_p(Gen& g) {
  static const std::vector<double> kP = {1.0, 2.0, 3.0, 0.5, 0.0, INFINITY, -INFINITY, -1.0, std::nan("")};
  return g.chance(0.2) ? Number::of_int(g.uniform(0, 3)) : Number::of_float(g.pick(kP));
}

std::optional<int64_t> maybe_dim(Gen& g, const SelfInfo& s) {
  return g.chance(0.3) ? std::nullopt : std::optional<int64_t>(g.dim(s.dim()));
}

void no_args(Gen&, const SelfInfo&, std::vector<Arg>&) {}

void shape_and_dtype(Gen& g, const SelfInfo&, std::vector<Arg>& args) {
  args.emplace_back(g.factory_shape());
  args.emplace_back(g.maybe_dtype());
}

}  // namespace

std::vector<OpDef> compute_ops() {
  return {
      // ---- factories ----
      {"empty", "lu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::empty(a.l(0), opts(a.u(1)))}; }, shape_and_dtype, nullptr,
       /*uninitialized=*/true},
      {"zeros", "lu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::zeros(a.l(0), opts(a.u(1)))}; }, shape_and_dtype},
      {"ones", "lu", Kind::Factory, false, [](const Bound& a) -> Out { return {anatomy::ones(a.l(0), opts(a.u(1)))}; },
       shape_and_dtype},
      {"full", "lsu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::full(a.l(0), a.s(1), opts(a.u(2)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(g.factory_shape());
         args.emplace_back(g.any_number());
         args.emplace_back(g.maybe_dtype());
       }},
      {"empty_strided", "llu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::empty_strided(a.l(0), a.l(1), opts(a.u(2)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         std::vector<int64_t> size = g.factory_shape(), stride(size.size());
         for (int64_t& v : stride) v = g.chance(0.8) ? g.uniform(0, 4) : g.extreme();
         if (g.chance(0.1)) stride.push_back(1);
         args.emplace_back(size);
         args.emplace_back(stride);
         args.emplace_back(g.maybe_dtype());
       },
       nullptr, /*uninitialized=*/true},
      {"rand", "lu", Kind::Factory, false, [](const Bound& a) -> Out { return {anatomy::rand(a.l(0), opts(a.u(1)))}; },
       shape_and_dtype},
      {"randn", "lu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::randn(a.l(0), opts(a.u(1)))}; }, shape_and_dtype},
      {"randint", "iilu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::randint(a.i(0), a.i(1), a.l(2), opts(a.u(3)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         const int64_t low = g.any_int();
         args.emplace_back(low);
         args.emplace_back(g.chance(0.6) && low < (int64_t{1} << 40) ? low + g.uniform(1, 5) : g.any_int());
         args.emplace_back(g.factory_shape());
         args.emplace_back(g.maybe_dtype());
       }},
      {"arange", "sssu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::arange(a.s(0), a.s(1), a.s(2), opts(a.u(3)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(range_end(g));
         args.emplace_back(range_end(g));
         args.emplace_back(g.chance(0.5) ? Number::of_int(g.uniform(-2, 2)) : range_end(g));
         args.emplace_back(g.maybe_dtype());
       }},
      {"linspace", "ssiu", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::linspace(a.s(0), a.s(1), a.i(2), opts(a.u(3)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(range_end(g));
         args.emplace_back(range_end(g));
         args.emplace_back(g.count());
         args.emplace_back(g.maybe_dtype());
       }},
      {"eye", "iou", Kind::Factory, false,
       [](const Bound& a) -> Out { return {anatomy::eye(a.i(0), a.o(1), opts(a.u(2)))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(g.count());
         args.emplace_back(g.chance(0.4) ? std::optional<int64_t>() : std::optional<int64_t>(g.count()));
         args.emplace_back(g.maybe_dtype());
       }},
      // ---- reductions (dims none reduce every dim, an empty list none) ----
      {"sum", "TLbu", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).sum(a.L(1), a.b(2), a.u(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         reduce_args(g, s, args);
         args.emplace_back(g.maybe_dtype());
       }},
      {"mean", "TLbu", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).mean(a.L(1), a.b(2), a.u(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         reduce_args(g, s, args);
         args.emplace_back(g.maybe_dtype());
       }},
      {"prod", "TLbu", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).prod(a.L(1), a.b(2), a.u(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         reduce_args(g, s, args);
         args.emplace_back(g.maybe_dtype());
       }},
      {"amax", "TLb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).amax(a.L(1), a.b(2))}; },
       reduce_args},
      {"amin", "TLb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).amin(a.L(1), a.b(2))}; },
       reduce_args},
      {"logsumexp", "TLb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).logsumexp(a.L(1), a.b(2))}; },
       reduce_args},
      {"any", "TLb", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).any(a.L(1), a.b(2))}; },
       reduce_args},
      {"all", "TLb", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).all(a.L(1), a.b(2))}; },
       reduce_args},
      {"count_nonzero", "TL", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).count_nonzero(a.L(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(reduce_dims(g, s)); }},
      {"argmax", "Tob", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).argmax(a.o(1), a.b(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(maybe_dim(g, s));
         args.emplace_back(g.chance(0.5));
       }},
      {"argmin", "Tob", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).argmin(a.o(1), a.b(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(maybe_dim(g, s));
         args.emplace_back(g.chance(0.5));
       }},
      {"max_dim", "Tib", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [v, i] = a.t(0).max(a.i(1), a.b(2));
         return {v, i};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.chance(0.5));
       }},
      {"norm", "TsLb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).norm(a.s(1), a.L(2), a.b(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(norm_p(g));
         reduce_args(g, s, args);
       }},
      {"std", "TLsb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).std(a.L(1), a.f(2), a.b(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(reduce_dims(g, s));
         args.emplace_back(correction(g));
         args.emplace_back(g.chance(0.5));
       }},
      {"var", "TLsb", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).var(a.L(1), a.f(2), a.b(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(reduce_dims(g, s));
         args.emplace_back(correction(g));
         args.emplace_back(g.chance(0.5));
       }},
      {"cumsum", "Tiu", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).cumsum(a.i(1), a.u(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.maybe_dtype());
       }},
      {"sort", "Tib", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [v, i] = a.t(0).sort(a.i(1), a.b(2));
         return {v, i};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.chance(0.5));
       }},
      {"topk", "Tiibb", Kind::Fresh, true,
       [](const Bound& a) -> Out {
         auto [v, i] = a.t(0).topk(a.i(1), a.i(2), a.b(3), a.b(4));
         return {v, i};
       },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(g.length(s.size_at(d)));
         args.emplace_back(d);
         args.emplace_back(g.chance(0.5));
         args.emplace_back(g.chance(0.8));
       }},
      // ---- copies and conversions ----
      {"contiguous", "T", Kind::MayAlias, true, [](const Bound& a) -> Out { return {a.t(0).contiguous()}; }, no_args},
      {"clone", "T", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).clone()}; }, no_args},
      {"to", "Ttb", Kind::MayAlias, true, [](const Bound& a) -> Out { return {a.t(0).to(a.dt(1), false, a.b(2))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         args.emplace_back(
             std::optional<anatomy::DType>(static_cast<anatomy::DType>(g.uniform(0, anatomy::kNumDTypes - 1))));
         args.emplace_back(g.chance(0.3));
       }},
  };
}

}  // namespace anatomy_fuzz

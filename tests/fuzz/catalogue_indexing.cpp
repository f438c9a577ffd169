// Indexing, masking, padding and rearranging operators in the fuzzer's catalogue (catalogue.h):
// index values near and past the ends, index and mask tensors of the wrong dtype or shape, and
// masks and values that broadcast.
#include <algorithm>

#include "catalogue.h"
#include "generator.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;
using Out = std::vector<Tensor>;

std::vector<int64_t> index_shape(Gen& g) {
  if (g.chance(0.1)) return {};
  if (g.chance(0.1)) return g.shape(2);
  return {g.uniform(0, 4)};
}

// An index for gather/scatter: self's rank, each size at most self's (sometimes one more).
std::vector<int64_t> gather_shape(Gen& g, const SelfInfo& s) {
  std::vector<int64_t> sh = s.sizes;
  for (int64_t& v : sh) v = g.chance(0.9) ? g.uniform(0, v) : v + 1;
  if (g.chance(0.05)) sh.push_back(1);
  return sh;
}

anatomy::DType like(Gen& g, anatomy::DType d) { return g.chance(0.8) ? d : g.dtype(); }

// Indices for self[indices]: full slices, integer tensors, bool masks, one entry too many.
TensorList index_list(Gen& g, const SelfInfo& s) {
  TensorList l;
  const int64_t k = g.uniform(0, s.dim() + (g.chance(0.1) ? 1 : 0));
  std::vector<int64_t> shape = index_shape(g);
  for (int64_t d = 0; d < k; ++d) {
    if (g.chance(0.3)) {
      l.emplace_back();
    } else if (g.chance(0.15) && d < s.dim()) {
      std::vector<int64_t> ms(s.sizes.begin() + d, s.sizes.begin() + d + 1);
      l.emplace_back(g.mask_for(ms));
    } else {
      l.emplace_back(g.index_tensor(s.size_at(d), g.chance(0.85) ? shape : index_shape(g)));
    }
  }
  return l;
}

// Values for index_put_: a number-like 0-dim tensor, or a small shape that may broadcast.
TensorSpec put_values(Gen& g, const SelfInfo& s) {
  std::vector<int64_t> sh = g.chance(0.5)   ? std::vector<int64_t>{}
                            : g.chance(0.5) ? std::vector<int64_t>{1}
                                            : g.shape(2);
  return g.tensor(like(g, s.dtype), sh);
}

std::vector<int64_t> pads(Gen& g, const SelfInfo& s) {
  std::vector<int64_t> p(static_cast<size_t>(2 * g.uniform(0, s.dim())));
  for (int64_t& v : p) v = g.chance(0.85) ? g.uniform(-3, 3) : g.extreme();
  if (g.chance(0.1)) p.push_back(g.uniform(0, 2));      // odd length
  if (g.chance(0.05)) p.insert(p.end(), {1, 1, 1, 1});  // more dims than self has
  return p;
}

}  // namespace

std::vector<OpDef> indexing_ops() {
  return {
      {"index_select", "TiT", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {a.t(0).index_select(a.i(1), a.t(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), index_shape(g), false));
       }},
      {"gather", "TiT", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).gather(a.i(1), a.t(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), gather_shape(g, s), false));
       }},
      {"scatter", "TiTT", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {a.t(0).scatter(a.i(1), a.t(2), a.t(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), gather_shape(g, s), false));
         args.emplace_back(g.tensor(like(g, s.dtype), g.chance(0.9) ? s.sizes : g.shape()));
       }},
      {"scatter_value", "TiTs", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {a.t(0).scatter(a.i(1), a.t(2), a.s(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), gather_shape(g, s), false));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"scatter_", "TiTT", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {a.t(0).scatter_(a.i(1), a.t(2), a.t(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), gather_shape(g, s), false));
         args.emplace_back(g.tensor(like(g, s.dtype), g.chance(0.9) ? s.sizes : g.shape()));
       }},
      {"scatter_add", "TiTT", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {a.t(0).scatter_add(a.i(1), a.t(2), a.t(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index_tensor(s.size_at(d), gather_shape(g, s), false));
         args.emplace_back(g.tensor(like(g, s.dtype), g.chance(0.9) ? s.sizes : g.shape()));
       }},
      {"index", "TX", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).index(a.x(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(index_list(g, s)); }},
      {"index_put", "TXTb", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::index_put(a.t(0), a.x(1), a.t(2), a.b(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(index_list(g, s));
         args.emplace_back(put_values(g, s));
         args.emplace_back(g.chance(0.3));
       }},
      {"index_put_", "TXTb", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {a.t(0).index_put_(a.x(1), a.t(2), a.b(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(index_list(g, s));
         args.emplace_back(put_values(g, s));
         args.emplace_back(g.chance(0.3));
       }},
      {"masked_fill", "TTs", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {a.t(0).masked_fill(a.t(1), a.s(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.mask_for(s.sizes));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"masked_fill_", "TTs", Kind::InPlace, true,
       [](const Bound& a) -> Out { return {a.t(0).masked_fill_(a.t(1), a.s(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.mask_for(s.sizes));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"masked_select", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).masked_select(a.t(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(g.mask_for(s.sizes)); }},
      {"take", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).take(a.t(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.index_tensor(s.numel(), g.shape(3)));
       }},
      {"embedding", "TT", Kind::Fresh, true, [](const Bound& a) -> Out { return {anatomy::embedding(a.t(0), a.t(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.index_tensor(s.sizes.empty() ? 1 : s.sizes[0], g.shape(3), false));
       },
       [](Gen& g) {
         std::vector<int64_t> shape =
             g.chance(0.9) ? std::vector<int64_t>{g.uniform(0, 4), g.uniform(0, 3)} : g.shape();
         return g.tensor(g.chance(0.85) ? anatomy::DType::Float32 : g.dtype(), shape);
       }},
      {"nonzero", "T", Kind::Fresh, false, [](const Bound& a) -> Out { return {a.t(0).nonzero()}; },
       [](Gen&, const SelfInfo&, std::vector<Arg>&) {}},
      {"constant_pad_nd", "Tls", Kind::Fresh, true,
       [](const Bound& a) -> Out { return {anatomy::constant_pad_nd(a.t(0), a.l(1), a.s(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(pads(g, s));
         args.emplace_back(g.scalar(s.dtype));
       }},
      {"repeat", "Tl", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).repeat(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         std::vector<int64_t> r(
             static_cast<size_t>(std::max<int64_t>(0, s.dim() + g.uniform(g.chance(0.1) ? -1 : 0, 2))));
         for (int64_t& v : r) v = g.chance(0.85) ? g.uniform(0, 3) : g.extreme();
         args.emplace_back(r);
       }},
      {"flip", "Tl", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).flip(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(g.dims(s.dim())); }},
      {"roll", "Tll", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).roll(a.l(1), a.l(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         std::vector<int64_t> dims = g.chance(0.25) ? std::vector<int64_t>{} : g.dims(s.dim());
         std::vector<int64_t> shifts(dims.empty() ? 1 : dims.size() + (g.chance(0.1) ? 1 : 0));
         for (int64_t& v : shifts) v = g.any_int();
         args.emplace_back(shifts);
         args.emplace_back(dims);
       }},
      {"tril", "Ti", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).tril(a.i(1))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) { args.emplace_back(g.any_int()); }},
      {"triu", "Ti", Kind::Fresh, true, [](const Bound& a) -> Out { return {a.t(0).triu(a.i(1))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) { args.emplace_back(g.any_int()); }},
  };
}

}  // namespace anatomy_fuzz

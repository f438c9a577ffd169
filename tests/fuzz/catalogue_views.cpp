// The view operators in the fuzzer's catalogue (catalogue.h): each result shares self's storage,
// so a result whose reachable elements leave that storage is out-of-bounds memory, and the
// arithmetic that places them is where sizes, strides and offsets overflow.
#include <algorithm>

#include "catalogue.h"
#include "generator.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;
using Out = std::vector<Tensor>;

// A target shape for view/reshape: mostly one with self's element count, else a wrong one.
std::vector<int64_t> reshape_target(Gen& g, const SelfInfo& self) {
  std::vector<int64_t> s = self.sizes;
  switch (g.uniform(0, 8)) {
    case 0:
      std::reverse(s.begin(), s.end());
      return s;
    case 1:
      return {self.numel()};
    case 2:
      if (!s.empty()) s[static_cast<size_t>(g.uniform(0, self.dim() - 1))] = -1;
      return s;
    case 3:
      s.insert(s.begin() + g.uniform(0, self.dim()), 1);
      return s;
    case 4:
      if (s.size() >= 2) {
        size_t k = static_cast<size_t>(g.uniform(0, self.dim() - 2));
        s[k] *= s[k + 1];
        s.erase(s.begin() + static_cast<int64_t>(k) + 1);
      }
      return s;
    case 5:
      return g.factory_shape();
    case 6:
      if (!s.empty()) s[static_cast<size_t>(g.uniform(0, self.dim() - 1))] = g.extreme();
      return s;
    case 7:
      return g.pick(std::vector<std::vector<int64_t>>{{-1, -1}, {0, -1}, {-1, 0}, {g.extreme(), -1}, {-1}});
    default:
      s.push_back(g.chance(0.5) ? -1 : 0);
      return s;
  }
}

// A target for expand: size-1 dims grown, new leading dims, -1 kept, or sizes that cannot be.
std::vector<int64_t> expand_target(Gen& g, const SelfInfo& self) {
  std::vector<int64_t> s = self.sizes;
  for (int64_t& v : s) {
    if (v == 1 && g.chance(0.5)) v = g.chance(0.85) ? g.uniform(0, 4) : g.extreme();
    else if (g.chance(0.2)) v = -1;
  }
  if (g.chance(0.35)) s.insert(s.begin(), g.chance(0.8) ? g.uniform(0, 3) : g.extreme());
  if (g.chance(0.1)) s = g.factory_shape();
  return s;
}

// Sizes for split_with_sizes and unflatten: a partition or factorization of n, or not.
std::vector<int64_t> parts_of(Gen& g, int64_t n, bool product) {
  std::vector<int64_t> p;
  if (g.chance(0.1)) return g.factory_shape();
  if (product) {
    p = g.pick(std::vector<std::vector<int64_t>>{{n, 1}, {1, n}, {-1, 1}, {1, -1}, {n}, {1, n, 1}, {-1, -1}, {0, -1}});
  } else {
    int64_t left = n;
    while (left > 0 && p.size() < 4) {
      int64_t k = g.uniform(0, left);
      p.push_back(k);
      left -= k;
    }
    if (left > 0) p.push_back(left);
  }
  if (g.chance(0.15) && !p.empty())
    p[static_cast<size_t>(g.uniform(0, static_cast<int64_t>(p.size()) - 1))] = g.extreme();
  return p;
}

// Along a dim longer than this, split and chunk make a few pieces, not one view per element.
constexpr int64_t kManyPieces = int64_t{1} << 12;

std::optional<int64_t> maybe(Gen& g, std::optional<int64_t> v) { return g.chance(0.2) ? std::nullopt : v; }

}  // namespace

std::vector<OpDef> view_ops() {
  return {
      {"view", "Tl", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).view(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(reshape_target(g, s)); }},
      {"reshape", "Tl", Kind::MayAlias, true, [](const Bound& a) -> Out { return {a.t(0).reshape(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(reshape_target(g, s)); }},
      {"as_strided", "Tllo", Kind::View, true,
       [](const Bound& a) -> Out { return {a.t(0).as_strided(a.l(1), a.l(2), a.o(3))}; },
       [](Gen& g, const SelfInfo&, std::vector<Arg>& args) {
         std::vector<int64_t> size = g.chance(0.85) ? g.shape() : g.factory_shape();
         std::vector<int64_t> stride(size.size());
         for (int64_t& v : stride) v = g.chance(0.75) ? g.uniform(0, 3) : g.chance(0.5) ? -1 : g.extreme();
         if (g.chance(0.1)) stride.push_back(1);
         args.emplace_back(size);
         args.emplace_back(stride);
         args.emplace_back(g.chance(0.4)   ? std::optional<int64_t>()
                           : g.chance(0.7) ? std::optional<int64_t>(g.uniform(0, 4))
                                           : std::optional<int64_t>(g.extreme()));
       }},
      {"transpose", "Tii", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).transpose(a.i(1), a.i(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.dim(s.dim()));
       }},
      {"t", "T", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).t()}; },
       [](Gen&, const SelfInfo&, std::vector<Arg>&) {}},
      {"permute", "Tl", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).permute(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(g.permutation(s.dim())); }},
      {"slice", "Tiooi", Kind::View, true,
       [](const Bound& a) -> Out { return {a.t(0).slice(a.i(1), a.o(2), a.o(3), a.i(4))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim()), n = s.size_at(d);
         args.emplace_back(d);
         args.emplace_back(maybe(g, g.chance(0.8) ? g.index(n) : g.extreme()));
         args.emplace_back(maybe(g, g.chance(0.8) ? g.length(n) : g.extreme()));
         args.emplace_back(g.chance(0.7) ? g.uniform(1, 3) : g.chance(0.5) ? g.uniform(-1, 0) : g.extreme());
       }},
      {"narrow", "Tiii", Kind::View, true,
       [](const Bound& a) -> Out { return {a.t(0).narrow(a.i(1), a.i(2), a.i(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim()), n = s.size_at(d);
         int64_t start = g.chance(0.1) ? n : g.index(n);
         args.emplace_back(d);
         args.emplace_back(start);
         // Mostly a length that fits after start, so the call reaches the view's arithmetic.
         int64_t from = start < 0 ? start + n : start;
         args.emplace_back(g.chance(0.7) && from >= 0 && from <= n ? g.uniform(0, n - from) : g.length(n));
       }},
      {"select", "Tii", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).select(a.i(1), a.i(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.index(s.size_at(d)));
       }},
      {"squeeze", "To", Kind::View, true,
       [](const Bound& a) -> Out { return {a.o(1) ? a.t(0).squeeze(*a.o(1)) : a.t(0).squeeze()}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.chance(0.3) ? std::optional<int64_t>() : std::optional<int64_t>(g.dim(s.dim())));
       }},
      {"unsqueeze", "Ti", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).unsqueeze(a.i(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(g.dim(s.dim() + 1)); }},
      {"expand", "Tl", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).expand(a.l(1))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) { args.emplace_back(expand_target(g, s)); }},
      {"flatten", "Tii", Kind::MayAlias, true, [](const Bound& a) -> Out { return {a.t(0).flatten(a.i(1), a.i(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.dim(s.dim()));
         args.emplace_back(g.dim(s.dim()));
       }},
      {"unflatten", "Til", Kind::View, true, [](const Bound& a) -> Out { return {a.t(0).unflatten(a.i(1), a.l(2))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(parts_of(g, s.size_at(d), true));
       }},
      {"unfold", "Tiii", Kind::View, true,
       [](const Bound& a) -> Out { return {a.t(0).unfold(a.i(1), a.i(2), a.i(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(d);
         args.emplace_back(g.length(s.size_at(d)));
         args.emplace_back(g.chance(0.75) ? g.uniform(1, 3) : g.count());
       }},
      {"diagonal", "Tiii", Kind::View, true,
       [](const Bound& a) -> Out { return {a.t(0).diagonal(a.i(1), a.i(2), a.i(3))}; },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         args.emplace_back(g.chance(0.7) ? g.uniform(-2, 2) : g.any_int());
         int64_t d1 = g.dim(s.dim()), d2 = g.dim(s.dim());
         if (s.dim() >= 2 && g.chance(0.7)) {  // two distinct dims, in either spelling
           d1 = g.uniform(0, s.dim() - 1);
           d2 = (d1 + g.uniform(1, s.dim() - 1)) % s.dim() - (g.chance(0.3) ? s.dim() : 0);
         }
         args.emplace_back(d1);
         args.emplace_back(d2);
       }},
      {"split", "Tii", Kind::View, true, [](const Bound& a) -> Out { return a.t(0).split(a.i(1), a.i(2)); },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t d = g.dim(s.dim()), n = s.size_at(d);
         args.emplace_back(n > kManyPieces ? n / g.uniform(1, 4) + g.uniform(0, 1) : g.count());
         args.emplace_back(d);
       }},
      {"split_with_sizes", "Tli", Kind::View, true,
       [](const Bound& a) -> Out { return a.t(0).split_with_sizes(a.l(1), a.i(2)); },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         int64_t d = g.dim(s.dim());
         args.emplace_back(parts_of(g, s.size_at(d), false));
         args.emplace_back(d);
       }},
      {"chunk", "Tii", Kind::View, true, [](const Bound& a) -> Out { return a.t(0).chunk(a.i(1), a.i(2)); },
       [](Gen& g, const SelfInfo& s, std::vector<Arg>& args) {
         const int64_t d = g.dim(s.dim());
         args.emplace_back(s.size_at(d) > kManyPieces ? g.uniform(1, 4) : g.count());
         args.emplace_back(d);
       }},
  };
}

}  // namespace anatomy_fuzz

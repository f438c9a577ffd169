// The whole catalogue (catalogue.h): the family tables joined, looked up by name.
#include "catalogue.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "generator.h"

namespace anatomy_fuzz {

anatomy::Scalar Bound::s(size_t k) const {
  const Number& n = std::get<Number>(call_.args.at(k));
  switch (n.kind) {
    case Number::Kind::Bool:
      return anatomy::Scalar(n.i != 0);
    case Number::Kind::Int:
      return anatomy::Scalar(n.i);
    case Number::Kind::Float:
      return anatomy::Scalar(n.d);
  }
  return {};
}

int64_t SelfInfo::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (__builtin_mul_overflow(n, s, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

int64_t SelfInfo::size_at(int64_t d) const {
  const int64_t n = dim();
  if (d < -n || d >= n) return 1;
  return sizes[static_cast<size_t>(d < 0 ? d + n : d)];
}

namespace {

struct Catalogue {
  std::vector<OpDef> ops;
  std::vector<std::pair<size_t, size_t>> families;  // [begin, end) of each family in ops
};

const Catalogue& joined() {
  static const Catalogue all = [] {
    Catalogue c;
    for (auto* family : {&view_ops, &indexing_ops, &compute_ops, &nn_ops, &elementwise_ops}) {
      std::vector<OpDef> f = family();
      c.families.emplace_back(c.ops.size(), c.ops.size() + f.size());
      c.ops.insert(c.ops.end(), f.begin(), f.end());
    }
    const std::vector<OpDef>& v = c.ops;
    for (size_t a = 0; a < v.size(); ++a) {
      for (size_t b = a + 1; b < v.size(); ++b) {
        if (std::string_view(v[a].name) == v[b].name) throw std::logic_error("fuzz catalogue: duplicate operator");
      }
    }
    return c;
  }();
  return all;
}

}  // namespace

const std::vector<OpDef>& catalogue() { return joined().ops; }

const OpDef& pick_op(Gen& g) {
  const auto& [begin, end] = g.pick(joined().families);
  return joined().ops[static_cast<size_t>(g.uniform(static_cast<int64_t>(begin), static_cast<int64_t>(end) - 1))];
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef& op : catalogue()) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

}  // namespace anatomy_fuzz

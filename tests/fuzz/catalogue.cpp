// The whole catalogue (catalogue.h): the family tables joined, looked up by name.
#include "catalogue.h"

#include <limits>
#include <stdexcept>

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

const std::vector<OpDef>& catalogue() {
  static const std::vector<OpDef> all = [] {
    std::vector<OpDef> v = view_ops();
    for (auto* family : {&indexing_ops, &compute_ops, &nn_ops}) {
      std::vector<OpDef> f = family();
      v.insert(v.end(), f.begin(), f.end());
    }
    for (size_t a = 0; a < v.size(); ++a) {
      for (size_t b = a + 1; b < v.size(); ++b) {
        if (std::string_view(v[a].name) == v[b].name) throw std::logic_error("fuzz catalogue: duplicate operator");
      }
    }
    return v;
  }();
  return all;
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef& op : catalogue()) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

}  // namespace anatomy_fuzz

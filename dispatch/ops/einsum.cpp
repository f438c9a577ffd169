// einsum as one CompositeImplicitAutograd function of views, sum and bmm, registered for the
// schema linalg.cpp defines; every backend that has bmm has it, and autograd differentiates it.
#include <algorithm>
#include <array>
#include <string_view>

#include "anatomy/core/checked_arith.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/matmul_checks.h"

namespace anatomy {
namespace {

// Every operand is first brought to one layout: the broadcast ellipsis dims, then one dim per
// label (A-Z, a-z), size 1 where the operand lacks it; a label repeated within an operand is its
// diagonal, a view. Operands are then contracted left to right with one bmm each (einsum_pair),
// and the labels the output drops are summed at the end. The permutes and reshapes around bmm
// are views whenever the strides allow, so "bhqd,bhkd->bhqk" is attention's bmm with no copy.
constexpr int kEinsumLabels = 52;

struct EinsumTerm {
  std::vector<int> labels;  // one per subscript: a label, or -1 for the ellipsis
  bool ellipsis = false;
};

char einsum_letter(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26); }

EinsumTerm parse_einsum_term(std::string_view term, std::string_view equation) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      ANATOMY_CHECK(term.substr(i, 3) == "..." && !t.ellipsis, ValueError,
                    "einsum: a term of \"{}\" holds a '.' that is not its one ellipsis (...)", equation);
      t.ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      t.labels.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      t.labels.push_back(26 + (c - 'a'));
    } else {
      ANATOMY_THROW(ValueError, "einsum: invalid subscript '{}' in \"{}\" (letters and one ... per term)", c, equation);
    }
  }
  return t;
}

int64_t einsum_label_count(const EinsumTerm& term) {
  return static_cast<int64_t>(term.labels.size()) - (term.ellipsis ? 1 : 0);
}

// The operand in the common layout: [ne ellipsis dims (right-aligned), one dim per label].
Tensor einsum_canonical(Tensor t, const EinsumTerm& term, int64_t ne, size_t index) {
  const int64_t nlabels = einsum_label_count(term);
  std::vector<int> dims;  // per dim of t: its label, or -1 for an ellipsis dim
  for (int l : term.labels) {
    if (l >= 0) {
      dims.push_back(l);
    } else {
      for (int64_t i = 0; i < t.dim() - nlabels; ++i) dims.push_back(-1);
    }
  }
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < dims.size() && !again; ++i) {
      for (size_t j = i + 1; j < dims.size() && !again; ++j) {
        if (dims[i] < 0 || dims[i] != dims[j]) continue;
        ANATOMY_CHECK(t.sizes()[i] == t.sizes()[j], ValueError,
                      "einsum: label '{}' repeats in operand {} with sizes {} and {}", einsum_letter(dims[i]), index,
                      t.sizes()[i], t.sizes()[j]);
        const int label = dims[i];
        t = diagonal(t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(j));
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i));
        dims.push_back(label);
        again = true;
      }
    }
  }
  DimVector perm, shape;
  const int64_t own = static_cast<int64_t>(std::count(dims.begin(), dims.end(), -1));
  for (int64_t e = own; e < ne; ++e) shape.push_back(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) continue;
    perm.push_back(static_cast<int64_t>(i));
    shape.push_back(t.sizes()[i]);
  }
  for (int l = 0; l < kEinsumLabels; ++l) {
    const auto it = std::find(dims.begin(), dims.end(), l);
    if (it == dims.end()) {
      shape.push_back(1);
    } else {
      perm.push_back(it - dims.begin());
      shape.push_back(t.sizes()[it - dims.begin()]);
    }
  }
  return reshape(permute(t, perm), shape);
}

void append(DimVector& to, const DimVector& from) {
  for (int64_t d : from) to.push_back(d);
}

int64_t einsum_folded(const Tensor& t, const DimVector& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p = checked_mul(p, t.sizes()[d], "einsum", "a folded size");
  return p;
}

// t permuted to `front` followed by its other dims (all of size 1), then reshaped to `shape`.
Tensor einsum_fold(const Tensor& t, const DimVector& front, IntArrayRef shape) {
  DimVector perm = front;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (std::find(front.begin(), front.end(), d) == front.end()) perm.push_back(d);
  }
  return reshape(permute(t, perm), shape);
}

// Two operands in the common layout -> their product in it. needed[d]: a later operand or the
// output uses dim d. Dims both operands have are the batch (needed) or the inner dim (not);
// dims one has are its rows or columns (needed) or summed away first (not).
Tensor einsum_pair(Tensor a, Tensor b, const std::vector<bool>& needed) {
  DimVector batch, left, right, inner, sum_a, sum_b;
  for (int64_t d = 0; d < a.dim(); ++d) {
    const bool in_a = a.sizes()[d] != 1, in_b = b.sizes()[d] != 1;
    if (in_a && in_b) {
      (needed[d] ? batch : inner).push_back(d);
    } else if (in_a) {
      (needed[d] ? left : sum_a).push_back(d);
    } else if (in_b) {
      (needed[d] ? right : sum_b).push_back(d);
    }
  }
  // int8 products come back as int32: a chain of int8 operands goes on in int32.
  if (b.dtype() != a.dtype()) b = b.to(a.dtype());
  if (!sum_a.empty()) a = sum(a, sum_a, true, a.dtype());
  if (!sum_b.empty()) b = sum(b, sum_b, true, b.dtype());
  const int64_t nb = einsum_folded(a, batch), m = einsum_folded(a, left), k = einsum_folded(a, inner);
  const int64_t n = einsum_folded(b, right);
  DimVector a_front = batch, b_front = batch;
  append(a_front, left);
  append(a_front, inner);
  append(b_front, inner);
  append(b_front, right);
  const int64_t a_shape[] = {nb, m, k};
  const int64_t b_shape[] = {nb, k, n};
  const Tensor product = bmm(einsum_fold(a, a_front, a_shape), einsum_fold(b, b_front, b_shape));
  // [batch..., left..., right...] back to the common layout.
  DimVector kept = batch, kept_sizes, full(static_cast<size_t>(a.dim()), 1);
  append(kept, left);
  append(kept, right);
  for (int64_t d : kept) {
    kept_sizes.push_back(std::max(a.sizes()[d], b.sizes()[d]));
    full[static_cast<size_t>(d)] = kept_sizes.back();
  }
  DimVector order(kept.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return kept[x] < kept[y]; });
  return reshape(permute(reshape(product, kept_sizes), order), full);
}

Tensor einsum_composite(std::string_view equation, TensorList tensors) {
  ANATOMY_CHECK(!tensors.empty(), ValueError, "einsum: expected at least one operand for \"{}\"", equation);
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(
        parse_einsum_term(lhs.substr(start, comma == std::string_view::npos ? comma : comma - start), equation));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  ANATOMY_CHECK(terms.size() == tensors.size(), ValueError, "einsum: \"{}\" has {} operands but {} tensors were given",
                equation, terms.size(), tensors.size());
  int64_t ne = 0;
  std::array<int, kEinsumLabels> count{};
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t nlabels = einsum_label_count(terms[i]);
    ANATOMY_CHECK(terms[i].ellipsis ? tensors[i].dim() >= nlabels : tensors[i].dim() == nlabels, ValueError,
                  "einsum: operand {} has {} dims but its subscripts in \"{}\" name {}", i, tensors[i].dim(), equation,
                  nlabels);
    if (terms[i].ellipsis) ne = std::max(ne, tensors[i].dim() - nlabels);
    any_ellipsis = any_ellipsis || terms[i].ellipsis;
    for (int l : terms[i].labels) {
      if (l >= 0) ++count[static_cast<size_t>(l)];
    }
    if (i > 0) check_product_dtypes("einsum", tensors[0], tensors[i]);
  }
  // The output: as written, or the ellipsis then the labels used once, in order.
  EinsumTerm out;
  if (arrow != std::string_view::npos) {
    out = parse_einsum_term(equation.substr(arrow + 2), equation);
    std::array<bool, kEinsumLabels> seen{};
    for (int l : out.labels) {
      if (l < 0) continue;
      ANATOMY_CHECK(count[static_cast<size_t>(l)] > 0, ValueError,
                    "einsum: output label '{}' of \"{}\" appears in no operand", einsum_letter(l), equation);
      ANATOMY_CHECK(!seen[static_cast<size_t>(l)], ValueError, "einsum: output label '{}' of \"{}\" repeats",
                    einsum_letter(l), equation);
      seen[static_cast<size_t>(l)] = true;
    }
  } else {
    if (any_ellipsis) out.labels.push_back(-1), out.ellipsis = true;
    for (int l = 0; l < kEinsumLabels; ++l) {
      if (count[static_cast<size_t>(l)] == 1) out.labels.push_back(l);
    }
  }
  std::vector<Tensor> ops;
  for (size_t i = 0; i < terms.size(); ++i) ops.push_back(einsum_canonical(tensors[i], terms[i], ne, i));
  // Every label and ellipsis dim has one size across the operands, or size 1 (broadcast).
  const int64_t nd = ne + kEinsumLabels;
  for (int64_t d = 0; d < nd; ++d) {
    int64_t size = 1;
    for (size_t i = 0; i < ops.size(); ++i) {
      const int64_t s = ops[i].sizes()[d];
      if (s == 1) continue;
      if (d < ne) {
        ANATOMY_CHECK(size == 1 || s == size, ValueError,
                      "einsum: the ellipsis dims of the operands of \"{}\" do not broadcast ({} and {})", equation,
                      size, s);
      } else {
        ANATOMY_CHECK(size == 1 || s == size, ValueError,
                      "einsum: label '{}' of \"{}\" has size {} in one operand and {} in operand {}",
                      einsum_letter(static_cast<int>(d - ne)), equation, size, s, i);
      }
      size = s;
    }
  }
  std::vector<bool> in_output(static_cast<size_t>(nd), false);
  DimVector out_dims;
  for (int l : out.labels) {
    if (l >= 0) {
      out_dims.push_back(ne + l);
    } else {
      for (int64_t e = 0; e < ne; ++e) out_dims.push_back(e);
    }
  }
  for (int64_t d : out_dims) in_output[static_cast<size_t>(d)] = true;
  Tensor result = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::vector<bool> needed = in_output;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      for (int64_t d = 0; d < nd; ++d) needed[static_cast<size_t>(d)] = needed[d] || ops[j].sizes()[d] != 1;
    }
    result = einsum_pair(result, ops[i], needed);
  }
  DimVector dropped;
  for (int64_t d = 0; d < nd; ++d) {
    if (!in_output[static_cast<size_t>(d)] && result.sizes()[d] != 1) dropped.push_back(d);
  }
  if (!dropped.empty()) result = sum(result, dropped, true, result.dtype());
  DimVector out_shape;
  for (int64_t d : out_dims) out_shape.push_back(result.sizes()[d]);
  return einsum_fold(result, out_dims, out_shape);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) { m.impl("einsum", ANATOMY_KERNEL(einsum_composite)); }

}  // namespace anatomy

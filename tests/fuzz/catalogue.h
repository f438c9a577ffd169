// The operators the fuzzer calls: one row per operator with its signature (how its arguments
// are parsed, printed and bound), what its results may share with its inputs (which decides the
// checks), how to call it, and how to draw adversarial arguments for it. The rows live in one
// file per family (catalogue_views.cpp, catalogue_indexing.cpp, catalogue_compute.cpp,
// catalogue_nn.cpp, catalogue_elementwise.cpp).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "anatomy/anatomy.h"
#include "case.h"

namespace anatomy_fuzz {

class Gen;

// What a successful call's results may share with its inputs, and what it may write.
enum class Kind : uint8_t {
  View,      // every result is a view of self (same storage); nothing is written
  MayAlias,  // results may be self or a view of it (reshape, contiguous, to); nothing is written
  Fresh,     // results own new storage; nothing is written
  InPlace,   // writes self (and returns it); other inputs are not written
  Factory,   // no tensor inputs
};

// A call's arguments, made into tensors and values, by signature position.
class Bound {
 public:
  Bound(const Call& call, std::vector<anatomy::Tensor> tensors, std::vector<std::vector<anatomy::Tensor>> lists)
      : call_(call), tensors_(std::move(tensors)), lists_(std::move(lists)) {}
  const anatomy::Tensor& t(size_t k) const { return tensors_.at(k); }
  const std::vector<anatomy::Tensor>& x(size_t k) const { return lists_.at(k); }
  int64_t i(size_t k) const { return std::get<int64_t>(call_.args.at(k)); }
  std::optional<int64_t> o(size_t k) const { return std::get<std::optional<int64_t>>(call_.args.at(k)); }
  anatomy::IntArrayRef l(size_t k) const { return std::get<std::vector<int64_t>>(call_.args.at(k)); }
  anatomy::OptionalIntArrayRef L(size_t k) const {
    const auto& v = std::get<std::optional<std::vector<int64_t>>>(call_.args.at(k));
    return v ? anatomy::OptionalIntArrayRef(*v) : anatomy::OptionalIntArrayRef(std::nullopt);
  }
  anatomy::Scalar s(size_t k) const;
  double f(size_t k) const { return s(k).to_double(); }
  bool b(size_t k) const { return std::get<bool>(call_.args.at(k)); }
  std::optional<anatomy::DType> u(size_t k) const { return std::get<std::optional<anatomy::DType>>(call_.args.at(k)); }
  anatomy::DType dt(size_t k) const { return u(k).value(); }

 private:
  const Call& call_;
  std::vector<anatomy::Tensor> tensors_;             // defined where the signature has T
  std::vector<std::vector<anatomy::Tensor>> lists_;  // filled where it has X (none: undefined)
};

// What the generator knows of `self` when it draws the other arguments.
struct SelfInfo {
  anatomy::DType dtype;
  std::vector<int64_t> sizes;
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;  // saturates at INT64_MAX
  // The size of dim d (negative counts from the end); 1 for a dim that does not exist, so that
  // arguments drawn for a bad dim are still drawn.
  int64_t size_at(int64_t d) const;
};

struct OpDef {
  const char* name;
  const char* sig;  // argument kinds, one letter each (case.h); a leading T is self
  Kind kind;
  bool differentiable;  // a floating result must require grad when a floating input does
  std::vector<anatomy::Tensor> (*run)(const Bound& a);
  // Appends the arguments after self (all of them for a factory).
  void (*gen)(Gen& g, const SelfInfo& self, std::vector<Arg>& args);
  // Draws self for a case's first call; null: any tensor (Gen::tensor).
  TensorSpec (*make_self)(Gen& g) = nullptr;
  // The results' values are undefined (empty): they are neither read nor passed on, since
  // reading an uninitialized bool is undefined behaviour in any kernel.
  bool uninitialized = false;
};

std::vector<OpDef> view_ops();
std::vector<OpDef> indexing_ops();
std::vector<OpDef> compute_ops();      // factories, reductions, copies and conversions
std::vector<OpDef> nn_ops();           // softmax, norms, convolution, pooling, products, joins, losses
std::vector<OpDef> elementwise_ops();  // unary and binary functions (core/op_lists.h) and their fronts

const std::vector<OpDef>& catalogue();
// A random operator: a family first, then one of its rows, so that a family of many rows (the
// element-wise one) does not crowd out the others.
const OpDef& pick_op(Gen& g);
const OpDef* find_op(std::string_view name);  // null when unknown

}  // namespace anatomy_fuzz

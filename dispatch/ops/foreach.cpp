// _foreach_norm and _foreach_mul_ (foreach.h): schemas, the C++ functions, the argument checks
// every backend shares, and the composites every backend without its own kernel falls back to
// (CPU, Meta): the single-tensor operator per tensor. CUDA takes many tensors per launch
// (backends/cuda/optim/).
#include "anatomy/dispatch/ops/foreach.h"

#include <cmath>

#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/foreach_rules.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {

void check_foreach_norm(TensorList self, double ord) {
  ANATOMY_CHECK(!self.empty(), ValueError, "_foreach_norm: the list must hold at least one tensor");
  ANATOMY_CHECK(ord >= 0 || (std::isinf(ord) && ord < 0), ValueError,
                "_foreach_norm: ord must be >= 0, inf or -inf, got {}", ord);
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& t = self[i];
    ANATOMY_CHECK(t.defined(), ValueError, "_foreach_norm: tensor {} is undefined", i);
    ANATOMY_CHECK(is_floating(t.dtype()), TypeError, "_foreach_norm: tensor {} must be floating, got {}", i,
                  name(t.dtype()));
    // The smallest |x| of no elements has no value (norm refuses it too).
    ANATOMY_CHECK(!(ord < 0 && t.numel() == 0), ValueError,
                  "_foreach_norm: cannot take the -inf norm of tensor {}, which is empty ({})", i,
                  shape_string(t.sizes()));
  }
}

void check_foreach_mul(TensorList self, const Tensor& other) {
  ANATOMY_CHECK(!self.empty(), ValueError, "_foreach_mul_: the list must hold at least one tensor");
  ANATOMY_CHECK(other.defined() && other.dim() == 0, ValueError, "_foreach_mul_: other must be a 0-dim tensor, got {}",
                other.defined() ? shape_string(other.sizes()) : std::string("an undefined tensor"));
  // What mul_ would refuse, refused for every tensor before any is written.
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& t = self[i];
    ANATOMY_CHECK(t.defined(), ValueError, "_foreach_mul_: tensor {} is undefined", i);
    ANATOMY_CHECK(other.device() == t.device() || other.device().is_cpu(), DeviceError,
                  "_foreach_mul_: tensor {} is on {}, other on {}", i, t.device().str(), other.device().str());
    ResultTypeState state;
    if (t.dim() > 0) state.add_tensor(t.dtype());
    else state.add_zero_dim_tensor(t.dtype());
    state.add_zero_dim_tensor(other.dtype());
    ANATOMY_CHECK(can_cast(state.result(), t.dtype()), TypeError,
                  "_foreach_mul_: the product of tensor {} ({}) and other ({}) is {}, which cannot be written into {}",
                  i, name(t.dtype()), name(other.dtype()), name(state.result()), name(t.dtype()));
  }
}

Tensor foreach_norm_one(const Tensor& t, double ord) {
  if (t.numel() == 0) return zeros({}, TensorOptions().dtype(t.dtype()).device(t.device()));
  return norm(t, ord);
}

namespace {

std::vector<Tensor> foreach_norm_composite(TensorList self, double ord) {
  check_foreach_norm(self, ord);
  std::vector<Tensor> out;
  out.reserve(self.size());
  for (const Tensor& t : self) out.push_back(foreach_norm_one(t, ord));
  return out;
}

void foreach_mul_composite(TensorList self, const Tensor& other) {
  check_foreach_mul(self, other);
  // A factor that shares memory with a tensor of the list is read before any is written, as on
  // CUDA.
  Tensor factor = other;
  for (const Tensor& t : self) {
    if (t.is_alias_of(other)) factor = other.clone();
  }
  for (const Tensor& t : self) t.mul_(factor);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("_foreach_norm.Scalar(Tensor[] self, float ord=2) -> Tensor[]");
  m.def("_foreach_mul_.Tensor(Tensor(a!)[] self, Tensor other) -> ()");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_foreach_norm.Scalar", ANATOMY_KERNEL(foreach_norm_composite));
  m.impl("_foreach_mul_.Tensor", ANATOMY_KERNEL(foreach_mul_composite));
}

std::vector<Tensor> _foreach_norm(TensorList self, double ord) {
  ANATOMY_OP(op, "aten::_foreach_norm.Scalar", std::vector<Tensor>(TensorList, double));
  // An empty list has no tensor to dispatch on: refused here, as every kernel refuses it.
  if (self.empty()) check_foreach_norm(self, ord);
  return op.call(self, ord);
}

void _foreach_mul_(TensorList self, const Tensor& other) {
  ANATOMY_OP(op, "aten::_foreach_mul_.Tensor", void(TensorList, const Tensor&));
  op.call(self, other);
}

}  // namespace anatomy

// Meta: add, sub, mul and div compute only the result's shape, dtype and layout (the same plan
// and checks as the real kernels, no loop).
#include "anatomy/core/binary_ops.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::meta {
namespace {

template <BinaryOp Op>
Tensor binary_meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return plan_binary(Op, Tensor(), self, other, alpha).result();
}
template <BinaryOp Op>
Tensor binary_meta_noalpha(const Tensor& self, const Tensor& other) {
  return binary_meta<Op>(self, other, 1);
}
template <BinaryOp Op>
Tensor binary_inplace_meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  plan_binary(Op, self, self, other, alpha);
  self.impl()->bump_version();
  return self;
}
template <BinaryOp Op>
Tensor binary_inplace_meta_noalpha(const Tensor& self, const Tensor& other) {
  return binary_inplace_meta<Op>(self, other, 1);
}
template <BinaryOp Op>
Tensor binary_out_meta(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  plan_binary(Op, out, self, other, alpha);
  out.impl()->bump_version();
  return out;
}
template <BinaryOp Op>
Tensor binary_out_meta_noalpha(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out_meta<Op>(self, other, 1, out);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("add.Tensor", ANATOMY_KERNEL(binary_meta<BinaryOp::Add>));
  m.impl("sub.Tensor", ANATOMY_KERNEL(binary_meta<BinaryOp::Sub>));
  m.impl("mul.Tensor", ANATOMY_KERNEL(binary_meta_noalpha<BinaryOp::Mul>));
  m.impl("div.Tensor", ANATOMY_KERNEL(binary_meta_noalpha<BinaryOp::Div>));
  m.impl("add_.Tensor", ANATOMY_KERNEL(binary_inplace_meta<BinaryOp::Add>));
  m.impl("sub_.Tensor", ANATOMY_KERNEL(binary_inplace_meta<BinaryOp::Sub>));
  m.impl("mul_.Tensor", ANATOMY_KERNEL(binary_inplace_meta_noalpha<BinaryOp::Mul>));
  m.impl("div_.Tensor", ANATOMY_KERNEL(binary_inplace_meta_noalpha<BinaryOp::Div>));
  m.impl("add.out", ANATOMY_KERNEL(binary_out_meta<BinaryOp::Add>));
  m.impl("sub.out", ANATOMY_KERNEL(binary_out_meta<BinaryOp::Sub>));
  m.impl("mul.out", ANATOMY_KERNEL(binary_out_meta_noalpha<BinaryOp::Mul>));
  m.impl("div.out", ANATOMY_KERNEL(binary_out_meta_noalpha<BinaryOp::Div>));
}

}  // namespace anatomy::meta

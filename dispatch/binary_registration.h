// Registers a backend's add, sub, mul and div (functional, in-place, out=) from its one loop
// function, so each backend writes the loop and nothing else.
#pragma once

#include "anatomy/core/binary_ops.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::dispatch {

template <void (*Loop)(BinaryOp, const IterationPlan&, const Scalar&)>
void register_binary_kernels(Library& m) {
  using Add = BinaryKernels<BinaryOp::Add, Loop>;
  using Sub = BinaryKernels<BinaryOp::Sub, Loop>;
  using Mul = BinaryKernels<BinaryOp::Mul, Loop>;
  using Div = BinaryKernels<BinaryOp::Div, Loop>;
  m.impl("add.Tensor", named_kernel(&Add::functional, "add"));
  m.impl("sub.Tensor", named_kernel(&Sub::functional, "sub"));
  m.impl("mul.Tensor", named_kernel(&Mul::functional_noalpha, "mul"));
  m.impl("div.Tensor", named_kernel(&Div::functional_noalpha, "div"));
  m.impl("add_.Tensor", named_kernel(&Add::inplace, "add_"));
  m.impl("sub_.Tensor", named_kernel(&Sub::inplace, "sub_"));
  m.impl("mul_.Tensor", named_kernel(&Mul::inplace_noalpha, "mul_"));
  m.impl("div_.Tensor", named_kernel(&Div::inplace_noalpha, "div_"));
  m.impl("add.out", named_kernel(&Add::out, "add.out"));
  m.impl("sub.out", named_kernel(&Sub::out, "sub.out"));
  m.impl("mul.out", named_kernel(&Mul::out_noalpha, "mul.out"));
  m.impl("div.out", named_kernel(&Div::out_noalpha, "div.out"));
}

}  // namespace anatomy::dispatch

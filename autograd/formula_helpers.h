// Helpers the derivative formulas share: reducing a broadcast gradient back to an input's
// shape and dtype, and undoing a reduction's dropped dims. Written with public operators, so
// the formulas they serve are differentiable again (double backward).
#pragma once

#include <string_view>
#include <vector>

#include "anatomy/autograd/formula_node.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

// Sums `grad` over the dims that broadcasting added or expanded to reach `sizes`.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);
// sum_to the input's sizes, then cast to the input's dtype (mixed-dtype inputs).
Tensor grad_for_input(const BackwardContext& ctx, int arg, const Tensor& grad, int k = 0);
// A reduction's gradient over `dims` (std::nullopt: all) of an input of `sizes`, brought back to
// the input's rank (keepdim=false dropped them) and expanded to its shape.
Tensor unreduce(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim);
// The sizes, strides and storage offset of a tensor, kept without its data.
struct Geometry {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;
  static Geometry of(const Tensor& t) { return {DimVector(t.sizes()), DimVector(t.strides()), t.storage_offset()}; }
};
// The gradient of an input of geometry `in` from the gradient `grad` of its as_strided view of
// geometry `out` (offsets in the same storage): PyTorch's as_strided_backward. The gradient is
// added into a zero storage through `out` (accumulating, so view elements that share memory add
// up: expand), then read through `in`. NotImplementedError when `in`'s own elements overlap.
Tensor as_strided_grad(const Tensor& grad, const Geometry& in, const Geometry& out);
// The gradient of gelu(x, approximate) ("none" or "tanh") given the output's gradient `grad`
// (PyTorch's GeluBackward0): gelu's and _addmm_activation's formulas share it. One gelu_backward
// call when no graph is recorded (Note [Fused backward unless create_graph], derivatives_nn.cpp);
// under create_graph the operators' formula, which a second backward can differentiate.
Tensor gelu_grad(const Tensor& grad, const Tensor& x, std::string_view approximate);
// The wrapped, sorted, unique dims of a reduction over `dims` (std::nullopt: every dim; an
// empty list: none).
std::vector<int64_t> reduced_dims(OptionalIntArrayRef dims, int64_t ndim);
// A reduction's saved `int[]?` dim argument `i`.
OptionalIntArrayRef dims_arg(const BackwardContext& ctx, int i);

}  // namespace anatomy::autograd

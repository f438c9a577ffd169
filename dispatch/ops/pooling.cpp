// Pooling and upsampling: schemas (PyTorch's), dispatching functions, and the two composites
// (CompositeImplicitAutograd): max_pool2d returns max_pool2d_with_indices' values, and
// adaptive_avg_pool2d calls _adaptive_avg_pool2d. The kernels are in backends/*/pooling* and
// backends/*/upsample*; the derivatives in autograd/derivatives_pooling.cpp.
#include "anatomy/dispatch/ops/pooling.h"

#include "anatomy/dispatch/library.h"

namespace anatomy {
namespace {

Tensor max_pool2d_composite(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                            IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor adaptive_avg_pool2d_composite(const Tensor& self, IntArrayRef output_size) {
  return _adaptive_avg_pool2d(self, output_size);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)");
  m.def(
      "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor");
  m.def(
      "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
      "bool ceil_mode=False) -> Tensor",
      ANATOMY_KERNEL(max_pool2d_composite));
  m.def(
      "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
      "bool count_include_pad=True, int? divisor_override=None) -> Tensor");
  m.def(
      "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, "
      "bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor");
  m.def("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
        ANATOMY_KERNEL(adaptive_avg_pool2d_composite));
  m.def("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor");
  m.def("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor");
  m.def("upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor");
  m.def(
      "upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
      "float? scales_h=None, float? scales_w=None) -> Tensor");
  m.def(
      "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
      "float? scales_w=None) -> Tensor");
  m.def(
      "upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
      "bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor");
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  ANATOMY_OP(op, "aten::max_pool2d_with_indices",
             std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
  return op.call(self, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  ANATOMY_OP(op, "aten::max_pool2d", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
  return op.call(self, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  ANATOMY_OP(
      op, "aten::max_pool2d_with_indices_backward",
      Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool, const Tensor&));
  return op.call(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  ANATOMY_OP(op, "aten::avg_pool2d",
             Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>));
  return op.call(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  ANATOMY_OP(
      op, "aten::avg_pool2d_backward",
      Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>));
  return op.call(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  ANATOMY_OP(op, "aten::adaptive_avg_pool2d", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, output_size);
}
Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  ANATOMY_OP(op, "aten::_adaptive_avg_pool2d", Tensor(const Tensor&, IntArrayRef));
  return op.call(self, output_size);
}
Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  ANATOMY_OP(op, "aten::_adaptive_avg_pool2d_backward", Tensor(const Tensor&, const Tensor&));
  return op.call(grad_output, self);
}

Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  ANATOMY_OP(op, "aten::upsample_nearest2d",
             Tensor(const Tensor&, IntArrayRef, std::optional<double>, std::optional<double>));
  return op.call(self, output_size, scales_h, scales_w);
}
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_h, std::optional<double> scales_w) {
  ANATOMY_OP(op, "aten::upsample_nearest2d_backward",
             Tensor(const Tensor&, IntArrayRef, IntArrayRef, std::optional<double>, std::optional<double>));
  return op.call(grad_output, output_size, input_size, scales_h, scales_w);
}
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  ANATOMY_OP(op, "aten::upsample_bilinear2d",
             Tensor(const Tensor&, IntArrayRef, bool, std::optional<double>, std::optional<double>));
  return op.call(self, output_size, align_corners, scales_h, scales_w);
}
Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                    bool align_corners, std::optional<double> scales_h,
                                    std::optional<double> scales_w) {
  ANATOMY_OP(op, "aten::upsample_bilinear2d_backward",
             Tensor(const Tensor&, IntArrayRef, IntArrayRef, bool, std::optional<double>, std::optional<double>));
  return op.call(grad_output, output_size, input_size, align_corners, scales_h, scales_w);
}

}  // namespace anatomy

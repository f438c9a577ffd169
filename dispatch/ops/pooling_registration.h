// Registers a backend's ten pooling and upsampling kernels from its four loops, so the plans,
// checks and messages live here once (dispatch/ops/pooling_rules.h) and each backend writes only
// the loops (the Meta backend's allocate the results and compute nothing). `Loops` has:
//
//   static Tensor sum(const char* op, const PoolPlan& p, const Tensor& self);
//       the windows' weighted sums: average, adaptive average, nearest, bilinear
//   static Tensor sum_backward(const char* op, const PoolPlan& p, const Tensor& grad_output);
//       their transpose, shaped like the input (p.in_sizes)
//   static std::tuple<Tensor, Tensor> max(const char* op, const PoolPlan& p, const Tensor& self);
//       each window's maximum and its int64 flat index in the H * W plane
//   static Tensor max_backward(const char* op, const PoolPlan& p, const Tensor& grad_output, const Tensor& indices);
//
// Every result is in the plan's layout (PoolPlan::empty_result).
#pragma once

#include <optional>
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/pooling_rules.h"

namespace anatomy::dispatch {

template <typename Loops>
struct PoolingKernels {
  using Kind = pooling::WindowKind;

  static std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                            IntArrayRef stride, IntArrayRef padding,
                                                            IntArrayRef dilation, bool ceil_mode) {
    const char* op = "max_pool2d_with_indices";
    return Loops::max(op, plan_max_pool2d(op, self, kernel_size, stride, padding, dilation, ceil_mode), self);
  }
  static Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                 bool ceil_mode, const Tensor& indices) {
    const char* op = "max_pool2d_with_indices_backward";
    return Loops::max_backward(
        op, plan_max_pool2d_backward(op, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices),
        grad_output, indices);
  }
  static Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
    const char* op = "avg_pool2d";
    return Loops::sum(
        op, plan_avg_pool2d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
        self);
  }
  static Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                    IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                    std::optional<int64_t> divisor_override) {
    const char* op = "avg_pool2d_backward";
    return Loops::sum_backward(op,
                               plan_avg_pool2d_backward(op, grad_output, self, kernel_size, stride, padding, ceil_mode,
                                                        count_include_pad, divisor_override),
                               grad_output);
  }
  static Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
    const char* op = "_adaptive_avg_pool2d";
    return Loops::sum(op, plan_adaptive_avg_pool2d(op, self, output_size), self);
  }
  static Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
    const char* op = "_adaptive_avg_pool2d_backward";
    return Loops::sum_backward(op, plan_adaptive_avg_pool2d_backward(op, grad_output, self), grad_output);
  }
  static Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w) {
    const char* op = "upsample_nearest2d";
    return Loops::sum(
        op, plan_upsample2d(op, Kind::Nearest, self, self.sizes(), output_size, false, scales_h, scales_w), self);
  }
  static Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                            std::optional<double> scales_h, std::optional<double> scales_w) {
    const char* op = "upsample_nearest2d_backward";
    return Loops::sum_backward(
        op,
        plan_upsample2d_backward(op, Kind::Nearest, grad_output, input_size, output_size, false, scales_h, scales_w),
        grad_output);
  }
  static Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                                    std::optional<double> scales_h, std::optional<double> scales_w) {
    const char* op = "upsample_bilinear2d";
    return Loops::sum(
        op, plan_upsample2d(op, Kind::Bilinear, self, self.sizes(), output_size, align_corners, scales_h, scales_w),
        self);
  }
  static Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                             bool align_corners, std::optional<double> scales_h,
                                             std::optional<double> scales_w) {
    const char* op = "upsample_bilinear2d_backward";
    return Loops::sum_backward(op,
                               plan_upsample2d_backward(op, Kind::Bilinear, grad_output, input_size, output_size,
                                                        align_corners, scales_h, scales_w),
                               grad_output);
  }
};

template <typename Loops>
void register_pooling_kernels(Library& m) {
  using K = PoolingKernels<Loops>;
  m.impl("max_pool2d_with_indices", named_kernel(&K::max_pool2d_with_indices, "max_pool2d_with_indices"));
  m.impl("max_pool2d_with_indices_backward",
         named_kernel(&K::max_pool2d_with_indices_backward, "max_pool2d_with_indices_backward"));
  m.impl("avg_pool2d", named_kernel(&K::avg_pool2d, "avg_pool2d"));
  m.impl("avg_pool2d_backward", named_kernel(&K::avg_pool2d_backward, "avg_pool2d_backward"));
  m.impl("_adaptive_avg_pool2d", named_kernel(&K::adaptive_avg_pool2d, "_adaptive_avg_pool2d"));
  m.impl("_adaptive_avg_pool2d_backward",
         named_kernel(&K::adaptive_avg_pool2d_backward, "_adaptive_avg_pool2d_backward"));
  m.impl("upsample_nearest2d", named_kernel(&K::upsample_nearest2d, "upsample_nearest2d"));
  m.impl("upsample_nearest2d_backward", named_kernel(&K::upsample_nearest2d_backward, "upsample_nearest2d_backward"));
  m.impl("upsample_bilinear2d", named_kernel(&K::upsample_bilinear2d, "upsample_bilinear2d"));
  m.impl("upsample_bilinear2d_backward",
         named_kernel(&K::upsample_bilinear2d_backward, "upsample_bilinear2d_backward"));
}

}  // namespace anatomy::dispatch

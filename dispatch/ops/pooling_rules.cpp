// The pooling and upsampling rules: PyTorch's checks (pool2d_shape_check, upsample_2d_common_check)
// and output sizes, with typed errors that name the operator and the values.
#include "anatomy/dispatch/ops/pooling_rules.h"

#include <array>
#include <limits>

#include "anatomy/dispatch/ops/copy.h"
#include "anatomy/dispatch/ops/factories.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {
namespace {

using pooling::Axis;
using pooling::WindowKind;

// A pair of (H, W) values from a list of one or two; an empty list gives `fallback`.
std::array<int64_t, 2> pair_of(const char* op, const char* what, IntArrayRef v, IntArrayRef fallback = {}) {
  if (v.empty() && !fallback.empty()) return pair_of(op, what, fallback);
  ANATOMY_CHECK(v.size() == 1 || v.size() == 2, ValueError, "{}: {} must be one int or two, got {}", op, what,
                shape_string(v));
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// A floating input of 3 or 4 dims whose C, H and W are not zero (the batch may be).
void check_input(const char* op, const Tensor& self, bool integers_too) {
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is undefined", op);
  ANATOMY_CHECK(self.dim() == 3 || self.dim() == 4, ValueError,
                "{}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape {}", op, shape_string(self.sizes()));
  for (int64_t d = self.dim() - 3; d < self.dim(); ++d) {
    ANATOMY_CHECK(self.size(d) > 0, ValueError, "{}: expected nonzero C, H and W, got input of shape {}", op,
                  shape_string(self.sizes()));
  }
  const DType t = self.dtype();
  ANATOMY_CHECK(is_floating(t) || (integers_too && is_integral(t)), TypeError, "{}: input must be {}, got {}", op,
                integers_too ? "floating or integer" : "floating", name(t));
}

// PyTorch's pooling_output_shape: floor (or ceil) of the padded span over the stride, and with
// ceil_mode the last window must start inside the input or its left padding. In 128 bits, so that
// no kernel, stride, padding or dilation a user passes overflows it; a size too large for int64
// is refused.
int64_t pooled_size(const char* op, int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                    bool ceil_mode) {
  using Wide = __int128;
  const Wide span = Wide(in) + 2 * Wide(pad) - Wide(dilation) * (Wide(kernel) - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  Wide out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= Wide(in) + pad) --out;
  ANATOMY_CHECK(out <= Wide(std::numeric_limits<int64_t>::max()), ValueError,
                "{}: the output size of an input size {} with kernel {}, stride {}, padding {} and dilation {} is too "
                "large",
                op, in, kernel, stride, pad, dilation);
  return out < 0 ? 0 : static_cast<int64_t>(out);
}

PoolPlan plan_for(const Tensor& self, WindowKind kind) {
  PoolPlan p;
  p.window.kind = kind;
  p.in_sizes.assign(self.sizes().begin(), self.sizes().end());
  p.batch = self.dim() == 4 ? self.size(0) : 1;
  p.channels = self.size(-3);
  p.channels_last = pool_memory_format(self) == MemoryFormat::ChannelsLast;
  p.dtype = self.dtype();
  p.device = self.device();
  return p;
}

void set_output(PoolPlan& p, const char* op) {
  const Axis &h = p.window.h, &w = p.window.w;
  ANATOMY_CHECK(h.out >= 1 && w.out >= 1, ValueError,
                "{}: the output of an input of shape {} would be {}x{}, which is too small", op,
                shape_string(p.in_sizes), h.out, w.out);
  p.out_sizes = p.in_sizes;
  p.out_sizes[p.out_sizes.size() - 2] = h.out;
  p.out_sizes[p.out_sizes.size() - 1] = w.out;
}

// The kernel, stride, padding and dilation checks of pool2d_shape_check, and the output size.
void set_sliding_axes(PoolPlan& p, const char* op, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, bool ceil_mode) {
  const auto k = pair_of(op, "kernel_size", kernel_size);
  const auto s = pair_of(op, "stride", stride, kernel_size);
  const auto pad = pair_of(op, "padding", padding);
  const auto d = pair_of(op, "dilation", dilation);
  ANATOMY_CHECK(k[0] > 0 && k[1] > 0, ValueError, "{}: kernel_size must be positive, got {}", op,
                shape_string(kernel_size));
  ANATOMY_CHECK(s[0] > 0 && s[1] > 0, ValueError, "{}: stride must be positive, got {}", op, shape_string(stride));
  ANATOMY_CHECK(d[0] > 0 && d[1] > 0, ValueError, "{}: dilation must be positive, got {}", op, shape_string(dilation));
  ANATOMY_CHECK(pad[0] >= 0 && pad[1] >= 0, ValueError, "{}: padding must not be negative, got {}", op,
                shape_string(padding));
  ANATOMY_CHECK(pad[0] <= k[0] / 2 && pad[1] <= k[1] / 2, ValueError,
                "{}: padding must be at most half the kernel size, got padding {} for kernel_size {}", op,
                shape_string(padding), shape_string(kernel_size));
  Axis* axes[2] = {&p.window.h, &p.window.w};
  for (int i = 0; i < 2; ++i) {
    Axis& a = *axes[i];
    a.in = p.in_sizes[p.in_sizes.size() - 2 + i];
    a.kernel = k[i];
    a.stride = s[i];
    a.pad = pad[i];
    a.dilation = d[i];
    a.out = pooled_size(op, a.in, a.kernel, a.stride, a.pad, a.dilation, ceil_mode);
  }
  set_output(p, op);
}

// PyTorch's compute_scales_value: 1 / scale when a positive scale is given, else in / out.
double source_scale(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

}  // namespace

Tensor PoolPlan::empty_result(const std::vector<int64_t>& sizes, DType dtype) const {
  return empty(sizes, TensorOptions().dtype(dtype).device(device),
               sizes.size() == 4 ? format() : MemoryFormat::Contiguous);
}

// The layout a 4-D input suggests (PyTorch's suggest_memory_format); anything else is NCHW.
MemoryFormat pool_memory_format(const Tensor& t) {
  return t.dim() == 4 ? suggest_memory_format(t) : MemoryFormat::Contiguous;
}

PoolPlan plan_max_pool2d(const char* op, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  check_input(op, self, /*integers_too=*/true);
  PoolPlan p = plan_for(self, WindowKind::Max);
  set_sliding_axes(p, op, kernel_size, stride, padding, dilation, ceil_mode);
  return p;
}

PoolPlan plan_avg_pool2d(const char* op, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  check_input(op, self, /*integers_too=*/false);
  ANATOMY_CHECK(!divisor_override || *divisor_override != 0, ValueError, "{}: divisor_override must not be 0", op);
  PoolPlan p = plan_for(self, WindowKind::Avg);
  set_sliding_axes(p, op, kernel_size, stride, padding, IntArrayRef{1}, ceil_mode);
  p.window.h.count_include_pad = p.window.w.count_include_pad = count_include_pad;
  if (divisor_override) {
    p.window.h.fixed_weight = 1.0 / static_cast<double>(*divisor_override);
    p.window.w.fixed_weight = 1.0;
  }
  return p;
}

PoolPlan plan_adaptive_avg_pool2d(const char* op, const Tensor& self, IntArrayRef output_size) {
  check_input(op, self, /*integers_too=*/false);
  ANATOMY_CHECK(output_size.size() == 2, ValueError, "{}: output_size must have 2 elements, got {}", op,
                shape_string(output_size));
  ANATOMY_CHECK(output_size[0] >= 0 && output_size[1] >= 0, ValueError, "{}: output_size must not be negative, got {}",
                op, shape_string(output_size));
  PoolPlan p = plan_for(self, WindowKind::Adaptive);
  p.window.h.in = self.size(-2);
  p.window.w.in = self.size(-1);
  p.window.h.out = output_size[0];
  p.window.w.out = output_size[1];
  p.out_sizes = p.in_sizes;
  p.out_sizes[p.out_sizes.size() - 2] = output_size[0];
  p.out_sizes[p.out_sizes.size() - 1] = output_size[1];
  return p;
}

PoolPlan plan_upsample2d(const char* op, WindowKind kind, const Tensor& like, IntArrayRef input_size,
                         IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                         std::optional<double> scales_w) {
  ANATOMY_CHECK(like.defined(), ValueError, "{}: the input is undefined", op);
  ANATOMY_CHECK(output_size.size() == 2, ValueError, "{}: output_size must have 2 elements, got {}", op,
                shape_string(output_size));
  ANATOMY_CHECK(input_size.size() == 4, ValueError, "{}: expected a 4-D (N, C, H, W) input, got shape {}", op,
                shape_string(input_size));
  ANATOMY_CHECK(input_size[1] > 0 && input_size[2] > 0 && input_size[3] > 0 && input_size[0] >= 0 &&
                    output_size[0] > 0 && output_size[1] > 0,
                ValueError, "{}: input and output sizes must be greater than 0, got input {} and output_size {}", op,
                shape_string(input_size), shape_string(output_size));
  ANATOMY_CHECK(is_floating(like.dtype()), TypeError, "{}: input must be floating, got {}", op, name(like.dtype()));
  PoolPlan p;
  p.window.kind = kind;
  p.in_sizes.assign(input_size.begin(), input_size.end());
  p.batch = input_size[0];
  p.channels = input_size[1];
  p.channels_last = pool_memory_format(like) == MemoryFormat::ChannelsLast;
  p.dtype = like.dtype();
  p.device = like.device();
  const std::optional<double> scales[2] = {scales_h, scales_w};
  Axis* axes[2] = {&p.window.h, &p.window.w};
  for (int i = 0; i < 2; ++i) {
    Axis& a = *axes[i];
    a.in = input_size[2 + i];
    a.out = output_size[i];
    a.align_corners = align_corners;
    // In float, as PyTorch's compute_scales_value<float> (a float division of the sizes).
    a.nearest_scale = scales[i] && *scales[i] > 0 ? static_cast<float>(1.0 / *scales[i])
                                                  : static_cast<float>(a.in) / static_cast<float>(a.out);
    if (align_corners) {
      a.linear_scale = a.out > 1 ? static_cast<double>(a.in - 1) / static_cast<double>(a.out - 1) : 0.0;
    } else {
      a.linear_scale = source_scale(scales[i], a.in, a.out);
    }
  }
  set_output(p, op);
  return p;
}

namespace {

void check_grad_output(const char* op, const PoolPlan& plan, const Tensor& grad_output) {
  ANATOMY_CHECK(grad_output.defined(), ValueError, "{}: grad_output is undefined", op);
  ANATOMY_CHECK(grad_output.device() == plan.device, DeviceError, "{}: grad_output is on {} but input is on {}", op,
                grad_output.device().str(), plan.device.str());
  ANATOMY_CHECK(grad_output.dtype() == plan.dtype, TypeError, "{}: grad_output is {} but input is {}", op,
                name(grad_output.dtype()), name(plan.dtype));
  ANATOMY_CHECK(grad_output.sizes() == IntArrayRef(plan.out_sizes), ValueError,
                "{}: grad_output of shape {} does not match the output's shape {}", op,
                shape_string(grad_output.sizes()), shape_string(plan.out_sizes));
}

void check_pool_indices(const char* op, const PoolPlan& plan, const Tensor& indices) {
  ANATOMY_CHECK(indices.defined(), ValueError, "{}: indices are undefined", op);
  ANATOMY_CHECK(indices.device() == plan.device, DeviceError, "{}: indices are on {} but input is on {}", op,
                indices.device().str(), plan.device.str());
  ANATOMY_CHECK(indices.dtype() == DType::Int64, TypeError, "{}: indices must be int64, got {}", op,
                name(indices.dtype()));
  ANATOMY_CHECK(indices.sizes() == IntArrayRef(plan.out_sizes), ValueError,
                "{}: indices of shape {} do not match the output's shape {}", op, shape_string(indices.sizes()),
                shape_string(plan.out_sizes));
}

}  // namespace

PoolPlan plan_max_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef dilation, bool ceil_mode, const Tensor& indices) {
  PoolPlan plan = plan_max_pool2d(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "{}: input must be floating, got {}", op, name(self.dtype()));
  check_grad_output(op, plan, grad_output);
  check_pool_indices(op, plan, indices);
  return plan;
}

PoolPlan plan_avg_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  PoolPlan plan =
      plan_avg_pool2d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_grad_output(op, plan, grad_output);
  return plan;
}

PoolPlan plan_adaptive_avg_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self) {
  ANATOMY_CHECK(grad_output.defined() && grad_output.dim() >= 2, ValueError,
                "{}: grad_output must have at least 2 dims", op);
  PoolPlan plan = plan_adaptive_avg_pool2d(op, self, {grad_output.size(-2), grad_output.size(-1)});
  check_grad_output(op, plan, grad_output);
  return plan;
}

PoolPlan plan_upsample2d_backward(const char* op, pooling::WindowKind kind, const Tensor& grad_output,
                                  IntArrayRef input_size, IntArrayRef output_size, bool align_corners,
                                  std::optional<double> scales_h, std::optional<double> scales_w) {
  PoolPlan plan = plan_upsample2d(op, kind, grad_output, input_size, output_size, align_corners, scales_h, scales_w);
  check_grad_output(op, plan, grad_output);
  return plan;
}

}  // namespace anatomy

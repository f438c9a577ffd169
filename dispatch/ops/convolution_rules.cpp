// The convolutions' checks and geometry (see convolution_rules.h). Messages follow PyTorch's.
#include "anatomy/dispatch/ops/convolution_rules.h"

#include <fmt/ranges.h>

#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

// One value per spatial dim: a list of that length, or one value for all.
std::vector<int64_t> per_dim(const char* op, const char* what, IntArrayRef values, int64_t spatial) {
  const auto n = static_cast<int64_t>(values.size());
  ANATOMY_CHECK(n == 1 || n == spatial, ValueError,
                "{}: expected {} to be a single integer value or a list of {} values "
                "to match the convolution dimensions, but got {}={}",
                op, what, spatial, what, fmt::join(values, ", "));
  if (n == spatial) return {values.begin(), values.end()};
  return std::vector<int64_t>(static_cast<size_t>(spatial), values[0]);
}

// Strides, paddings, dilations and output paddings above this are refused: cuDNN takes them as
// 32-bit ints, and the backward's views multiply them by sizes, which must not overflow.
constexpr int64_t kMaxConvParameter = (int64_t{1} << 31) - 1;

void check_all(const char* op, const char* what, const std::vector<int64_t>& v, bool positive, const char* message) {
  for (int64_t x : v) {
    ANATOMY_CHECK(positive ? x > 0 : x >= 0, ValueError, "{}: {}, got [{}]", op, message, fmt::join(v, ", "));
    ANATOMY_CHECK(x <= kMaxConvParameter, ValueError, "{}: {} [{}] exceeds the largest supported value, {}", op, what,
                  fmt::join(v, ", "), kMaxConvParameter);
  }
}

std::string sizes_text(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// The spatial sizes as PyTorch's messages print them: "5 x 7".
std::string spatial_text(const Tensor& t) {
  const IntArrayRef s = t.sizes();
  return fmt::format("{}", fmt::join(s.begin() + 2, s.end(), " x "));
}

}  // namespace

ConvGeometry check_convolution(const char* op, const Tensor& input, const Tensor& weight,
                               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                               IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups) {
  ANATOMY_CHECK(input.defined() && weight.defined(), ValueError, "{}: input and weight must be defined", op);
  const int64_t wdim = weight.dim();
  ANATOMY_CHECK(wdim >= 3 && wdim <= 5, ValueError,
                "{}: weight must be 3-, 4- or 5-dimensional (1-, 2- or 3-d convolution), got a weight of size {}", op,
                sizes_text(weight));
  ANATOMY_CHECK(input.dim() == wdim, ValueError,
                "{}: expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of size "
                "{} instead",
                op, wdim, wdim, sizes_text(weight), input.dim(), sizes_text(input));
  ANATOMY_CHECK(is_floating(input.dtype()), TypeError, "{}: input must be floating, got {}", op, name(input.dtype()));
  ANATOMY_CHECK(input.dtype() == weight.dtype(), TypeError,
                "{}: input type ({}) and weight type ({}) should be the same", op, name(input.dtype()),
                name(weight.dtype()));
  ANATOMY_CHECK(input.device() == weight.device(), DeviceError, "{}: input is on {} but weight is on {}", op,
                input.device().str(), weight.device().str());
  ANATOMY_CHECK(groups > 0, ValueError, "{}: groups must be positive, got {}", op, groups);

  ConvGeometry g;
  g.spatial = wdim - 2;
  g.transposed = transposed;
  g.groups = groups;
  g.stride = per_dim(op, "stride", stride, g.spatial);
  g.padding = per_dim(op, "padding", padding, g.spatial);
  g.dilation = per_dim(op, "dilation", dilation, g.spatial);
  g.output_padding = per_dim(op, "output_padding", output_padding, g.spatial);
  check_all(op, "stride", g.stride, true, "non-positive stride is not supported");
  check_all(op, "dilation", g.dilation, true, "dilation should be greater than zero");
  check_all(op, "padding", g.padding, false, "negative padding is not supported");
  check_all(op, "output_padding", g.output_padding, false, "negative output_padding is not supported");
  for (int64_t i = 0; i < g.spatial; ++i) {
    const auto u = static_cast<size_t>(i);
    if (!transposed) {
      ANATOMY_CHECK(g.output_padding[u] == 0, ValueError,
                    "{}: output_padding is only for transposed convolutions, got [{}]", op,
                    fmt::join(g.output_padding, ", "));
    } else {
      ANATOMY_CHECK(g.output_padding[u] < g.stride[u] || g.output_padding[u] < g.dilation[u], ValueError,
                    "{}: output padding must be smaller than either stride or dilation, got output_padding=[{}], "
                    "stride=[{}], dilation=[{}]",
                    op, fmt::join(g.output_padding, ", "), fmt::join(g.stride, ", "), fmt::join(g.dilation, ", "));
    }
  }

  const int64_t c_in = input.size(1);
  ANATOMY_CHECK(weight.size(0) % groups == 0, ValueError,
                "{}: given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of size {} "
                "instead",
                op, groups, groups, sizes_text(weight));
  if (!transposed) {
    ANATOMY_CHECK(c_in == weight.size(1) * groups, ValueError,
                  "{}: given groups={}, weight of size {}, expected input {} to have {} channels, but got {} channels "
                  "instead",
                  op, groups, sizes_text(weight), sizes_text(input), weight.size(1) * groups, c_in);
    g.out_channels = weight.size(0);
  } else {
    ANATOMY_CHECK(
        c_in == weight.size(0), ValueError,
        "{}: given transposed=1, weight of size {}, expected input {} to have {} channels, but got {} channels "
        "instead",
        op, sizes_text(weight), sizes_text(input), weight.size(0), c_in);
    g.out_channels = weight.size(1) * groups;
  }
  g.in_channels = c_in;
  if (bias && bias->defined()) {
    ANATOMY_CHECK(bias->dim() == 1 && bias->size(0) == g.out_channels, ValueError,
                  "{}: given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of "
                  "size {} instead",
                  op, sizes_text(weight), g.out_channels, sizes_text(*bias));
    ANATOMY_CHECK(bias->dtype() == input.dtype(), TypeError,
                  "{}: input type ({}) and bias type ({}) should be the same", op, name(input.dtype()),
                  name(bias->dtype()));
    ANATOMY_CHECK(bias->device() == input.device(), DeviceError, "{}: bias is on {} but input is on {}", op,
                  bias->device().str(), input.device().str());
  }

  g.output_shape = {input.size(0), g.out_channels};
  for (int64_t i = 0; i < g.spatial; ++i) {
    const auto u = static_cast<size_t>(i);
    const int64_t len = input.size(i + 2), k = weight.size(i + 2);
    // A kernel with no taps along a dim reads nothing; its gradients have no convolution to be
    // (PyTorch's kernels refuse it too).
    ANATOMY_CHECK(k > 0, ValueError, "{}: the kernel has size 0 in spatial dim {} (weight of size {})", op, i,
                  sizes_text(weight));
    g.kernel.push_back(k);
    const int64_t extent = g.dilation[u] * (k - 1) + 1;
    int64_t out = 0;
    if (!transposed) {
      const int64_t padded = len + 2 * g.padding[u];
      ANATOMY_CHECK(padded >= extent, ValueError,
                    "{}: calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be "
                    "greater than actual input size",
                    op, spatial_text(input), spatial_text(weight));
      out = (padded - extent) / g.stride[u] + 1;
    } else {
      out = (len - 1) * g.stride[u] - 2 * g.padding[u] + extent + g.output_padding[u];
      ANATOMY_CHECK(len > 0 && out > 0, ValueError,
                    "{}: given input size per channel ({}), calculated output size per channel is not positive", op,
                    spatial_text(input));
    }
    g.output_shape.push_back(out);
  }
  // NHWC (NDHWC for 3-d) when either operand is laid out so.
  const MemoryFormat last = wdim == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
  if (wdim >= 4 && (suggest_memory_format(input) == last || suggest_memory_format(weight) == last)) g.format = last;
  return g;
}

ConvGeometry check_convolution_backward(const char* op, const Tensor& grad_output, const Tensor& input,
                                        const Tensor& weight, OptionalIntArrayRef bias_sizes, IntArrayRef stride,
                                        IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                        IntArrayRef output_padding, int64_t groups, IntArrayRef output_mask) {
  ANATOMY_CHECK(output_mask.size() == 3, ValueError, "{}: output_mask must have 3 values, got {}", op,
                output_mask.size());
  ConvGeometry g =
      check_convolution(op, input, weight, std::nullopt, stride, padding, dilation, transposed, output_padding, groups);
  ANATOMY_CHECK(grad_output.defined(), ValueError, "{}: grad_output must be defined", op);
  ANATOMY_CHECK(grad_output.sizes() == IntArrayRef(g.output_shape), ValueError,
                "{}: grad_output of size {} does not match the output size [{}]", op, sizes_text(grad_output),
                fmt::join(g.output_shape, ", "));
  ANATOMY_CHECK(grad_output.dtype() == input.dtype(), TypeError, "{}: grad_output is {} but input is {}", op,
                name(grad_output.dtype()), name(input.dtype()));
  ANATOMY_CHECK(grad_output.device() == input.device(), DeviceError, "{}: grad_output is on {} but input is on {}", op,
                grad_output.device().str(), input.device().str());
  if (bias_sizes) {
    ANATOMY_CHECK(bias_sizes->size() == 1 && (*bias_sizes)[0] == g.out_channels, ValueError,
                  "{}: bias_sizes must be [{}], got [{}]", op, g.out_channels, fmt::join(*bias_sizes, ", "));
  }
  return g;
}

Tensor empty_convolution_output(const ConvGeometry& g, const Tensor& input) {
  return empty(g.output_shape, input.options(), g.format);
}

Tensor dense_in(const Tensor& t, MemoryFormat format) { return t.contiguous(format); }

}  // namespace anatomy

// Meta: convolution and convolution_backward compute only their results' shapes, dtypes and
// layouts, with the same checks as the real kernels (dispatch/ops/convolution_rules.h).
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/convolution_rules.h"

namespace anatomy::meta {
namespace {

Tensor convolution_meta(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  const ConvGeometry g = check_convolution("convolution", input, weight, bias, stride, padding, dilation, transposed,
                                           output_padding, groups);
  return empty_convolution_output(g, input);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_meta(const Tensor& grad_output, const Tensor& input,
                                                             const Tensor& weight, OptionalIntArrayRef bias_sizes,
                                                             IntArrayRef stride, IntArrayRef padding,
                                                             IntArrayRef dilation, bool transposed,
                                                             IntArrayRef output_padding, int64_t groups,
                                                             IntArrayRef output_mask) {
  const ConvGeometry g =
      check_convolution_backward("convolution_backward", grad_output, input, weight, bias_sizes, stride, padding,
                                 dilation, transposed, output_padding, groups, output_mask);
  Tensor dx, dw, db;
  if (output_mask[0]) dx = empty(input.sizes(), input.options(), g.format);
  if (output_mask[1]) dw = empty(weight.sizes(), weight.options(), g.format);
  if (output_mask[2]) db = empty({g.out_channels}, input.options());
  return {dx, dw, db};
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("convolution", ANATOMY_KERNEL(convolution_meta));
  m.impl("convolution_backward", ANATOMY_KERNEL(convolution_backward_meta));
}

}  // namespace anatomy::meta

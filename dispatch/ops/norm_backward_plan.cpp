// Argument checks of the fused softmax, log_softmax, layer_norm and rms_norm backward operators.
#include "anatomy/dispatch/ops/norm_backward_plan.h"

#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

// `t` has `like`'s shape, dtype and device.
void check_like(const char* op, const char* what, const Tensor& t, const char* like_what, const Tensor& like) {
  ANATOMY_CHECK(t.defined(), ValueError, "{}: {} is an undefined tensor", op, what);
  ANATOMY_CHECK(t.sizes() == like.sizes(), ValueError, "{}: {} has shape [{}] but {} has shape [{}]", op, what,
                fmt::join(t.sizes(), ", "), like_what, fmt::join(like.sizes(), ", "));
  ANATOMY_CHECK(t.dtype() == like.dtype(), TypeError, "{}: {} is {} but {} is {}", op, what, name(t.dtype()), like_what,
                name(like.dtype()));
  ANATOMY_CHECK(t.device() == like.device(), DeviceError, "{}: {} is on {} but {} is on {}", op, what, t.device().str(),
                like_what, like.device().str());
}

}  // namespace

SoftmaxBackwardPlan prepare_softmax_backward(const char* op, const Tensor& grad_output, const Tensor& output,
                                             int64_t dim, DType input_dtype, bool contiguous) {
  ANATOMY_CHECK(output.defined(), ValueError, "{}: output is an undefined tensor", op);
  check_like(op, "grad_output", grad_output, "output", output);
  ANATOMY_CHECK(is_floating(output.dtype()), TypeError, "{}: expected a floating point output, got {}", op,
                name(output.dtype()));
  ANATOMY_CHECK(is_floating(input_dtype), TypeError, "{}: expected a floating point input_dtype, got {}", op,
                name(input_dtype));
  SoftmaxBackwardPlan plan;
  plan.dim = wrap_dim(dim, output.dim(), op);
  plan.grad = contiguous ? grad_output.contiguous() : grad_output;
  plan.output = contiguous ? output.contiguous() : output;
  for (int64_t i = 0; i < output.dim(); ++i) {
    if (i < plan.dim) plan.outer *= output.sizes()[i];
    else if (i == plan.dim) plan.size = output.sizes()[i];
    else plan.inner *= output.sizes()[i];
  }
  return plan;
}

NormBackwardPlan prepare_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input,
                                       IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
                                       const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                       bool contiguous) {
  NormBackwardPlan plan;
  plan.rows = prepare_row_norm(op, input, normalized_shape, weight, bias);
  check_like(op, "grad_out", grad_out, "input", input);
  plan.grad = contiguous ? grad_out.contiguous() : grad_out;
  auto stat = [&](const Tensor& s, const char* what) {
    if (!s.defined()) return Tensor();
    ANATOMY_CHECK(s.numel() == plan.rows.rows || (input.numel() == 0 && s.numel() == 0), ValueError,
                  "{}: {} has {} elements, expected one per normalized row ({})", op, what, s.numel(), plan.rows.rows);
    ANATOMY_CHECK(s.dtype() == input.dtype(), TypeError, "{}: {} is {} but input is {}", op, what, name(s.dtype()),
                  name(input.dtype()));
    ANATOMY_CHECK(s.device() == input.device(), DeviceError, "{}: {} is on {} but input is on {}", op, what,
                  s.device().str(), input.device().str());
    return contiguous ? s.contiguous() : s;
  };
  plan.mean = stat(mean, "mean");
  plan.rstd = stat(rstd, "rstd");
  return plan;
}

void check_output_mask(const char* op, IntArrayRef mask, size_t count) {
  ANATOMY_CHECK(mask.size() == count, ValueError, "{}: output_mask has {} entries, expected {}", op, mask.size(),
                count);
  for (int64_t m : mask) {
    ANATOMY_CHECK(m == 0 || m == 1, ValueError, "{}: output_mask entries are 0 or 1, got [{}]", op,
                  fmt::join(mask, ", "));
  }
}

}  // namespace anatomy

// Argument checks and allocation for softmax, log_softmax, layer_norm and rms_norm.
#include "anatomy/dispatch/ops/norm_plan.h"

#include "anatomy/dispatch/ops.h"

namespace anatomy {

SoftmaxPlan prepare_softmax(const char* op, const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is an undefined tensor", op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const DType t = dtype.value_or(self.dtype());
  ANATOMY_CHECK(is_floating(t), TypeError, "{}: expected a floating point input (or dtype), got {}", op, name(t));
  SoftmaxPlan plan;
  plan.input = (self.dtype() == t ? self : self.to(t)).contiguous();
  plan.out = empty(self.sizes(), TensorOptions().dtype(t).device(self.device()));
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) plan.outer *= self.sizes()[i];
    else if (i == d) plan.size = self.sizes()[i];
    else plan.inner *= self.sizes()[i];
  }
  return plan;
}

namespace {

struct RowStrides {
  int64_t row, col;
};

// The strides of the rows x cols view of `t` (cols: the last k dims): the last k dims must step
// through each row at one stride (they collapse into one dim), and the leading dims through the
// rows at one stride; nullopt otherwise (the input is then copied).
std::optional<RowStrides> uniform_strides(const Tensor& t, int64_t k, int64_t cols) {
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  const int64_t dim = t.dim();
  // Dims of size 1 step nowhere; the first dim of another size sets the stride, and each dim
  // before it must continue the run.
  auto collapse = [&](int64_t from, int64_t to) -> std::optional<std::optional<int64_t>> {
    std::optional<int64_t> stride;
    int64_t expected = 0;
    for (int64_t i = from; i >= to; --i) {
      if (sizes[i] == 1) continue;
      if (!stride) {
        stride = strides[i];
      } else if (strides[i] != expected) {
        return std::nullopt;
      }
      expected = strides[i] * sizes[i];
    }
    return stride;
  };
  const auto col = collapse(dim - 1, dim - k);
  if (!col) return std::nullopt;
  const auto row = collapse(dim - k - 1, 0);
  if (!row) return std::nullopt;
  return RowStrides{row->value_or(cols * col->value_or(1)), col->value_or(1)};
}

}  // namespace

RowNormPlan prepare_row_norm(const char* op, const Tensor& input, IntArrayRef normalized_shape,
                             const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, bool in_place) {
  ANATOMY_CHECK(input.defined(), ValueError, "{}: the input is an undefined tensor", op);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  ANATOMY_CHECK(k >= 1, ValueError, "{}: normalized_shape must have at least one dim", op);
  const IntArrayRef sizes = input.sizes();
  bool trailing = input.dim() >= k;
  for (int64_t i = 0; trailing && i < k; ++i) trailing = sizes[input.dim() - k + i] == normalized_shape[i];
  ANATOMY_CHECK(trailing, ValueError,
                "{}: normalized_shape [{}] does not match the trailing dims of the input of shape [{}]", op,
                fmt::join(normalized_shape, ", "), fmt::join(sizes, ", "));
  ANATOMY_CHECK(is_floating(input.dtype()), TypeError, "{}: expected a floating point input, got {}", op,
                name(input.dtype()));
  auto param = [&](const std::optional<Tensor>& p, const char* what) {
    if (!p || !p->defined()) return Tensor();
    ANATOMY_CHECK(p->sizes() == normalized_shape, ValueError, "{}: {} has shape [{}], expected [{}]", op, what,
                  fmt::join(p->sizes(), ", "), fmt::join(normalized_shape, ", "));
    ANATOMY_CHECK(p->device() == input.device(), DeviceError, "{}: {} is on {} but the input is on {}", op, what,
                  p->device().str(), input.device().str());
    ANATOMY_CHECK(is_floating(p->dtype()), TypeError, "{}: {} must be floating point, got {}", op, what,
                  name(p->dtype()));
    return (p->dtype() == input.dtype() ? *p : p->to(input.dtype())).contiguous();
  };
  RowNormPlan plan;
  plan.weight = param(weight, "weight");
  plan.bias = param(bias, "bias");
  plan.out = empty(sizes, TensorOptions().dtype(input.dtype()).device(input.device()));
  for (int64_t i = 0; i < k; ++i) plan.cols *= normalized_shape[i];
  const std::optional<RowStrides> strides =
      in_place && !input.is_contiguous() ? uniform_strides(input, k, plan.cols) : std::nullopt;
  plan.input = strides ? input : input.contiguous();
  plan.row_stride = strides ? strides->row : plan.cols;
  plan.col_stride = strides ? strides->col : 1;
  plan.rows = plan.cols == 0 ? 0 : input.numel() / plan.cols;
  for (int64_t i = 0; i < input.dim(); ++i) plan.stat_shape.push_back(i < input.dim() - k ? sizes[i] : 1);
  if (plan.cols == 0) {
    plan.rows = 1;
    for (int64_t i = 0; i < input.dim() - k; ++i) plan.rows *= sizes[i];
  }
  return plan;
}

void make_rows_contiguous(RowNormPlan& plan) {
  plan.input = plan.input.contiguous();
  plan.row_stride = plan.cols;
  plan.col_stride = 1;
}

}  // namespace anatomy

// The reduction operators' argument checks, result dtypes and results.
#include "anatomy/dispatch/ops/reduction_rules.h"

#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"

namespace anatomy {

Tensor allocate_reduction_result(const ReductionPlan& plan, DType dtype, Device device) {
  return empty_strided(plan.result_shape(), plan.result_strides(), TensorOptions().dtype(dtype).device(device));
}

Tensor dense_reduction_input(const ReductionPlan& plan, const Tensor& self) {
  if (plan.is_direct() || self.dim() == 0) return self;
  return self.permute(plan.permutation()).contiguous();
}

namespace {

bool is_arg(ReduceKind k) { return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin; }
bool is_extreme(ReduceKind k) { return k == ReduceKind::Max || k == ReduceKind::Min || is_arg(k); }

// The dtype the loop reads (the input is cast to it first) and the dtype of the result.
std::pair<DType, DType> reduction_dtypes(ReduceKind kind, const char* op, DType in, std::optional<DType> dtype) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Prod: {
      const DType t = dtype ? *dtype : is_integral(in, /*include_bool=*/true) ? DType::Int64 : in;
      return {t, t};
    }
    case ReduceKind::Mean: {
      const DType t = dtype.value_or(in);
      ANATOMY_CHECK(is_floating(t), TypeError,
                    "{}: could not infer the output dtype: the input is {}; mean needs a floating input or dtype", op,
                    name(t));
      return {t, t};
    }
    case ReduceKind::Var:
    case ReduceKind::Std:
    case ReduceKind::Norm:
      ANATOMY_CHECK(is_floating(in), TypeError, "{}: expected a floating point input, got {}", op, name(in));
      return {in, in};
    case ReduceKind::LogSumExp: {
      const DType t = is_floating(in) ? in : kDefaultFloat;
      return {t, t};
    }
    case ReduceKind::Any:
    case ReduceKind::All:
      return {in, DType::Bool};
    case ReduceKind::CountNonzero:
      return {in, DType::Int64};
    case ReduceKind::ArgMax:
    case ReduceKind::ArgMin:
      return {in, DType::Int64};
    case ReduceKind::Max:
    case ReduceKind::Min:
      return {in, in};
  }
  return {in, in};
}

// The first dim of size 0 among those the plan reduces, for a message.
int64_t first_empty_reduced_dim(const Tensor& self, const ReductionPlan& plan) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (plan.is_reduced(d) && self.sizes()[d] == 0) return d;
  }
  return 0;
}

}  // namespace

Reduction prepare_reduction(ReduceKind kind, const char* op, const Tensor& self, OptionalIntArrayRef dims, bool keepdim,
                            std::optional<DType> dtype, bool all_dims, bool with_indices) {
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is an undefined tensor", op);
  ReductionPlan plan(op, self, dims, keepdim, /*ordered=*/is_arg(kind) || with_indices);
  if (is_extreme(kind) && self.numel() == 0) {
    // There is no largest element of nothing.
    ANATOMY_CHECK(!all_dims, ValueError,
                  "{}: expected reduction dim to be specified for input.numel() == 0 (the input has shape [{}])", op,
                  fmt::join(self.sizes(), ", "));
    if (plan.reduced() == 0) {
      ANATOMY_THROW(IndexError, "{}: expected reduction dim {} to have non-zero size (the input has shape [{}])", op,
                    first_empty_reduced_dim(self, plan), fmt::join(self.sizes(), ", "));
    }
  }
  auto [compute, result] = reduction_dtypes(kind, op, self.dtype(), dtype);
  Tensor input = self.dtype() == compute ? self : self.to(compute);
  // The result is allocated through empty_strided: a failure names the reduction the user called.
  Tensor values = naming_oom(op, [&] { return allocate_reduction_result(plan, result, self.device()); });
  Tensor indices = with_indices
                       ? naming_oom(op, [&] { return allocate_reduction_result(plan, DType::Int64, self.device()); })
                       : Tensor();
  return Reduction{std::move(plan), std::move(input), std::move(values), std::move(indices)};
}

std::string dims_text(OptionalIntArrayRef dims) {
  return dims ? fmt::format("[{}]", fmt::join(*dims, ", ")) : std::string("None");
}

void check_reduction_out(const char* op, const Tensor& out, const Tensor& self, IntArrayRef shape, DType dtype) {
  ANATOMY_CHECK(out.defined(), ValueError, "{}: out is an undefined tensor", op);
  ANATOMY_CHECK(out.device() == self.device(), DeviceError, "{}: the output is on {} but the input is on {}", op,
                out.device().str(), self.device().str());
  ANATOMY_CHECK(out.sizes() == shape, ValueError, "{}: the output has shape [{}] but the result has shape [{}]", op,
                fmt::join(out.sizes(), ", "), fmt::join(shape, ", "));
  ANATOMY_CHECK(can_cast(dtype, out.dtype()), TypeError,
                "{}: result type {} can't be cast to the desired output type {}", op, name(dtype), name(out.dtype()));
  check_no_internal_overlap(out, op);
}

}  // namespace anatomy

// Meta: native_batch_norm and native_group_norm compute only their results' shapes, dtypes and
// layouts, with the same checks as the real kernels (dispatch/ops/channel_norm_rules.h). The
// backward operators' composites run on Meta tensors as they are.
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/channel_norm_rules.h"

namespace anatomy::meta {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

Tensor3 native_batch_norm_meta(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                               const OptTensor& running_mean, const OptTensor& running_var, bool training, double,
                               double) {
  const BatchNormArgs a =
      check_batch_norm("native_batch_norm", input, weight, bias, running_mean, running_var, training);
  const ChannelLayout l = channel_layout(input);
  const TensorOptions opts = TensorOptions().device(input.device());
  const Tensor y = empty_in_layout(l, opts.dtype(input.dtype()));
  return {y, empty({l.C}, opts.dtype(a.stat)), empty({l.C}, opts.dtype(a.stat))};
}

Tensor3 native_group_norm_meta(const Tensor& input, const OptTensor& weight, const OptTensor& bias, int64_t N,
                               int64_t C, int64_t HxW, int64_t group, double) {
  const GroupNormArgs a = check_group_norm("native_group_norm", input, weight, bias, N, C, HxW, group);
  const TensorOptions opts = TensorOptions().device(input.device());
  const Tensor y = empty_in_layout(channel_layout(input), opts.dtype(input.dtype()));
  return {y, empty({N, group}, opts.dtype(a.stat)), empty({N, group}, opts.dtype(a.stat))};
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("native_batch_norm", ANATOMY_KERNEL(native_batch_norm_meta));
  m.impl("native_group_norm", ANATOMY_KERNEL(native_group_norm_meta));
}

}  // namespace anatomy::meta

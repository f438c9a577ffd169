// CUDA: softmax and log_softmax along one dim (softmax.int, log_softmax.int), over the CPU's
// plan (dispatch/ops/norm_plan.h: the input cast to the computation dtype and made contiguous, the
// dim's [P, N, M] sizes); the kernels are in softmax.cu. Their derivatives are composites of
// element-wise ops and sum (autograd/), which run on CUDA as they are.
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/softmax/launch.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::cuda {
namespace {

template <bool Log>
Tensor softmax_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  SoftmaxPlan plan = prepare_softmax(Log ? "log_softmax" : "softmax", self, dim, dtype);
  if (plan.out.numel() == 0) return plan.out;
  DeviceGuard guard(plan.out.device());
  launch_softmax(Log, plan.input.dtype(), plan.input.data_ptr(), plan.out.data_ptr(), plan.outer, plan.size, plan.inner,
                 current_stream());
  return plan.out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("softmax.int", dispatch::named_kernel(&softmax_cuda<false>, "softmax"));
  m.impl("log_softmax.int", dispatch::named_kernel(&softmax_cuda<true>, "log_softmax"));
}

}  // namespace anatomy::cuda

// CUDA: _fused_adam_ and _fused_adam_capturable_ (dispatch/ops/fused_optim.h) over the multi-tensor
// kernel (fused_adam.cu), one launch sequence per dtype. Every tensor must be on one device; an
// entry whose tensors are not all contiguous takes the operators' path (the composite's
// arithmetic) instead.
#include <map>
#include <vector>

#include "anatomy/backends/cuda/optim/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/fused_optim.h"
#include "anatomy/dispatch/ops/fused_optim_rules.h"

namespace anatomy::cuda {
namespace {

// Both operators' kernel: `steps` empty for _fused_adam_ (the given corrections), else one count
// per parameter. Entries whose tensors are not all contiguous take the operators' path.
void fused_adam_lists(const char* op, TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                      TensorList steps, const AdamHyper& h) {
  if (params.empty()) return;
  const Device device = params[0].device();
  for (size_t i = 0; i < params.size(); ++i) {
    ANATOMY_CHECK(params[i].device() == device, DeviceError, "{}: every parameter must be on one device, got {} and {}",
                  op, device.str(), params[i].device().str());
  }
  DeviceGuard guard(device);
  std::map<DType, std::vector<AdamTensors>> by_dtype;
  for (size_t i = 0; i < params.size(); ++i) {
    const bool dense = params[i].is_contiguous() && grads[i].is_contiguous() && exp_avgs[i].is_contiguous() &&
                       exp_avg_sqs[i].is_contiguous();
    if (!dense && steps.empty()) {
      adam_step_with_ops(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], h.lr, h.beta1, h.beta2, h.weight_decay,
                         h.eps, h.bias_correction1, h.bias_correction2, h.decoupled_weight_decay);
    } else if (!dense) {
      steps[i].add_(1.0);
      adam_moments_with_ops(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], h.lr, h.beta1, h.beta2, h.weight_decay,
                            h.decoupled_weight_decay);
      adam_apply_with_device_count(params[i], exp_avgs[i], exp_avg_sqs[i], steps[i], h.lr, h.beta1, h.beta2, h.eps);
    } else {
      double* step = steps.empty() ? nullptr : steps[i].data_ptr<double>();
      by_dtype[params[i].dtype()].push_back(AdamTensors{params[i].data_ptr(), grads[i].data_ptr(),
                                                        exp_avgs[i].data_ptr(), exp_avg_sqs[i].data_ptr(),
                                                        params[i].numel(), step});
    }
  }
  for (const auto& [dtype, entries] : by_dtype) launch_fused_adam(dtype, entries, h, current_stream());
}

void fused_adam_cuda(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                     double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                     double bias_correction2, bool decoupled_weight_decay) {
  check_fused_adam(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, bias_correction1, bias_correction2);
  fused_adam_lists(
      "_fused_adam_", params, grads, exp_avgs, exp_avg_sqs, {},
      AdamHyper{lr, beta1, beta2, weight_decay, eps, bias_correction1, bias_correction2, decoupled_weight_decay});
}

void fused_adam_capturable_cuda(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                                TensorList steps, double lr, double beta1, double beta2, double weight_decay,
                                double eps, bool decoupled_weight_decay) {
  check_fused_adam_capturable(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps);
  fused_adam_lists("_fused_adam_capturable_", params, grads, exp_avgs, exp_avg_sqs, steps,
                   AdamHyper{lr, beta1, beta2, weight_decay, eps, 1, 1, decoupled_weight_decay});
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("_fused_adam_", ANATOMY_KERNEL(fused_adam_cuda));
  m.impl("_fused_adam_capturable_", ANATOMY_KERNEL(fused_adam_capturable_cuda));
}

}  // namespace anatomy::cuda

// SGD and AdamW (see optim.h): torch.optim's update rules, in place under no-grad.
#include "anatomy/optim/optim.h"

#include <cmath>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/core/device_streams.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    ANATOMY_CHECK(params_[i].defined() && params_[i].is_leaf() && params_[i].requires_grad(), ValueError,
                  "optimizer: parameter {} must be a leaf tensor that requires grad", i);
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : params_) {
    if (set_to_none) {
      p.set_grad(Tensor());
    } else if (Tensor g = p.grad(); g.defined()) {
      g.zero_();
    }
  }
}

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params)), opt_(options), momentum_(params_.size()) {
  ANATOMY_CHECK(opt_.lr >= 0 && opt_.momentum >= 0 && opt_.weight_decay >= 0, ValueError,
                "SGD: lr {}, momentum {} and weight_decay {} must be non-negative", opt_.lr, opt_.momentum,
                opt_.weight_decay);
  ANATOMY_CHECK(!opt_.nesterov || (opt_.momentum > 0 && opt_.dampening == 0), ValueError,
                "SGD: Nesterov momentum requires a momentum and zero dampening");
}

namespace {

bool is_captured(Device device) {
  const DeviceStreams* streams = device_streams(device.type());
  return streams != nullptr && streams->is_capturing != nullptr && streams->is_capturing(device);
}

// A step whose arithmetic depends on host state that changes per step cannot be captured into a
// CUDA graph: a replay would repeat the capture's value (docs/cuda-graphs.md).
void check_not_captured(const std::vector<Tensor>& params, const char* op) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0 && params[i].device() == params[i - 1].device()) continue;
    ANATOMY_CHECK(!is_captured(params[i].device()), ValueError,
                  "{}: cannot be captured in a CUDA graph: its bias correction uses a step count kept on the host, "
                  "which a replay would not advance (AdamWOptions::capturable keeps it on the device)",
                  op);
  }
}

}  // namespace

void SGD::step() {
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (opt_.weight_decay != 0) g = g.add(p, opt_.weight_decay);
    if (opt_.momentum != 0) {
      Tensor& buf = momentum_[i];
      if (!buf.defined()) {
        buf = g.clone();
      } else {
        buf.mul_(scalar_tensor(opt_.momentum, TensorOptions().dtype(buf.dtype()))).add_(g, 1 - opt_.dampening);
      }
      g = opt_.nesterov ? g.add(buf, opt_.momentum) : buf;
    }
    p.add_(g, -opt_.lr);
  }
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer(std::move(params)),
      opt_(options),
      exp_avg_(params_.size()),
      exp_avg_sq_(params_.size()),
      step_counts_(params_.size()) {
  ANATOMY_CHECK(opt_.lr >= 0 && opt_.eps >= 0 && opt_.beta1 >= 0 && opt_.beta1 < 1 && opt_.beta2 >= 0 && opt_.beta2 < 1,
                ValueError, "AdamW: invalid hyperparameters lr {}, betas ({}, {}), eps {}", opt_.lr, opt_.beta1,
                opt_.beta2, opt_.eps);
}

void AdamW::step() {
  autograd::NoGradGuard no_grad;
  if (opt_.capturable) {
    capturable_step();
    return;
  }
  check_not_captured(params_, "AdamW::step");
  ++steps_;
  const double bias1 = 1 - std::pow(opt_.beta1, static_cast<double>(steps_));
  const double bias2 = 1 - std::pow(opt_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!exp_avg_[i].defined()) {
      exp_avg_[i] = zeros_like(p);
      exp_avg_sq_[i] = zeros_like(p);
    }
    // Decoupled weight decay: shrink the parameter itself, not the gradient.
    if (opt_.weight_decay != 0)
      p.mul_(scalar_tensor(1 - opt_.lr * opt_.weight_decay, TensorOptions().dtype(p.dtype())));
    exp_avg_[i].mul_(scalar_tensor(opt_.beta1, TensorOptions().dtype(p.dtype()))).add_(g, 1 - opt_.beta1);
    exp_avg_sq_[i].mul_(scalar_tensor(opt_.beta2, TensorOptions().dtype(p.dtype()))).add_(g * g, 1 - opt_.beta2);
    const Tensor denom = (exp_avg_sq_[i] / bias2).sqrt() + opt_.eps;
    p.add_(exp_avg_[i] / denom, -opt_.lr / bias1);
  }
}

// The same update with the step count and the bias corrections as 0-d fp64 tensors on the
// parameter's device: every operation is device work, so the step can be captured.
void AdamW::capturable_step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!exp_avg_[i].defined()) {
      ANATOMY_CHECK(!is_captured(p.device()), ValueError,
                    "AdamW::step: the first step makes the optimizer's state, which a CUDA graph capture cannot: run "
                    "one step before capturing");
      exp_avg_[i] = zeros_like(p);
      exp_avg_sq_[i] = zeros_like(p);
      step_counts_[i] = zeros({}, TensorOptions().dtype(DType::Float64).device(p.device()));
    }
    Tensor& count = step_counts_[i];
    count.add_(1.0);
    // 1 - beta^t as exp(t log beta), on the device.
    const Tensor bias1 = (count * std::log(opt_.beta1)).exp().neg().add(1.0);
    const Tensor bias2 = (count * std::log(opt_.beta2)).exp().neg().add(1.0);
    if (opt_.weight_decay != 0)
      p.mul_(scalar_tensor(1 - opt_.lr * opt_.weight_decay, TensorOptions().dtype(p.dtype())));
    exp_avg_[i].mul_(scalar_tensor(opt_.beta1, TensorOptions().dtype(p.dtype()))).add_(g, 1 - opt_.beta1);
    exp_avg_sq_[i].mul_(scalar_tensor(opt_.beta2, TensorOptions().dtype(p.dtype()))).add_(g * g, 1 - opt_.beta2);
    const Tensor denom = (exp_avg_sq_[i] / bias2.to(p.dtype())).sqrt() + opt_.eps;
    p.sub_(exp_avg_[i] / denom * (bias1.reciprocal() * opt_.lr).to(p.dtype()));
  }
}

}  // namespace anatomy::optim

// RMSprop's step (optim.h): torch.optim.RMSprop's update, per group.
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/nn/optim/options_fields.h"

namespace anatomy::optim {

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions options)
    : RMSprop(std::vector<ParamGroup<RMSpropOptions>>{{std::move(params), options}}) {}

RMSprop::RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups) : GroupedOptimizer(std::move(groups), "RMSprop") {}

void RMSprop::step() {
  autograd::NoGradGuard no_grad;
  size_t n = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const RMSpropOptions& o = groups_[gi].options;
    check_options(o, name_, gi);
    for (const Tensor& p : groups_[gi].params) {
      std::map<std::string, Tensor>& state = state_[n++];
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (state.empty()) {
        check_state_outside_capture(p, name_);
        state["step"] = zeros({}, TensorOptions().dtype(DType::Int64));
        state["square_avg"] = zeros_like(p);
      }
      if (o.momentum > 0 && !state.count("momentum_buffer")) state["momentum_buffer"] = zeros_like(p);
      if (o.centered && !state.count("grad_avg")) state["grad_avg"] = zeros_like(p);
      state.at("step").add_(1);
      if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
      Tensor& square_avg = state.at("square_avg");
      square_avg.mul_(scalar_tensor(o.alpha, TensorOptions().dtype(p.dtype()))).addcmul_(g, g, 1 - o.alpha);
      Tensor avg;
      if (o.centered) {
        Tensor& grad_avg = state.at("grad_avg");
        lerp_(grad_avg, g, 1 - o.alpha);
        avg = square_avg.addcmul(grad_avg, grad_avg, -1).sqrt().add_(o.eps);
      } else {
        avg = square_avg.sqrt().add_(o.eps);
      }
      if (o.momentum > 0) {
        Tensor& buf = state.at("momentum_buffer");
        buf.mul_(scalar_tensor(o.momentum, TensorOptions().dtype(p.dtype()))).addcdiv_(g, avg);
        p.add_(buf, -o.lr);
      } else {
        p.addcdiv_(g, avg, -o.lr);
      }
    }
  }
}

}  // namespace anatomy::optim

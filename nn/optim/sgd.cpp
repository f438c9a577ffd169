// SGD's step (optim.h): torch.optim.SGD's update, per group.
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/nn/optim/options_fields.h"

namespace anatomy::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup<SGDOptions>>{{std::move(params), options}}) {}

SGD::SGD(std::vector<ParamGroup<SGDOptions>> groups) : GroupedOptimizer(std::move(groups), "SGD") {}

void SGD::step() {
  autograd::NoGradGuard no_grad;
  size_t n = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const SGDOptions& o = groups_[gi].options;
    check_options(o, name_, gi);
    for (const Tensor& p : groups_[gi].params) {
      std::map<std::string, Tensor>& state = state_[n++];
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
      if (o.momentum != 0) {
        auto it = state.find("momentum_buffer");
        if (it == state.end()) {
          check_state_outside_capture(p, name_);
          it = state.emplace("momentum_buffer", g.clone()).first;
        } else {
          it->second.mul_(scalar_tensor(o.momentum, TensorOptions().dtype(it->second.dtype())))
              .add_(g, 1 - o.dampening);
        }
        g = o.nesterov ? g.add(it->second, o.momentum) : it->second;
      }
      p.add_(g, -o.lr);
    }
  }
}

}  // namespace anatomy::optim

// The --peer torch module's training workloads and its profile (tools/peer.h): c09's MLP and
// transformer steps (eager, and as torch's whole-network CUDA graph capture), c10's transformer
// loss and backward, and a run under torch's profiler (Kineto) summed by event name. Compiled only
// into the module, with libtorch's flags.
#include "anatomy/tools/peer_torch_training.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_fused_adamw.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#if __has_include(<ATen/cuda/CUDAGraph.h>)
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define ANATOMY_PEER_CUDA 1
#endif

namespace anatomy::tools::torch_peer {
namespace {

// c09's MLP and its training step in torch's terms (Peer::mlp_training_step): torch's own leaves
// cloned from the engine's parameters, torch::optim::SGD, and the batches as views of the
// engine's tensors.
class MlpModel {
 public:
  MlpModel(const std::vector<Tensor>& params, double lr, double momentum) {
    for (const Tensor& p : params) params_.push_back(view_of(p).detach().clone().requires_grad_(true));
    optimizer_ = std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(lr).momentum(momentum));
  }
  at::Tensor loss(const at::Tensor& x, const at::Tensor& y) const {
    at::Tensor h = x;
    for (size_t i = 0; i + 1 < params_.size(); i += 2) {
      h = at::linear(h, params_[i], params_[i + 1]);
      if (i + 2 < params_.size()) h = h.relu();
    }
    return (h - y).pow(2).mean();
  }
  // zero_grad (set_to_none), the loss, backward, the optimizer's step; the loss, detached.
  at::Tensor step(const at::Tensor& x, const at::Tensor& y) {
    optimizer_->zero_grad(/*set_to_none=*/true);
    at::Tensor l = loss(x, y);
    l.backward();
    optimizer_->step();
    return l.detach();
  }
  void forward_backward(const at::Tensor& x, const at::Tensor& y) {
    optimizer_->zero_grad(/*set_to_none=*/true);
    loss(x, y).backward();
    optimizer_->zero_grad(/*set_to_none=*/true);
  }

 private:
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

using TorchBatches = std::vector<std::pair<at::Tensor, at::Tensor>>;

TorchBatches torch_batches(const std::vector<std::vector<Tensor>>& batches) {
  TorchBatches out;
  for (const std::vector<Tensor>& b : batches) {
    if (b.size() != 2) throw UsageError("--peer torch: a training batch is (input, target)");
    out.emplace_back(view_of(b[0]), view_of(b[1]));
  }
  if (out.empty()) throw UsageError("--peer torch: a training step needs a batch");
  return out;
}

// One eager step a run(). Model: MlpModel or TransformerTraining (step(x, y) returns the loss,
// forward_backward(x, y) leaves no gradient behind).
template <typename Model>
class EagerStep final : public PeerCall {
 public:
  EagerStep(Model model, TorchBatches batches, Device device)
      : model_(std::move(model)), batches_(std::move(batches)), device_(device) {}
  void run() override {
    const auto& [x, y] = batches_[next_++ % batches_.size()];
    last_ = as_experiment_failure([&] { return model_.step(x, y); });
  }
  Tensor result() override {
    if (!last_.defined()) run();
    return to_anatomy(last_, DType::Float32, device_);
  }

 private:
  Model model_;
  TorchBatches batches_;
  Device device_;
  size_t next_ = 0;
  at::Tensor last_;
};

#ifdef ANATOMY_PEER_CUDA
// The whole step captured once into a torch CUDAGraph on a side stream (torch's whole-network
// capture): the forward and backward warmed up there first, then one eager step on batches[0]
// (which makes SGD's momentum buffers, so that the capture finds them), then the capture of
// zero_grad, the loss, backward and the step over static inputs. A run() copies the next batch
// into the static inputs and replays.
template <typename Model>
class GraphedStep final : public PeerCall {
 public:
  GraphedStep(Model model, TorchBatches batches, Device device)
      : model_(std::move(model)), batches_(std::move(batches)), device_(device) {
    static_x_ = batches_[0].first.clone();
    static_y_ = batches_[0].second.clone();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, static_x_.device().index());
    c10::cuda::getCurrentCUDAStream(static_x_.device().index()).synchronize();
    {
      const c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < 3; ++i) model_.forward_backward(static_x_, static_y_);
      (void)model_.step(static_x_, static_y_);  // the optimizer's state, made before the capture
      side.synchronize();
      graph_.capture_begin();
      static_loss_ = model_.step(static_x_, static_y_);
      graph_.capture_end();
    }
    side.synchronize();
  }
  void run() override {
    const auto& [x, y] = batches_[next_++ % batches_.size()];
    as_experiment_failure([&] {
      static_x_.copy_(x);
      static_y_.copy_(y);
      graph_.replay();
    });
    ran_ = true;
  }
  Tensor result() override {
    if (!ran_) run();
    return to_anatomy(static_loss_, DType::Float32, device_);
  }

 private:
  Model model_;
  TorchBatches batches_;
  Device device_;
  size_t next_ = 1;  // batches[0] was the eager step's
  bool ran_ = false;
  at::Tensor static_x_, static_y_, static_loss_;
  at::cuda::CUDAGraph graph_;
};
#endif

// testing/transformer_step.h's model in ATen's operators, on torch's own leaves cloned from the
// engine's parameters: wte, wpe, per layer (ln1 weight and bias, qkv, proj, ln2, fc1, fc2: weight
// then bias), the final layer norm's weight and bias. Without dropout.
class TransformerModel {
 public:
  TransformerModel(const std::vector<Tensor>& params, int64_t heads) : heads_(heads) {
    if (params.size() < 4 || (params.size() - 4) % kPerLayer != 0 || heads < 1) {
      throw UsageError(fmt::format("--peer torch: {} tensors are not a transformer's parameters", params.size()));
    }
    for (const Tensor& p : params) params_.push_back(view_of(p).detach().clone().requires_grad_(true));
    hidden_ = params_[0].size(1);
    if (hidden_ % heads_ != 0) throw UsageError("--peer torch: the transformer's width is not a multiple of its heads");
  }
  at::Tensor loss(const at::Tensor& tokens, const at::Tensor& targets) const {
    const int64_t T = tokens.size(1);
    const at::Tensor positions = at::arange(T, tokens.options());
    at::Tensor x = at::embedding(params_[0], tokens) + at::embedding(params_[1], positions);
    const size_t layers = (params_.size() - 4) / kPerLayer;
    for (size_t l = 0; l < layers; ++l) x = block(&params_[2 + l * kPerLayer], x);
    x = at::layer_norm(x, {hidden_}, params_[params_.size() - 2], params_.back());
    const at::Tensor log_probs = at::log_softmax(at::linear(x, params_[0]), -1, at::kFloat);
    return at::gather(log_probs, -1, targets.unsqueeze(-1)).mean().neg();
  }
  const std::vector<at::Tensor>& parameters() const { return params_; }

 private:
  static constexpr size_t kPerLayer = 12;
  at::Tensor block(const at::Tensor* p, const at::Tensor& x) const {
    const int64_t B = x.size(0), T = x.size(1), H = hidden_, hd = H / heads_;
    const at::Tensor qkv = at::linear(at::layer_norm(x, {H}, p[0], p[1]), p[2], p[3]);
    std::vector<at::Tensor> parts = qkv.chunk(3, -1);
    for (at::Tensor& t : parts) t = t.view({B, T, heads_, hd}).transpose(1, 2);
    const at::Tensor ctx = at::scaled_dot_product_attention(parts[0], parts[1], parts[2], {}, 0.0, /*is_causal=*/true)
                               .transpose(1, 2)
                               .reshape({B, T, H});
    const at::Tensor x_mid = x + at::linear(ctx, p[4], p[5]);
    const at::Tensor h = at::gelu(at::linear(at::layer_norm(x_mid, {H}, p[6], p[7]), p[8], p[9]), "tanh");
    return x_mid + at::linear(h, p[10], p[11]);
  }
  std::vector<at::Tensor> params_;
  int64_t heads_, hidden_ = 0;
};

// c09's transformer step in torch's terms: TransformerModel trained with AdamW as torch's fused,
// capturable kernel (_fused_adamw_, torch.optim.AdamW(fused=True): its step counts are fp32
// tensors on the device, so each replay of a captured step advances them, as the engine's
// capturable AdamW does), the state made here, before any capture.
class TransformerTraining {
 public:
  TransformerTraining(const std::vector<Tensor>& params, int64_t heads, const optim::AdamWOptions& o)
      : model_(std::make_shared<TransformerModel>(params, heads)), options_(o) {
    if (o.amsgrad) throw UsageError("--peer torch: the transformer step's AdamW has no amsgrad");
    for (const at::Tensor& p : model_->parameters()) {
      exp_avg_.push_back(at::zeros_like(p));
      exp_avg_sq_.push_back(at::zeros_like(p));
      steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    }
  }
  at::Tensor step(const at::Tensor& tokens, const at::Tensor& targets) {
    zero_grad();
    at::Tensor l = model_->loss(tokens, targets);
    l.backward();
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : model_->parameters()) grads.push_back(p.grad());
    {
      const at::NoGradGuard no_grad;
      at::_foreach_add_(steps_, 1);  // torch.optim counts the step before the fused kernel reads it
      at::_fused_adamw_(model_->parameters(), grads, exp_avg_, exp_avg_sq_, /*max_exp_avg_sqs=*/{}, steps_, options_.lr,
                        options_.beta1, options_.beta2, options_.weight_decay, options_.eps,
                        /*amsgrad=*/false, /*maximize=*/false);
    }
    return l.detach();
  }
  void forward_backward(const at::Tensor& tokens, const at::Tensor& targets) {
    zero_grad();
    model_->loss(tokens, targets).backward();
    zero_grad();
  }

 private:
  void zero_grad() {
    for (const at::Tensor& p : model_->parameters()) p.mutable_grad() = at::Tensor();
  }
  std::shared_ptr<TransformerModel> model_;
  optim::AdamWOptions options_;
  std::vector<at::Tensor> exp_avg_, exp_avg_sq_, steps_;
};

// An eager or graphed step of `model` over `batches`.
template <typename Model>
std::unique_ptr<PeerCall> training_step(Model model, const std::vector<std::vector<Tensor>>& batches, Device device,
                                        bool graphed) {
  if (!graphed) return std::make_unique<EagerStep<Model>>(std::move(model), torch_batches(batches), device);
#ifdef ANATOMY_PEER_CUDA
  return as_experiment_failure([&]() -> std::unique_ptr<PeerCall> {
    return std::make_unique<GraphedStep<Model>>(std::move(model), torch_batches(batches), device);
  });
#else
  throw UsageError("--peer torch: this libtorch was built without CUDA, so without CUDA graphs");
#endif
}

// CPU events nest on their thread (an operator's interval holds those of the operators it
// calls): each event's self time is its duration less its direct children's.
std::vector<PeerOperator> by_name(const std::vector<torch::autograd::profiler::KinetoEvent>& events) {
  struct Span {
    uint64_t start, end, thread;
    const std::string* name;
  };
  std::vector<std::string> names;
  names.reserve(events.size());
  std::vector<Span> spans;
  for (const auto& e : events) {
    if (e.deviceType() != c10::DeviceType::CPU || e.isAsync()) continue;
    names.push_back(e.name());
    spans.push_back({e.startNs(), e.endNs(), e.startThreadId(), nullptr});
  }
  for (size_t i = 0; i < spans.size(); ++i) spans[i].name = &names[i];
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::map<std::string, PeerOperator> ops;
  std::vector<std::pair<const Span*, double>> open;  // the enclosing spans and their children's time
  auto close = [&] {
    const auto [span, children] = open.back();
    open.pop_back();
    PeerOperator& op = ops[*span->name];
    const double total = static_cast<double>(span->end - span->start) * 1e-3;
    op.name = *span->name;
    op.calls += 1;
    op.cpu_total_us += total;
    op.cpu_self_us += total - children;
    if (!open.empty()) open.back().second += total;
  };
  for (const Span& s : spans) {
    while (!open.empty() && (open.back().first->thread != s.thread || open.back().first->end <= s.start)) close();
    open.emplace_back(&s, 0.0);
  }
  while (!open.empty()) close();
  std::vector<PeerOperator> out;
  for (auto& [name, op] : ops) out.push_back(std::move(op));
  std::sort(out.begin(), out.end(),
            [](const PeerOperator& a, const PeerOperator& b) { return a.cpu_total_us > b.cpu_total_us; });
  return out;
}

}  // namespace

std::unique_ptr<PeerCall> mlp_training_step(const std::vector<Tensor>& params,
                                            const std::vector<std::vector<Tensor>>& batches, double lr, double momentum,
                                            bool graphed) {
  if (params.empty() || params.size() % 2 != 0) {
    throw UsageError("--peer torch: the MLP's parameters are (weight, bias) pairs");
  }
  return training_step(MlpModel(params, lr, momentum), batches, params[0].device(), graphed);
}

std::unique_ptr<PeerCall> transformer_training_step(const std::vector<Tensor>& params, int64_t heads,
                                                    const std::vector<std::vector<Tensor>>& batches,
                                                    const optim::AdamWOptions& adamw, bool graphed) {
  if (params.empty()) throw UsageError("--peer torch: the transformer step needs its parameters");
  return training_step(TransformerTraining(params, heads, adamw), batches, params[0].device(), graphed);
}

std::unique_ptr<PeerCall> transformer_loss_backward(const std::vector<Tensor>& params, int64_t heads,
                                                    const Tensor& tokens, const Tensor& targets) {
  const auto model = std::make_shared<TransformerModel>(params, heads);
  return make_call(
      [model, t = view_of(tokens), y = view_of(targets)] {
        at::Tensor loss = model->loss(t, y);
        loss.backward();
        return loss.detach();
      },
      DType::Float32, tokens.device());
}

std::vector<PeerOperator> profile(PeerCall& call, Device device, double& device_us) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  std::set<ActivityType> activities = {ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  std::unique_ptr<prof::ProfilerResult> result;
  try {
    call.run();
    if (device.is_cuda()) cuda::synchronize(device.index());
  } catch (...) {
    (void)prof::disableProfiler();
    throw;
  }
  result = prof::disableProfiler();
  device_us = 0;
  for (const auto& e : result->events()) {
    if (e.deviceType() == c10::DeviceType::CUDA) device_us += static_cast<double>(e.durationNs()) * 1e-3;
  }
  return by_name(result->events());
}

}  // namespace anatomy::tools::torch_peer

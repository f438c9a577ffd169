// Activation checkpointing (see checkpoint.h): CheckpointBackward and checkpoint().
#include "anatomy/autograd/checkpoint.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/anomaly_mode.h"
#include "anatomy/autograd/autograd.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/engine.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/core/generator.h"

namespace anatomy::autograd {
namespace {

// The (seed, offset) of every device type's default generator: what a forward's random
// operators started from (dropout on the CPU or on CUDA).
using GeneratorStates = std::array<std::pair<uint64_t, uint64_t>, kNumDeviceTypes>;

GeneratorStates capture_generators() {
  GeneratorStates states;
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    const Generator& gen = default_generator(static_cast<DeviceType>(t));
    states[t] = {gen.seed(), gen.offset()};
  }
  return states;
}

void restore_generators(const GeneratorStates& states) {
  for (int t = 0; t < kNumDeviceTypes; ++t) {
    Generator& gen = default_generator(static_cast<DeviceType>(t));
    gen.manual_seed(states[t].first);
    gen.set_offset(states[t].second);
  }
}

// Puts every default generator where the forward found it for a scope and back where it was
// after, so the recomputation draws the forward's random numbers and the caller's streams do not
// move.
class GeneratorRewind {
 public:
  explicit GeneratorRewind(const GeneratorStates& forward) : previous_(capture_generators()) {
    restore_generators(forward);
  }
  GeneratorRewind(const GeneratorRewind&) = delete;
  GeneratorRewind& operator=(const GeneratorRewind&) = delete;
  ~GeneratorRewind() { restore_generators(previous_); }

 private:
  GeneratorStates previous_;
};

class CheckpointBackward final : public Node {
 public:
  CheckpointBackward(CheckpointFn fn, std::vector<Edge> edges, std::vector<SavedTensor> inputs,
                     const GeneratorStates& generators)
      : Node(std::move(edges)), fn_(std::move(fn)), inputs_(std::move(inputs)), generators_(generators) {}

  std::string name() const override { return "CheckpointBackward"; }

  variable_list apply(variable_list&& grads) override {
    // The engine runs formulas in grad mode exactly when it builds a graph (create_graph).
    ANATOMY_CHECK(!GradMode::is_enabled(), NotImplementedError,
                  "CheckpointBackward: backward with create_graph=true through a checkpointed call is not supported: "
                  "the recomputation starts from detached inputs, so a second derivative would not reach them; call "
                  "the function without checkpoint for higher-order gradients");
    ANATOMY_CHECK(
        !engine_captures_inputs(), NotImplementedError,
        "CheckpointBackward: autograd::grad() through a checkpointed call is not supported (the recomputation "
        "accumulates into .grad, as PyTorch's reentrant checkpoint); use backward()");
    std::vector<Tensor> detached(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor t = inputs_[i].unpack(this);
      if (!t.defined()) continue;
      detached[i] = detach(t);
      if (next_edges_[i].is_valid()) detached[i].requires_grad_(true);
    }
    std::vector<Tensor> outs;
    {
      GeneratorRewind rewind(generators_);
      EnableGradGuard grad_on;
      outs = fn_(detached);
    }
    ANATOMY_CHECK(outs.size() == outputs().size(), ValueError,
                  "CheckpointBackward: the recomputation returned {} tensors, the forward {}", outs.size(),
                  outputs().size());
    std::vector<Tensor> roots;
    variable_list seeds;
    for (size_t j = 0; j < outs.size(); ++j) {
      if (j < grads.size() && grads[j].defined() && outs[j].defined() && outs[j].requires_grad()) {
        roots.push_back(outs[j]);
        seeds.push_back(std::move(grads[j]));
      }
    }
    // Gradients reach the detached inputs' .grad, and the .grad of leaves fn captured.
    if (!roots.empty()) backward(roots, seeds);
    variable_list result(inputs_.size());
    for (size_t i = 0; i < detached.size(); ++i) {
      if (detached[i].defined() && next_edges_[i].is_valid()) result[i] = detached[i].grad();
    }
    return result;
  }

  void release_saved() override {
    for (SavedTensor& s : inputs_) s.release();
  }

  std::vector<std::string> saved_descriptions() const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < inputs_.size(); ++i) out.push_back(fmt::format("input {}: {}", i, inputs_[i].describe()));
    return out;
  }

 private:
  CheckpointFn fn_;
  std::vector<SavedTensor> inputs_;
  GeneratorStates generators_;
};

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  ANATOMY_CHECK(static_cast<bool>(fn), ValueError, "checkpoint: the function is empty");
  bool any_requires_grad = false;
  for (const Tensor& t : inputs) any_requires_grad = any_requires_grad || (t.defined() && t.requires_grad());
  if (!GradMode::is_enabled() || !any_requires_grad) return fn(inputs);

  const GeneratorStates generators = capture_generators();
  std::vector<Tensor> outs;
  {
    NoGradGuard no_grad;
    outs = fn(inputs);
  }
  std::vector<Edge> edges;
  std::vector<SavedTensor> saved;
  for (const Tensor& t : inputs) {
    if (t.defined()) check_saveable(t, "checkpoint");
    edges.push_back(gradient_edge(t));
    saved.emplace_back(t, /*is_output=*/false);
  }
  auto node = IntrusivePtr<CheckpointBackward>::make(fn, std::move(edges), std::move(saved), generators);
  if (AnomalyMode::is_enabled()) node->set_forward_op("checkpoint");
  for (size_t j = 0; j < outs.size(); ++j) {
    ANATOMY_CHECK(outs[j].defined(), ValueError, "checkpoint: the function returned an undefined tensor at {}", j);
    // A fresh alias: an output may be an input itself (or a view of one), whose history must
    // not change.
    outs[j] = detach(outs[j]);
    node->add_output(outs[j]);
    if (!is_floating(outs[j].dtype())) continue;
    AutogradMeta& m = meta_of(outs[j]);
    m.grad_fn_ = IntrusivePtr<Node>(node.get());
    m.output_nr_ = static_cast<uint32_t>(j);
  }
  return outs;
}

}  // namespace anatomy::autograd

// One training step in two forms, for comparing CUDA graph replays with eager execution
// (gpu-anatomy c09 graphs, tests/gpu/test_cuda_graphed_transformer.cpp): eager, as a training
// loop is written, and graphed, as docs/cuda-graphs.md ("Graphed forward and backward") writes
// it: the loss's forward and backward as make_graphed's two graphs, and the optimizer's step
// captured after one eager step has made its state.
//
//   GraphedStep g(make_step(), batches[0]);  // make_graphed (warm-up, two captures)
//   Tensor first = g.first_step(batches[0]);  // graphed forward and backward, eager optimizer step
//   g.capture_optimizer();                    // the optimizer step and the zeroing of .grad, one graph
//   for (...) loss = g.step(batch);           // three replays and the gradients' accumulation
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/graphed/make_graphed.h"

namespace anatomy::testing {

// What a training step is made of: the loss of a batch (its tensors) under the params, and the
// optimizer that updates the params.
struct TrainingStep {
  std::vector<Tensor> params;
  std::function<Tensor(const std::vector<Tensor>&)> loss;
  std::unique_ptr<optim::Optimizer> optimizer;
};

// zero_grad (set_to_none), the loss, backward, the optimizer's step; returns the loss, detached.
Tensor eager_step(TrainingStep& s, const std::vector<Tensor>& batch);

// The step graphed. The params' .grad keep their memory from the first step on (a first-order
// backward adds into them in place), which is what the captured optimizer step reads.
class GraphedStep {
 public:
  // make_graphed over s.loss and s.params, with static inputs of `sample`'s shapes (copies of it).
  // ValueError from make_graphed for tensors that are not on one CUDA device.
  GraphedStep(TrainingStep s, const std::vector<Tensor>& sample);

  // The first step: graphed forward and backward, then an eager optimizer step, which makes the
  // optimizer's state (a capture cannot), then the gradients zeroed in place. Returns the loss.
  Tensor first_step(const std::vector<Tensor>& batch);
  // Captures the optimizer's step followed by the zeroing of every .grad, as one graph.
  // ValueError before first_step.
  void capture_optimizer();
  // One step: the batch copied into the static inputs, the forward graph replayed, backward (the
  // backward graph replayed, its gradients added into .grad), the optimizer graph replayed.
  // Returns the static loss, which the next step overwrites. ValueError before capture_optimizer.
  Tensor step(const std::vector<Tensor>& batch);

  const TrainingStep& training_step() const { return s_; }

 private:
  TrainingStep s_;
  cuda::GraphedCallable graphed_;
  cuda::Graph optimizer_graph_;
  bool first_done_ = false;
};

}  // namespace anatomy::testing

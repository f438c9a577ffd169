// One training step in three forms, for comparing CUDA graph replays with eager execution
// (gpu-anatomy c09 graphs, tests/gpu/test_cuda_graphed_transformer.cpp,
// tests/gpu/test_cuda_captured_step.cpp): eager, as a training loop is written; graphed, as
// docs/cuda-graphs.md ("Graphed forward and backward") writes it: the loss's forward and backward
// as make_graphed's two graphs, and the optimizer's step captured after one eager step has made
// its state; and captured whole (docs/cuda-graphs.md, "A whole step in one graph"): the loss,
// backward and the optimizer's step as one graph, as torch's whole-network capture.
//
//   GraphedStep g(make_step(), batches[0]);  // make_graphed (warm-up, two captures)
//   Tensor first = g.first_step(batches[0]);  // graphed forward and backward, eager optimizer step
//   g.capture_optimizer();                    // the optimizer step and the zeroing of .grad, one graph
//   for (...) loss = g.step(batch);           // three replays and the gradients' accumulation
//
//   CapturedStep c(make_step(), batches[0]);  // warm-up, one eager step, one capture
//   Tensor first = c.first_loss();            // the eager step's loss
//   for (...) loss = c.step(batch);           // the batch copied in, one replay
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

// The step captured whole into one graph: the loss, backward (which writes each .grad, memory of
// the graph's pool) and the optimizer's step, replayed by one launch with nothing left to the host
// but copying the batch in. The constructor, on the capture stream, runs the loss and backward
// kWarmupSteps times without an update (first calls of libraries and kernels, outside the
// capture), then one eager step on the sample (it makes the optimizer's state, which a capture
// cannot), sets every .grad to none and captures the step over static inputs (copies of the
// sample). From then on the params' .grad are the graph's, rewritten by every replay; nothing
// else may set, zero or accumulate into them.
class CapturedStep {
 public:
  static constexpr int kWarmupSteps = 3;
  // ValueError for an empty sample or no params, or tensors that are not all on one CUDA device.
  CapturedStep(TrainingStep s, const std::vector<Tensor>& sample);

  // The eager step's loss on the sample: the first step of training.
  const Tensor& first_loss() const { return first_loss_; }
  // One step: the batch copied into the static inputs, the graph replayed. Returns the static
  // loss, which the next step overwrites. ValueError for a batch of other shapes or dtypes.
  Tensor step(const std::vector<Tensor>& batch);

  const TrainingStep& training_step() const { return s_; }
  const cuda::Graph& graph() const { return graph_; }

 private:
  TrainingStep s_;
  std::vector<Tensor> static_inputs_;
  Tensor first_loss_, static_loss_;
  cuda::Graph graph_;
};

}  // namespace anatomy::testing

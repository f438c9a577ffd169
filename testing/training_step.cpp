// The eager and the graphed training step (see training_step.h).
#include "anatomy/testing/training_step.h"

namespace anatomy::testing {
namespace {

std::vector<Tensor> copies(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(t.clone());
  return out;
}

}  // namespace

Tensor eager_step(TrainingStep& s, const std::vector<Tensor>& batch) {
  s.optimizer->zero_grad();
  Tensor loss = s.loss(batch);
  loss.backward();
  s.optimizer->step();
  return loss.detach();
}

GraphedStep::GraphedStep(TrainingStep s, const std::vector<Tensor>& sample) : s_(std::move(s)) {
  // The sample's copies become the static inputs, so the caller's batch stays the caller's.
  graphed_ =
      cuda::make_graphed([loss = s_.loss](const std::vector<Tensor>& in) { return std::vector<Tensor>{loss(in)}; },
                         copies(sample), s_.params);
}

Tensor GraphedStep::first_step(const std::vector<Tensor>& batch) {
  Tensor loss = graphed_(batch)[0];
  loss.backward();
  s_.optimizer->step();
  s_.optimizer->zero_grad(/*set_to_none=*/false);  // in place: .grad keeps its memory
  first_done_ = true;
  return loss;
}

void GraphedStep::capture_optimizer() {
  ANATOMY_CHECK(first_done_, ValueError,
                "GraphedStep::capture_optimizer: first_step comes first (it makes the optimizer's state and .grad)");
  cuda::GraphCapture capture(optimizer_graph_);
  s_.optimizer->step();
  s_.optimizer->zero_grad(/*set_to_none=*/false);  // in place: .grad keeps its memory
}

Tensor GraphedStep::step(const std::vector<Tensor>& batch) {
  ANATOMY_CHECK(optimizer_graph_.has_graph(), ValueError, "GraphedStep::step: capture_optimizer comes first");
  Tensor loss = graphed_(batch)[0];
  loss.backward();
  optimizer_graph_.replay();
  return loss;
}

}  // namespace anatomy::testing

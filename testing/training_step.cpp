// The eager, the graphed and the captured training step (see training_step.h).
#include "anatomy/testing/training_step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

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

CapturedStep::CapturedStep(TrainingStep s, const std::vector<Tensor>& sample) : s_(std::move(s)) {
  ANATOMY_CHECK(!sample.empty() && !s_.params.empty(), ValueError,
                "CapturedStep: needs a sample batch and params (got {} tensors and {} params)", sample.size(),
                s_.params.size());
  const Device device = s_.params[0].device();
  const std::vector<Tensor>& params = s_.params;
  for (const std::vector<Tensor>* list : {&sample, &params}) {
    for (const Tensor& t : *list) {
      ANATOMY_CHECK(t.defined() && t.is_cuda() && t.device() == device, ValueError,
                    "CapturedStep: every tensor must be on one CUDA device ({}), got one on {}", device.str(),
                    t.defined() ? t.device().str() : "none (undefined)");
    }
  }
  static_inputs_ = copies(sample);
  const cuda::DeviceGuard device_guard(device);
  const cuda::Stream capture_stream = cuda::graph_capture_stream();
  capture_stream.wait_stream(cuda::current_stream(device.index()));  // the sample's producers come first
  {
    const cuda::StreamGuard guard(capture_stream);
    for (int i = 0; i < kWarmupSteps; ++i) {
      s_.loss(static_inputs_).backward();
      s_.optimizer->zero_grad();
    }
    first_loss_ = eager_step(s_, static_inputs_);
    // Set to none: the captured backward makes each .grad, in the graph's pool.
    s_.optimizer->zero_grad(/*set_to_none=*/true);
    cuda::GraphCapture capture(graph_, capture_stream);
    Tensor loss = s_.loss(static_inputs_);
    loss.backward();
    s_.optimizer->step();
    static_loss_ = loss.detach();
  }
  cuda::current_stream(device.index()).wait_stream(capture_stream);
}

Tensor CapturedStep::step(const std::vector<Tensor>& batch) {
  ANATOMY_CHECK(batch.size() == static_inputs_.size(), ValueError,
                "CapturedStep::step: the step takes {} tensors, got {}", static_inputs_.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const Tensor& want = static_inputs_[i];
    const Tensor& t = batch[i];
    ANATOMY_CHECK(t.defined() && t.sizes() == want.sizes() && t.dtype() == want.dtype(), ValueError,
                  "CapturedStep::step: tensor {} must match the sample's ({} [{}]), got {}", i, name(want.dtype()),
                  fmt::join(want.sizes(), ", "),
                  t.defined() ? fmt::format("{} [{}]", name(t.dtype()), fmt::join(t.sizes(), ", "))
                              : std::string("an undefined tensor"));
  }
  for (size_t i = 0; i < batch.size(); ++i) static_inputs_[i].copy_(batch[i]);
  graph_.replay();
  return static_loss_;
}

}  // namespace anatomy::testing

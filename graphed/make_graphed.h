// make_graphed: a function's forward and backward captured as two CUDA graphs, as PyTorch's
// torch.cuda.make_graphed_callables (docs/cuda-graphs.md, "Graphed forward and backward").
//
//   std::vector<Tensor> params = {w1, b1, w2, b2};
//   auto step = [&](const std::vector<Tensor>& in) {      // in = {x, target}
//     Tensor h = (in[0].matmul(w1) + b1).relu();
//     return std::vector<Tensor>{mse_loss(h.matmul(w2) + b2, in[1])};
//   };
//   cuda::GraphedCallable graphed = cuda::make_graphed(step, {x, target}, params);
//   for (...) {
//     Tensor loss = graphed({next_x, next_target})[0];  // replays the forward graph
//     loss.backward();                                  // replays the backward graph; params' .grad accumulate
//   }
//
// make_graphed runs `fn` a few times on the capture stream (warm-up: cuBLAS workspaces, caches),
// then captures fn(sample_inputs) as the forward graph and the gradients of its outputs with
// respect to the inputs that require grad and `params` as the backward graph, in one private
// pool. The sample inputs become the static inputs: each call copies its arguments into them
// (nothing when they are the same tensors), replays the forward graph and returns the static
// outputs (detached aliases: the next call overwrites them). Their grad_fn is one node whose
// backward copies the incoming gradients into static gradient buffers, replays the backward graph
// and returns the static gradients, which autograd then accumulates into params' .grad as usual.
//
// `fn` must be capturable (no item(), no printing: docs/cuda-graphs.md) and do the same work on
// every call (no control flow on tensor values), and its outputs must not depend on anything but
// the inputs and params (a captured constant stays the constant of the capture).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

struct GraphedOptions {
  int warmup_iters = 3;  // eager runs of forward and backward on the capture stream first
  GraphPool pool;        // none: a new pool for the two graphs
  CaptureMode mode = CaptureMode::Global;
};

struct GraphedState;

// What make_graphed returns: call it like `fn`.
class GraphedCallable {
 public:
  // ValueError (naming make_graphed) when `inputs` do not match the sample inputs in number,
  // shape, dtype and device.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;

  // The graphs, for inspection (their pool is shared).
  const Graph& forward_graph() const;
  const Graph& backward_graph() const;

 private:
  friend GraphedCallable make_graphed(std::function<std::vector<Tensor>(const std::vector<Tensor>&)>,
                                      std::vector<Tensor>, std::vector<Tensor>, GraphedOptions);
  std::shared_ptr<GraphedState> state_;
};

// `sample_inputs` and `params` are CUDA tensors of one device; params are leaves that require
// grad. ValueError for anything else, DeviceError for what the capture refuses.
GraphedCallable make_graphed(std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn,
                             std::vector<Tensor> sample_inputs, std::vector<Tensor> params = {},
                             GraphedOptions options = {});

}  // namespace anatomy::cuda

// Activation checkpointing: trade compute for memory. `checkpoint(fn, inputs)` runs `fn` without
// recording, so none of its intermediate results is kept for backward; only the inputs are
// saved. Backward runs `fn` again, with grad enabled, on detached copies of the inputs (with every
// device's default generator put back where it was, so dropout draws the same mask on the CPU
// and on CUDA) and backpropagates through that recomputation: the gradients are those of the
// un-checkpointed call.
//
//   Tensor h = x;
//   for (auto& layer : layers) h = autograd::checkpoint(layer, {h})[0];
//
// As PyTorch's reentrant checkpoint: tensors that `fn` captures instead of taking as inputs
// (weights) get their gradient accumulated into .grad by the recomputation's own backward, so
// they should be leaves; if no input requires grad the call records nothing. Backward with
// create_graph and autograd::grad() through a checkpoint are refused (docs/autograd.md).
#pragma once

#include <functional>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy::autograd {

using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The outputs of fn(inputs); floating-point outputs get a CheckpointBackward node as grad_fn
// when grad mode is on and an input requires grad.
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);

}  // namespace anatomy::autograd

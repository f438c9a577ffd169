// The public autograd API: backward over several tensors, grad() that returns gradients
// without touching .grad, and the graph dumps. Tensor's own methods (backward, grad, grad_fn,
// retain_grad, detach, register_hook) are declared in core/tensor.h. docs/autograd.md explains
// the engine with a drawing of one graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anatomy/autograd/anomaly_mode.h"
#include "anatomy/autograd/checkpoint.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/node.h"
#include "anatomy/core/tensor.h"

namespace anatomy::autograd {

// Accumulates d(sum of tensors[i] * grad_tensors[i]) / d(leaf) into every leaf's .grad. A
// missing grad_tensors[i] may be left out for a one-element tensor (it is 1).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              bool retain_graph = false, bool create_graph = false);

// The gradients of `outputs` with respect to `inputs`, returned instead of accumulated; .grad
// is left alone. retain_graph defaults to create_graph. An input that the outputs do not depend
// on is an error unless allow_unused (its gradient is then undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

// The node whose backward the calling thread's engine is running now (the profiler attributes
// the operators it calls to it); nullptr outside a backward.
const Node* current_backward_node();

// The grad_fn tree of `t`: one node per line, indented by depth, with saved tensor shapes and
// the edges' input numbers. A node reached twice is printed once and referred to after.
std::string print_graph(const Tensor& t);
// The same graph as Graphviz source (dot -Tsvg).
std::string to_dot(const Tensor& t);

}  // namespace anatomy::autograd

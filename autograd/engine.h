// The engine: runs the backward graph from some roots, on the calling thread.
//
// Note [Backward engine]
//   1. A GraphRoot node hands the root gradients to the roots' edges.
//   2. A walk from it counts, for every reachable node, how many edges lead into it, and (for
//      autograd::grad) marks the nodes from which a requested input can be reached; the others
//      are not run.
//   3. Nodes run when every gradient for them has arrived, later nodes (higher sequence numbers)
//      first among the ready ones. A node's incoming gradients are summed per input.
//   4. Before a node runs, the hooks of its outputs' tensors run and retained gradients are
//      stored; for autograd::grad, gradients reaching a requested input are captured instead of
//      accumulated into .grad.
//   5. Without retain_graph, each node frees its saved tensors after it ran, so a second
//      backward through it raises an error that says to pass retain_graph.
//   6. A node that recorded a stream runs with it current; gradients crossing streams are
//      ordered, and the caller's streams wait for the backward's (Note [Backward streams]).
// With create_graph, formulas run in grad mode, so the gradients have a graph of their own.
#pragma once

#include <vector>

#include "anatomy/autograd/node.h"

namespace anatomy::autograd {

// Runs backward from `roots` (edges) seeded with `grads`. When `inputs` is non-empty, returns
// the gradient reaching each input edge (undefined where none did) and leaves .grad alone.
variable_list run_backward(const std::vector<Edge>& roots, const variable_list& grads, bool keep_graph,
                           bool create_graph, const std::vector<Edge>& inputs = {});

// True while the innermost run_backward on this thread captures gradients for autograd::grad
// (it was given `inputs`) rather than accumulating into .grad.
bool engine_captures_inputs();

}  // namespace anatomy::autograd

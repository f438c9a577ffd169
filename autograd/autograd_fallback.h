// The autograd fallback: what the autograd keys run for an operator that has no autograd
// kernel, such as a user's operator registered with only a CPU (or CUDA, ...) kernel.
//
// Note [Autograd fallback]
// An operator reaches its autograd key whenever a tensor argument carries one (every tensor
// does). With no kernel of its own there (the Autograd alias, a per-key kernel, a
// CompositeImplicitAutograd one), the key's fallback runs, as PyTorch's autograd fallback in
// its default "warn" mode:
//   - grad mode off, or no tensor argument requiring grad: the call goes on below autograd;
//   - otherwise the operator runs below autograd, and its floating-point outputs get a node
//     named "NotImplemented(ns::op)" as grad_fn, with edges to the inputs' histories; the first
//     such call of each operator warns once. A backward that brings a gradient to the node
//     raises NotImplementedError naming the operator; a result that is never differentiated
//     (evaluation with parameters that require grad) works.
// So a result never silently loses the graph of its inputs. The fallback is boxed: an operator
// that is not differentiable on purpose declares it with a fallthrough at its Autograd key
// (m.impl_fallthrough("op") in an ANATOMY_LIBRARY_IMPL(ns, Autograd, m) block), which skips
// the key at no cost, as the built-ins do (autograd/not_differentiable.cpp).
#pragma once

#include <functional>
#include <string>

namespace anatomy::autograd {

// Where autograd's warnings go, one message per call: stderr ("anatomy: warning: ...") by
// default; an empty function restores that. Process-wide; returns the previous handler.
using WarningHandler = std::function<void(const std::string& message)>;
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace anatomy::autograd

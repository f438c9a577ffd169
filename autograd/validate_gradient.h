// The check every gradient passes before a node uses it (PyTorch's validate_outputs): the
// gradient for a node's input must match the forward output it stands for.
#pragma once

#include <string_view>

#include "anatomy/autograd/node.h"

namespace anatomy::autograd {

// Whether `grad` already matches `want` exactly: the common case, checked before any message is
// built.
inline bool fits(const Tensor& grad, const OutputInfo& want) {
  return grad.sizes() == IntArrayRef(want.sizes) && grad.dtype() == want.dtype && grad.device() == want.device;
}

// `grad` made fit for `want`, or ValueError naming `source` (a node or a hook) and the values:
//   - sizes: equal, or `want`'s sizes broadcast to the gradient's (then summed back to them);
//     any other shape is an error, even one with the same element count;
//   - device: equal; a 0-dim gradient on another device is moved;
//   - dtype: cast to the output's dtype.
// `index` is the gradient's number among `source`'s results, for the message.
Tensor validated_gradient(Tensor grad, const OutputInfo& want, std::string_view source, size_t index);

}  // namespace anatomy::autograd

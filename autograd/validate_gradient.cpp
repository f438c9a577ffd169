// validated_gradient (see validate_gradient.h).
#include "anatomy/autograd/validate_gradient.h"

#include <fmt/format.h>

#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/core/shape_rules.h"

namespace anatomy::autograd {

Tensor validated_gradient(Tensor grad, const OutputInfo& want, std::string_view source, size_t index) {
  const IntArrayRef sizes(want.sizes);
  if (grad.sizes() != sizes) {
    ANATOMY_CHECK(is_expandable_to(sizes, grad.sizes()), ValueError,
                  "{} returned an invalid gradient at index {}: got shape [{}] but expected shape compatible with [{}]",
                  source, index, fmt::join(grad.sizes(), ", "), fmt::join(sizes, ", "));
    grad = sum_to(grad, sizes);
  }
  if (grad.device() != want.device) {
    ANATOMY_CHECK(grad.dim() == 0, ValueError,
                  "{} returned an invalid gradient at index {}: expected device {} but got {}", source, index,
                  want.device.str(), grad.device().str());
    grad = grad.to(want.device);
  }
  if (grad.dtype() != want.dtype) grad = grad.to(want.dtype);
  return grad;
}

}  // namespace anatomy::autograd

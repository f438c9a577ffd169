// Formula helpers (see formula_helpers.h).
#include "anatomy/autograd/formula_helpers.h"

#include <algorithm>

namespace anatomy::autograd {

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  }
  Tensor out = dims.empty() ? grad : grad.sum(dims, /*keepdim=*/true);
  return out.reshape(sizes);
}

Tensor grad_for_input(const BackwardContext& ctx, int arg, const Tensor& grad, int k) {
  Tensor g = sum_to(grad, ctx.input_sizes(arg, k));
  return g.dtype() == ctx.input_dtype(arg, k) ? g : g.to(ctx.input_dtype(arg, k));
}

std::vector<int64_t> reduced_dims(IntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (ndim == 0) {  // dim 0 or -1 of a 0-dim tensor names the tensor itself: nothing to reduce
    for (int64_t d : dims) wrap_dim(d, ndim, "backward");
    return out;
  }
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, "backward"));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Tensor unreduce(const Tensor& grad, IntArrayRef sizes, IntArrayRef dims, bool keepdim) {
  Tensor g = grad;
  if (!keepdim && static_cast<int64_t>(sizes.size()) > 0) {
    for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) g = g.unsqueeze(d);
  }
  return g.expand(sizes);
}

}  // namespace anatomy::autograd

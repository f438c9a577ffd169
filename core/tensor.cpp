// Tensor methods that only read or write metadata (no dispatch).
#include "anatomy/core/tensor.h"

namespace anatomy {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  // A 0-dim tensor accepts dim 0 and -1, as in PyTorch.
  int64_t n = ndim == 0 ? 1 : ndim;
  ANATOMY_CHECK(dim >= -n && dim < n, IndexError,
                "{}: dimension {} out of range for a {}-dim tensor (expected in [{}, {}])", op, dim, ndim, -n, n - 1);
  return dim < 0 ? dim + n : dim;
}

int64_t Tensor::size(int64_t d) const {
  ANATOMY_CHECK(dim() > 0, IndexError, "size: a 0-dim tensor has no dimension {}", d);
  return sizes()[wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  ANATOMY_CHECK(dim() > 0, IndexError, "stride: a 0-dim tensor has no dimension {}", d);
  return strides()[wrap_dim(d, dim(), "stride")];
}

bool Tensor::is_alias_of(const Tensor& o) const {
  return defined() && o.defined() && storage().get() == o.storage().get();
}

bool Tensor::requires_grad() const {
  const AutogradMetaInterface* m = impl()->autograd_meta();
  return m != nullptr && m->requires_grad();
}

Tensor& Tensor::requires_grad_(bool value) {
  ANATOMY_CHECK(!value || is_floating(dtype()), TypeError,
                "requires_grad_: only floating-point tensors can require gradients, got {}", name(dtype()));
  AutogradMetaInterface* m = impl()->autograd_meta();
  if (m == nullptr) {
    if (!value) return *this;
    AutogradMetaFactory factory = autograd_meta_factory();
    ANATOMY_INTERNAL_ASSERT(factory != nullptr, "no autograd module is linked");
    impl()->set_autograd_meta(factory());
    m = impl()->autograd_meta();
  }
  m->set_requires_grad(value);
  return *this;
}

}  // namespace anatomy

// Writing and reading by index along one dim, written over advanced indexing and gather
// (CompositeImplicitAutograd: every backend with index_put_ and gather runs them, and autograd
// differentiates the parts): index_fill, index_copy, index_add, masked_scatter, take_along_dim.
//
// Note [index_* through index_put_]
// self.index_fill_(d, index, v), index_copy_ and index_add_ are self[:, ..., index] = values
// with the index tensor at position d and full slices before it: one advanced index keeps its
// dim in place, so the indexed block has self's shape with dim d replaced by the index's
// length, which is exactly source's shape. index_add_ is the accumulating form (repeated
// indices add up, on CUDA in a fixed order), index_copy_ the plain one (with repeated indices,
// one of the writes wins, as PyTorch leaves unspecified). index_put_ checks every index before it
// writes, so a bad index changes nothing; its errors are re-raised naming the operator called
// (naming_errors, composite_errors.h).
#include <string>
#include <vector>

#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {
namespace {

// The dim (wrapped) and the index as index_put_ takes it, after the checks every index_* op
// shares: an integer vector (or a single integer) on self's device.
int64_t checked_index_dim(const Tensor& self, int64_t dim, const Tensor& index, const char* op) {
  ANATOMY_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, TypeError,
                "{}: the index must be int64 or int32, got {}", op, name(index.dtype()));
  ANATOMY_CHECK(index.dim() <= 1, IndexError, "{}: the index must be a vector or a single integer, got shape {}", op,
                shape_string(index.sizes()));
  ANATOMY_CHECK(index.device() == self.device(), DeviceError, "{}: the index is on {} but self is on {}", op,
                index.device().str(), self.device().str());
  return wrap_dim(dim, self.dim(), op);
}

// self (a 0-dim self as one element of a vector, which dim 0 then indexes), and
// self[(full slices) x d, index] = values through index_put_ (Note [index_* through index_put_]).
void put_along_dim(const Tensor& self, int64_t d, const Tensor& index, const Tensor& values, bool accumulate,
                   const char* op) {
  const Tensor target = self.dim() == 0 ? self.unsqueeze(0) : self;
  std::vector<Tensor> indices(static_cast<size_t>(d + 1));
  indices[static_cast<size_t>(d)] = index.reshape({-1});
  naming_errors(op, [&] { index_put_(target, indices, values, accumulate); });
}

// index_copy_'s and index_add_'s source: self's dtype, and self's shape with dim d's size the
// number of indices (a 0-dim self takes one index and a source of one element).
Tensor checked_source(const Tensor& self, int64_t d, const Tensor& index, const Tensor& source, const char* op) {
  ANATOMY_CHECK(source.dtype() == self.dtype(), TypeError, "{}: self ({}) and source ({}) must have the same dtype", op,
                name(self.dtype()), name(source.dtype()));
  ANATOMY_CHECK(source.device() == self.device(), DeviceError, "{}: source is on {} but self is on {}", op,
                source.device().str(), self.device().str());
  std::vector<int64_t> want(self.sizes().begin(), self.sizes().end());
  if (want.empty()) want.push_back(1);
  want[static_cast<size_t>(d)] = index.numel();
  const Tensor shaped = source.dim() == 0 && self.dim() == 0 ? source.reshape({1}) : source;
  ANATOMY_CHECK(shaped.sizes() == IntArrayRef(want), ValueError,
                "{}: source of shape {} does not fit {} indices along dim {} of self of shape {} (expected {})", op,
                shape_string(source.sizes()), index.numel(), d, shape_string(self.sizes()), shape_string(want));
  return shaped;
}

Tensor index_fill_scalar_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const int64_t d = checked_index_dim(self, dim, index, "index_fill_");
  put_along_dim(self, d, index, scalar_tensor(value, self.options()), false, "index_fill_");
  return self;
}

Tensor index_fill_tensor_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  ANATOMY_CHECK(value.dim() == 0, ValueError, "index_fill_: the value must be a 0-dim tensor, got shape {}",
                shape_string(value.sizes()));
  const int64_t d = checked_index_dim(self, dim, index, "index_fill_");
  put_along_dim(self, d, index, value.to(self.dtype()).to(self.device()), false, "index_fill_");
  return self;
}

Tensor index_fill_scalar(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_fill_scalar_(self.clone(), dim, index, value);
}

Tensor index_fill_tensor(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  return index_fill_tensor_(self.clone(), dim, index, value);
}

Tensor index_copy_composite_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = checked_index_dim(self, dim, index, "index_copy_");
  put_along_dim(self, d, index, checked_source(self, d, index, source, "index_copy_"), false, "index_copy_");
  return self;
}

Tensor index_copy_composite(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return index_copy_composite_(self.clone(), dim, index, source);
}

Tensor index_add_composite_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                            const Scalar& alpha) {
  const int64_t d = checked_index_dim(self, dim, index, "index_add_");
  const Tensor shaped = checked_source(self, d, index, source, "index_add_");
  ANATOMY_CHECK(is_floating(self.dtype()) || !alpha.is_floating_point(), TypeError,
                "index_add_: a floating alpha ({}) for a {} self", alpha.to<double>(), name(self.dtype()));
  const bool unit = alpha.is_floating_point() ? alpha.to<double>() == 1.0 : alpha.to<int64_t>() == 1;
  put_along_dim(self, d, index, unit ? shaped : mul(shaped, alpha).to(self.dtype()), true, "index_add_");
  return self;
}

Tensor index_add_composite(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                           const Scalar& alpha) {
  return index_add_composite_(self.clone(), dim, index, source, alpha);
}

// self's elements where mask (broadcast to self's shape) is true take source's first values in
// row-major order. The count of true elements is read on the host: on CUDA that waits for the
// device, as masked_select does. Meta has no values: the checks run and self is returned.
Tensor masked_scatter_composite_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  ANATOMY_CHECK(mask.dtype() == DType::Bool, TypeError, "masked_scatter_: the mask must be bool, got {}",
                name(mask.dtype()));
  ANATOMY_CHECK(source.dtype() == self.dtype(), TypeError,
                "masked_scatter_: self ({}) and source ({}) must have the same dtype", name(self.dtype()),
                name(source.dtype()));
  ANATOMY_CHECK(mask.device() == self.device() && source.device() == self.device(), DeviceError,
                "masked_scatter_: self is on {}, the mask on {} and source on {}", self.device().str(),
                mask.device().str(), source.device().str());
  ANATOMY_CHECK(is_expandable_to(mask.sizes(), self.sizes()), ValueError,
                "masked_scatter_: a mask of shape {} does not broadcast to self's shape {}", shape_string(mask.sizes()),
                shape_string(self.sizes()));
  if (self.device().type() == DeviceType::Meta) return self;
  // index_put_ takes no 0-dim mask: a 0-dim self is one element of a vector.
  const Tensor target = self.dim() == 0 ? self.unsqueeze(0) : self;
  const Tensor full_mask = mask.expand(self.sizes()).reshape(target.sizes());
  const int64_t count = full_mask.sum().item<int64_t>();
  ANATOMY_CHECK(count <= source.numel(), ValueError,
                "masked_scatter_: the mask selects {} elements but source has only {}", count, source.numel());
  naming_errors("masked_scatter_", [&] { index_put_(target, {full_mask}, source.reshape({-1}).narrow(0, 0, count)); });
  return self;
}

Tensor masked_scatter_composite(const Tensor& self, const Tensor& mask, const Tensor& source) {
  // The functional form broadcasts self with the mask, as PyTorch's does.
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter");
  return masked_scatter_composite_(self.expand(shape).clone(), mask, source);
}

// gather with self and indices broadcast against each other in every dim but `dim`; without a
// dim, over the flattened self. gather's index errors are re-raised naming take_along_dim.
Tensor take_along_dim_composite(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  ANATOMY_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32, TypeError,
                "take_along_dim: the indices must be int64 or int32, got {}", name(indices.dtype()));
  Tensor source = self.reshape({-1});
  Tensor picked = indices.reshape({-1});
  int64_t d = 0;
  if (dim) {
    ANATOMY_CHECK(self.dim() == indices.dim(), ValueError,
                  "take_along_dim: self ({} dims) and indices ({} dims) must have the same number of dims", self.dim(),
                  indices.dim());
    d = wrap_dim(*dim, self.dim(), "take_along_dim");
    source = self;
    picked = indices;
    if (self.dim() > 0) {
      std::vector<int64_t> self_shape(self.sizes().begin(), self.sizes().end());
      std::vector<int64_t> index_shape(indices.sizes().begin(), indices.sizes().end());
      self_shape[static_cast<size_t>(d)] = 1;
      index_shape[static_cast<size_t>(d)] = 1;
      const DimVector shape = broadcast_shapes(self_shape, index_shape, "take_along_dim");
      self_shape.assign(shape.begin(), shape.end());
      index_shape.assign(shape.begin(), shape.end());
      self_shape[static_cast<size_t>(d)] = self.size(d);
      index_shape[static_cast<size_t>(d)] = indices.size(d);
      source = self.expand(self_shape);
      picked = indices.expand(index_shape);
    }
  }
  return naming_errors("take_along_dim", [&] { return gather(source, d, picked); });
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
        ANATOMY_KERNEL(index_fill_scalar_));
  m.def("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
        ANATOMY_KERNEL(index_fill_scalar));
  m.def("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)",
        ANATOMY_KERNEL(index_fill_tensor_));
  m.def("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
        ANATOMY_KERNEL(index_fill_tensor));
  m.def("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
        ANATOMY_KERNEL(index_copy_composite_));
  m.def("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
        ANATOMY_KERNEL(index_copy_composite));
  m.def("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)",
        ANATOMY_KERNEL(index_add_composite_));
  m.def("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
        ANATOMY_KERNEL(index_add_composite));
  m.def("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
        ANATOMY_KERNEL(masked_scatter_composite_));
  m.def("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", ANATOMY_KERNEL(masked_scatter_composite));
  m.def("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
        ANATOMY_KERNEL(take_along_dim_composite));
}

// ---- the C++ API ----
using FillSig = Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&);
using FillTensorSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&);
using AddSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, const Scalar&);
using MaskSig = Tensor(const Tensor&, const Tensor&, const Tensor&);

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  ANATOMY_OP(op, "aten::index_fill.int_Scalar", FillSig);
  return op.call(self, dim, index, value);
}
Tensor index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  ANATOMY_OP(op, "aten::index_fill_.int_Scalar", FillSig);
  return op.call(self, dim, index, value);
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  ANATOMY_OP(op, "aten::index_fill.int_Tensor", FillTensorSig);
  return op.call(self, dim, index, value);
}
Tensor index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  ANATOMY_OP(op, "aten::index_fill_.int_Tensor", FillTensorSig);
  return op.call(self, dim, index, value);
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  ANATOMY_OP(op, "aten::index_copy", FillTensorSig);
  return op.call(self, dim, index, source);
}
Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  ANATOMY_OP(op, "aten::index_copy_", FillTensorSig);
  return op.call(self, dim, index, source);
}
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::index_add", AddSig);
  return op.call(self, dim, index, source, alpha);
}
Tensor index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::index_add_", AddSig);
  return op.call(self, dim, index, source, alpha);
}
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  ANATOMY_OP(op, "aten::masked_scatter", MaskSig);
  return op.call(self, mask, source);
}
Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  ANATOMY_OP(op, "aten::masked_scatter_", MaskSig);
  return op.call(self, mask, source);
}
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  ANATOMY_OP(op, "aten::take_along_dim", Tensor(const Tensor&, const Tensor&, std::optional<int64_t>));
  return op.call(self, indices, dim);
}

// ---- methods ----
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return anatomy::index_fill(*this, dim, index, value);
}
const Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const {
  anatomy::index_fill_(*this, dim, index, value);
  return *this;
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return anatomy::index_copy(*this, dim, index, source);
}
const Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const {
  anatomy::index_copy_(*this, dim, index, source);
  return *this;
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return anatomy::index_add(*this, dim, index, source, alpha);
}
const Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  anatomy::index_add_(*this, dim, index, source, alpha);
  return *this;
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return anatomy::masked_scatter(*this, mask, source);
}
const Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) const {
  anatomy::masked_scatter_(*this, mask, source);
  return *this;
}
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return anatomy::take_along_dim(*this, indices, dim);
}

}  // namespace anatomy

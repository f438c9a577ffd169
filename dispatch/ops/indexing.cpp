// Joining, indexing, scattering and masking: schemas, the C++ functions, the composite kernels
// (cat, stack, embedding and the functional forms of the in-place ops) and the Tensor methods.
//
// Deviation from PyTorch's spelling: advanced indexing takes `Tensor[] indices` where PyTorch
// has `Tensor?[]`; an undefined Tensor in the list stands for None (a full slice).
#include <fmt/ranges.h>

#include <optional>

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy {

ANATOMY_LIBRARY(aten, m) {
  m.def("cat(Tensor[] tensors, int dim=0) -> Tensor");
  m.def("stack(Tensor[] tensors, int dim=0) -> Tensor");
  m.def("index_select(Tensor self, int dim, Tensor index) -> Tensor");
  m.def("gather(Tensor self, int dim, Tensor index) -> Tensor");
  m.def("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor");
  m.def("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor");
  m.def("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)");
  m.def("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)");
  m.def("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor");
  m.def("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)");
  m.def(
      "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> "
      "Tensor");
  m.def(
      "scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, "
      "bool include_self=True) -> Tensor(a!)");
  m.def("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor");
  m.def("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)");
  m.def("masked_select(Tensor self, Tensor mask) -> Tensor");
  m.def("nonzero(Tensor self) -> Tensor");
  m.def("take(Tensor self, Tensor index) -> Tensor");
  m.def("embedding(Tensor weight, Tensor indices) -> Tensor");
  m.def("index.Tensor(Tensor self, Tensor[] indices) -> Tensor");
  m.def("index_put_(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)");
  m.def("index_put(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor");
}

using ListSig = Tensor(TensorList, int64_t);
using DimIndexSig = Tensor(const Tensor&, int64_t, const Tensor&);
using ScatterSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&);
using ScatterValueSig = Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&);
using ScatterReduceSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, std::string_view, bool);
using MaskFillSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using PairSig = Tensor(const Tensor&, const Tensor&);
using IndexSig = Tensor(const Tensor&, TensorList);
using IndexPutSig = Tensor(const Tensor&, TensorList, const Tensor&, bool);

// An empty list has no tensor to dispatch on: refused here, before the dispatcher.
Tensor cat(TensorList tensors, int64_t dim) {
  ANATOMY_CHECK(!tensors.empty(), ValueError, "cat: expected a non-empty list of tensors");
  ANATOMY_OP(op, "aten::cat", ListSig);
  return op.call(tensors, dim);
}
Tensor stack(TensorList tensors, int64_t dim) {
  ANATOMY_CHECK(!tensors.empty(), ValueError, "stack: expected a non-empty list of tensors");
  ANATOMY_OP(op, "aten::stack", ListSig);
  return op.call(tensors, dim);
}
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  ANATOMY_OP(op, "aten::index_select", DimIndexSig);
  return op.call(self, dim, index);
}
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  ANATOMY_OP(op, "aten::gather", DimIndexSig);
  return op.call(self, dim, index);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  ANATOMY_OP(op, "aten::scatter.src", ScatterSig);
  return op.call(self, dim, index, src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  ANATOMY_OP(op, "aten::scatter.value", ScatterValueSig);
  return op.call(self, dim, index, value);
}
Tensor scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  ANATOMY_OP(op, "aten::scatter_.src", ScatterSig);
  return op.call(self, dim, index, src);
}
// No free function is declared for scatter_.value; the Tensor method below calls it.
static Tensor scatter_value_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  ANATOMY_OP(op, "aten::scatter_.value", ScatterValueSig);
  return op.call(self, dim, index, value);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  ANATOMY_OP(op, "aten::scatter_add", ScatterSig);
  return op.call(self, dim, index, src);
}
Tensor scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  ANATOMY_OP(op, "aten::scatter_add_", ScatterSig);
  return op.call(self, dim, index, src);
}
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  ANATOMY_OP(op, "aten::scatter_reduce.two", ScatterReduceSig);
  return op.call(self, dim, index, src, reduce, include_self);
}
Tensor scatter_reduce_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                       bool include_self) {
  ANATOMY_OP(op, "aten::scatter_reduce_.two", ScatterReduceSig);
  return op.call(self, dim, index, src, reduce, include_self);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  ANATOMY_OP(op, "aten::masked_fill.Scalar", MaskFillSig);
  return op.call(self, mask, value);
}
Tensor masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  ANATOMY_OP(op, "aten::masked_fill_.Scalar", MaskFillSig);
  return op.call(self, mask, value);
}
Tensor masked_select(const Tensor& self, const Tensor& mask) {
  ANATOMY_OP(op, "aten::masked_select", PairSig);
  return op.call(self, mask);
}
Tensor nonzero(const Tensor& self) {
  ANATOMY_OP(op, "aten::nonzero", Tensor(const Tensor&));
  return op.call(self);
}
Tensor take(const Tensor& self, const Tensor& index) {
  ANATOMY_OP(op, "aten::take", PairSig);
  return op.call(self, index);
}
Tensor embedding(const Tensor& weight, const Tensor& indices) {
  ANATOMY_OP(op, "aten::embedding", PairSig);
  return op.call(weight, indices);
}
Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  ANATOMY_OP(op, "aten::index.Tensor", IndexSig);
  return op.call(self, TensorList(indices));
}
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  ANATOMY_OP(op, "aten::index_put_", IndexPutSig);
  return op.call(self, TensorList(indices), values, accumulate);
}
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  ANATOMY_OP(op, "aten::index_put", IndexPutSig);
  return op.call(self, TensorList(indices), values, accumulate);
}

// ---- composites ----
namespace {

// The pieces as one strided view of their memory when they lie end to end along dim in one
// tensor's storage with one dtype and one set of strides (cat of a split, a chunk or an unbind of
// one tensor, stack of _foreach_norm's norms): cat is then one copy instead of one per piece.
// `shape` is the result's.
std::optional<Tensor> pieces_as_one_view(TensorList tensors, int64_t dim, IntArrayRef shape) {
  const Tensor& first = tensors[0];
  if (tensors.size() < 2 || first.dim() != static_cast<int64_t>(shape.size())) return std::nullopt;
  int64_t next = first.storage_offset();
  for (const Tensor& t : tensors) {
    if (!t.is_alias_of(first) || t.dtype() != first.dtype() || t.strides() != first.strides() ||
        t.storage_offset() != next) {
      return std::nullopt;
    }
    int64_t extent = 0;
    if (__builtin_mul_overflow(t.size(dim), t.stride(dim), &extent) || __builtin_add_overflow(next, extent, &next)) {
      return std::nullopt;
    }
  }
  return first.as_strided(shape, first.strides(), first.storage_offset());
}

// PyTorch's cat: the result dtype promotes over every input; 1-D tensors of size 0 (the legacy
// "empty" tensor) are skipped whatever the others' shapes; the rest must have one number of dims
// and equal sizes except in dim. Each input is copied (converting) into its slice of the result.
Tensor cat_composite(TensorList tensors, int64_t dim) {
  ANATOMY_CHECK(!tensors.empty(), ValueError, "cat: expected a non-empty list of tensors");
  ResultTypeState promote;
  const Tensor* ref = nullptr;
  size_t ref_pos = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    ANATOMY_CHECK(t.defined(), ValueError, "cat: tensor {} is undefined", i);
    ANATOMY_CHECK(t.dim() > 0, ValueError, "cat: tensor {} is 0-dim and cannot be concatenated", i);
    ANATOMY_CHECK(t.device() == tensors[0].device(), DeviceError, "cat: tensor {} is on {} but tensor 0 is on {}", i,
                  t.device().str(), tensors[0].device().str());
    promote.add_tensor(t.dtype());
    const bool legacy_empty = t.dim() == 1 && t.size(0) == 0;
    if (!ref && !legacy_empty) {
      ref = &t;
      ref_pos = i;
    }
  }
  const DType dtype = promote.result();
  const TensorOptions options = TensorOptions().dtype(dtype).device(tensors[0].device());
  if (!ref) return empty({0}, options);
  dim = wrap_dim(dim, ref->dim(), "cat");
  DimVector shape(ref->sizes());
  shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.size(0) == 0) continue;
    bool match = t.dim() == ref->dim();
    for (int64_t d = 0; match && d < t.dim(); ++d) match = d == dim || t.size(d) == ref->size(d);
    ANATOMY_CHECK(match, ValueError,
                  "cat: sizes of tensors must match except in dimension {}: tensor {} has shape [{}] but tensor {} has "
                  "shape [{}]",
                  dim, ref_pos, fmt::join(ref->sizes(), ", "), i, fmt::join(t.sizes(), ", "));
    // Expanded inputs can add up past int64 along dim.
    shape[dim] = checked_add(shape[dim], t.size(dim), "cat", "the size along the concatenated dim");
  }
  check_factory_size(shape, "cat");
  Tensor out = empty(shape, options);
  if (const std::optional<Tensor> whole = pieces_as_one_view(tensors, dim, shape)) {
    if (out.numel() != 0) out.copy_(*whole);
    return out;
  }
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0) continue;
    // An empty piece has nothing to copy (and the view of it could start past int64 bytes).
    if (t.numel() != 0) out.narrow(dim, at, t.size(dim)).copy_(t);
    at += t.size(dim);
  }
  return out;
}

Tensor stack_composite(TensorList tensors, int64_t dim) {
  ANATOMY_CHECK(!tensors.empty(), ValueError, "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    ANATOMY_CHECK(tensors[i].defined(), ValueError, "stack: tensor {} is undefined", i);
    ANATOMY_CHECK(tensors[i].sizes() == tensors[0].sizes(), ValueError,
                  "stack: every tensor must have the same shape, but tensor 0 has shape [{}] and tensor {} has [{}]",
                  fmt::join(tensors[0].sizes(), ", "), i, fmt::join(tensors[i].sizes(), ", "));
  }
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(dim));
  return cat(parts, dim);
}

// The functional forms: a copy of self, then the in-place kernel (which checks everything).
Tensor scatter_src_composite(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_(self.clone(), dim, index, src);
}
Tensor scatter_value_composite(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_value_(self.clone(), dim, index, value);
}
Tensor scatter_add_composite(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_add_(self.clone(), dim, index, src);
}
Tensor scatter_reduce_composite(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self) {
  return scatter_reduce_(self.clone(), dim, index, src, reduce, include_self);
}
Tensor index_put_composite(const Tensor& self, TensorList indices, const Tensor& values, bool accumulate) {
  return index_put_(self.clone(), std::vector<Tensor>(indices.begin(), indices.end()), values, accumulate);
}
// As PyTorch: self and mask broadcast together (the result can be larger than self).
Tensor masked_fill_composite(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask_dtype(mask, "masked_fill");
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  // clone, never contiguous(): an expand that only adds leading size-1 dims is already contiguous,
  // and contiguous() would hand back a view of self for masked_fill_ to write into.
  Tensor out = self.sizes() == IntArrayRef(shape) ? self.clone() : self.expand(shape).clone(MemoryFormat::Contiguous);
  return masked_fill_(out, mask, value);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("cat", ANATOMY_KERNEL(cat_composite));
  m.impl("stack", ANATOMY_KERNEL(stack_composite));
  m.impl("scatter.src", ANATOMY_KERNEL(scatter_src_composite));
  m.impl("scatter.value", ANATOMY_KERNEL(scatter_value_composite));
  m.impl("scatter_add", ANATOMY_KERNEL(scatter_add_composite));
  m.impl("scatter_reduce.two", ANATOMY_KERNEL(scatter_reduce_composite));
  m.impl("index_put", ANATOMY_KERNEL(index_put_composite));
  m.impl("masked_fill.Scalar", ANATOMY_KERNEL(masked_fill_composite));
}

// ---- methods ----
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return anatomy::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return anatomy::gather(*this, dim, index); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return anatomy::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return anatomy::scatter(*this, dim, index, value);
}
const Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  anatomy::scatter_(*this, dim, index, src);
  return *this;
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return anatomy::scatter_add(*this, dim, index, src);
}
const Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  anatomy::scatter_add_(*this, dim, index, src);
  return *this;
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return anatomy::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
const Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                      bool include_self) const {
  anatomy::scatter_reduce_(*this, dim, index, src, reduce, include_self);
  return *this;
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return anatomy::masked_fill(*this, mask, value);
}
const Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  anatomy::masked_fill_(*this, mask, value);
  return *this;
}
Tensor Tensor::masked_select(const Tensor& mask) const { return anatomy::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return anatomy::nonzero(*this); }
Tensor Tensor::take(const Tensor& index) const { return anatomy::take(*this, index); }
Tensor Tensor::index(const std::vector<Tensor>& indices) const { return anatomy::index(*this, indices); }
const Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) const {
  anatomy::index_put_(*this, indices, values, accumulate);
  return *this;
}
// A scalar value becomes a 0-dim tensor of self's dtype (checked to fit), broadcast over the
// indexed positions.
const Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Scalar& value) const {
  check_scalar_fits(value, dtype(), "index_put_");
  anatomy::index_put_(*this, indices, scalar_tensor(value, options()), false);
  return *this;
}

}  // namespace anatomy

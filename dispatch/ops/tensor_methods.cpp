// Tensor's methods that compute: each calls the operator function of the same name, so a
// method call and a free-function call take the same path through the dispatcher.
#include "anatomy/dispatch/ops.h"

namespace anatomy {

Tensor Tensor::view(IntArrayRef size) const { return anatomy::view(*this, size); }
Tensor Tensor::reshape(IntArrayRef size) const { return anatomy::reshape(*this, size); }
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) const {
  return anatomy::as_strided(*this, size, stride, storage_offset);
}
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return anatomy::transpose(*this, dim0, dim1); }
Tensor Tensor::t() const { return anatomy::t(*this); }
Tensor Tensor::T() const {
  DimVector dims(dim());
  for (int64_t i = 0; i < dim(); ++i) dims[i] = dim() - 1 - i;
  return anatomy::permute(*this, dims);
}
Tensor Tensor::mT() const {
  ANATOMY_CHECK(dim() >= 2, ValueError, "mT: needs at least 2 dims, got {}", dim());
  return anatomy::transpose(*this, -2, -1);
}
Tensor Tensor::permute(IntArrayRef dims) const { return anatomy::permute(*this, dims); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return anatomy::slice(*this, dim, start, end, step);
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return anatomy::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return anatomy::select(*this, dim, index); }
Tensor Tensor::squeeze() const { return anatomy::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return anatomy::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return anatomy::unsqueeze(*this, dim); }
Tensor Tensor::expand(IntArrayRef size) const { return anatomy::expand(*this, size); }
Tensor Tensor::expand_as(const Tensor& other) const { return anatomy::expand_as(*this, other); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return anatomy::flatten(*this, start_dim, end_dim); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return anatomy::unflatten(*this, dim, sizes); }
Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const { return anatomy::unfold(*this, dim, size, step); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return anatomy::diagonal(*this, offset, dim1, dim2);
}
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return anatomy::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t dim) const {
  return anatomy::split_with_sizes(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return anatomy::chunk(*this, chunks, dim); }
Tensor Tensor::movedim(IntArrayRef source, IntArrayRef destination) const {
  return anatomy::movedim(*this, source, destination);
}
Tensor Tensor::movedim(int64_t source, int64_t destination) const {
  return anatomy::movedim(*this, source, destination);
}
Tensor Tensor::moveaxis(IntArrayRef source, IntArrayRef destination) const {
  return anatomy::moveaxis(*this, source, destination);
}
Tensor Tensor::moveaxis(int64_t source, int64_t destination) const {
  return anatomy::moveaxis(*this, source, destination);
}
Tensor Tensor::swapaxes(int64_t axis0, int64_t axis1) const { return anatomy::swapaxes(*this, axis0, axis1); }
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const { return anatomy::swapdims(*this, dim0, dim1); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return anatomy::unbind(*this, dim); }
Tensor Tensor::view_as(const Tensor& other) const { return anatomy::view_as(*this, other); }
Tensor Tensor::reshape_as(const Tensor& other) const { return anatomy::reshape_as(*this, other); }
Tensor Tensor::broadcast_to(IntArrayRef size) const { return anatomy::broadcast_to(*this, size); }

Tensor Tensor::contiguous(MemoryFormat f) const { return anatomy::contiguous(*this, f); }
Tensor Tensor::clone(MemoryFormat f) const { return anatomy::clone(*this, f); }
const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  anatomy::copy_(*this, src, non_blocking);
  return *this;
}

Tensor Tensor::to(DType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) const {
  return to(device(), dtype, non_blocking, copy, memory_format);
}
Tensor Tensor::to(Device device, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) const {
  return to(device, dtype(), non_blocking, copy, memory_format);
}
Tensor Tensor::to(MemoryFormat memory_format, bool copy) const {
  return to(device(), dtype(), false, copy, memory_format);
}
Tensor Tensor::to(Device target, DType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  // "cuda" means the current CUDA device: matching only the type keeps to("cuda") a no-op for a
  // tensor already there.
  bool same_device = target.type() == device().type() && (!target.has_index() || target.index() == device().index());
  // PyTorch's to_will_alias: the layout is asked about through suggest_memory_format, so a
  // transposed matrix .to(memory_format=contiguous_format) is itself, not a copy.
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Preserve);
  bool same_layout = format == MemoryFormat::Preserve || anatomy::suggest_memory_format(*this) == format;
  if (same_device && dtype == this->dtype() && same_layout && !copy) return *this;
  return anatomy::_to_copy(*this, dtype, target, non_blocking, memory_format);
}

Scalar Tensor::item() const {
  ANATOMY_CHECK(numel() == 1, ValueError, "item: a tensor with {} elements cannot be converted to a Scalar", numel());
  return anatomy::_local_scalar_dense(*this);
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  anatomy::fill_(*this, value);
  return *this;
}
const Tensor& Tensor::zero_() const { return fill_(0); }
const Tensor& Tensor::uniform_(double from, double to) const {
  anatomy::uniform_(*this, from, to);
  return *this;
}
const Tensor& Tensor::normal_(double mean, double std) const {
  anatomy::normal_(*this, mean, std);
  return *this;
}

}  // namespace anatomy

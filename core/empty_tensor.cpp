// Fresh tensors over new storage, and the overlap check for written-to tensors.
#include "anatomy/core/empty_tensor.h"

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/views.h"

namespace anatomy {

int64_t required_storage_elements(IntArrayRef sizes, IntArrayRef strides, const char* op) {
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span;
    ANATOMY_CHECK(
        !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) && !__builtin_add_overflow(extent, span, &extent),
        ValueError, "{}: sizes [{}] with strides [{}] reach beyond 2^63 elements", op, fmt::join(sizes, ", "),
        fmt::join(strides, ", "));
  }
  return extent;
}

Tensor make_empty_tensor(IntArrayRef sizes, IntArrayRef strides, DType dtype, Allocator* allocator, const char* op) {
  ANATOMY_CHECK(sizes.size() == strides.size(), ValueError, "{}: sizes [{}] and strides [{}] differ in length", op,
                fmt::join(sizes, ", "), fmt::join(strides, ", "));
  const int64_t numel = checked_numel(sizes, op);
  checked_span(sizes, op);  // every tensor's shape has int64 strides (checked_arith.h)
  for (size_t i = 0; i < strides.size(); ++i) {
    ANATOMY_CHECK(strides[i] >= 0, ValueError, "{}: negative stride {} at dim {}", op, strides[i], i);
  }
  ANATOMY_CHECK(allocator != nullptr, DeviceError, "{}: no allocator is registered for this device", op);
  int64_t elems = required_storage_elements(sizes, strides, op);
  // An empty tensor allocates nothing, so nothing else bounds its strides; its views' offsets
  // are computed from them (views.cpp).
  if (numel == 0) checked_view_reach(sizes, strides, 0, element_size(dtype), op);
  size_t nbytes;
  ANATOMY_CHECK(!__builtin_mul_overflow(static_cast<size_t>(elems), element_size(dtype), &nbytes), ValueError,
                "{}: [{}] elements of {} overflow the address space", op, fmt::join(sizes, ", "), name(dtype));
  Storage storage;
  try {
    storage = allocator->make_storage(nbytes);
  } catch (const OutOfMemoryError& e) {
    // The allocator knows its own state, not which operator asked: name it.
    throw OutOfMemoryError(fmt::format("{}: {}", op, e.what()));
  }
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
}

Tensor make_contiguous_tensor_like(const Tensor& like, DType dtype, Allocator* allocator) {
  const int64_t numel = like.numel();
  const size_t nbytes = static_cast<size_t>(numel) * element_size(dtype);
  return Tensor(IntrusivePtr<TensorImpl>::make(allocator->make_storage(nbytes), dtype, like.sizes(), like.strides(),
                                               TensorImpl::ContiguousLayout{numel}));
}

Tensor make_empty_tensor(IntArrayRef sizes, DType dtype, Allocator* allocator, MemoryFormat format, const char* op) {
  checked_numel(sizes, op);
  if (is_channels_last(format)) {
    return make_empty_tensor(sizes, checked_channels_last_strides(sizes, format, op), dtype, allocator, op);
  }
  ANATOMY_CHECK(format != MemoryFormat::Preserve, ValueError, "{}: preserve_format needs an input to preserve", op);
  return make_empty_tensor(sizes, checked_contiguous_strides(sizes, op), dtype, allocator, op);
}

Tensor checked_copy_source(const Tensor& self, const Tensor& src) {
  check_no_internal_overlap(self, "copy_");
  ANATOMY_CHECK(is_expandable_to(src.sizes(), self.sizes()), ValueError,
                "copy_: source of shape [{}] cannot be broadcast to the destination's shape [{}]",
                fmt::join(src.sizes(), ", "), fmt::join(self.sizes(), ", "));
  if (src.sizes() == self.sizes()) return src;
  return views::expand(src, self.sizes());
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (!a.is_alias_of(b) || a.numel() == 0 || b.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    int64_t start = t.storage_offset();
    return std::pair<int64_t, int64_t>(start, start + required_storage_elements(t.sizes(), t.strides(), "copy_"));
  };
  auto [a0, a1] = range(a);
  auto [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

// Every kernel that writes into an existing tensor calls this before writing, so it is also where
// a write into an inference tensor outside InferenceMode is refused (before anything changes).
void check_no_internal_overlap(const Tensor& t, const char* op) {
  t.impl()->check_writable(op);
  if (t.is_non_overlapping_and_dense()) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    ANATOMY_CHECK(!(t.sizes()[d] > 1 && t.strides()[d] == 0), ValueError,
                  "{}: more than one element of the written-to tensor refers to a single memory location (dim {} "
                  "has size {} and stride 0); clone() it first",
                  op, d, t.sizes()[d]);
  }
}

}  // namespace anatomy

// TensorImpl construction and the layout predicates (contiguity, density, channels_last).
#include "anatomy/core/tensor_impl.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "anatomy/core/error.h"
#include "anatomy/core/inference_mode_state.h"

namespace anatomy {
namespace {
std::atomic<AutogradMetaFactory> g_autograd_meta_factory{nullptr};
}  // namespace

DispatchKey backend_dispatch_key(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return DispatchKey::CPU;
    case DeviceType::CUDA:
      return DispatchKey::CUDA;
    case DeviceType::Meta:
      return DispatchKey::Meta;
    case DeviceType::PrivateUse1:
      return DispatchKey::PrivateUse1;
  }
  return DispatchKey::CPU;
}

void set_autograd_meta_factory(AutogradMetaFactory factory) { g_autograd_meta_factory.store(factory); }
AutogradMetaFactory autograd_meta_factory() { return g_autograd_meta_factory.load(); }

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset)
    : TensorImpl(std::move(storage), dtype, sizes, strides, ContiguousLayout{0}) {
  storage_offset_ = storage_offset;
  refresh();  // numel and contiguity from the sizes and strides
}

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, ContiguousLayout layout)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      numel_(layout.numel),
      // Inference tensors have none: one heap object fewer per op in inference mode.
      version_(detail::tls_inference_mode ? IntrusivePtr<VersionCounter>() : IntrusivePtr<VersionCounter>::make()),
      dtype_(dtype),
      is_contiguous_(true) {
  ANATOMY_INTERNAL_ASSERT(storage_, "a TensorImpl needs a storage");
  ANATOMY_INTERNAL_ASSERT(sizes.size() == strides.size());
  key_set_ = tensor_key_set_for_backend(backend_dispatch_key(storage_->device().type()));
}

TensorImpl::TensorImpl(const TensorImpl& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset)
    : storage_(base.storage_),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      version_(base.version_),
      key_set_(base.key_set_),
      dtype_(base.dtype_) {
  ANATOMY_INTERNAL_ASSERT(sizes.size() == strides.size());
  refresh();
}

void TensorImpl::throw_no_version_counter() const {
  ANATOMY_THROW(ValueError,
                "version: an inference tensor (made in InferenceMode) does not track versions; clone() it to get a "
                "normal tensor");
}

void TensorImpl::check_inference_write(const char* op) const {
  ANATOMY_CHECK(detail::tls_inference_mode, ValueError,
                "{}: an in-place update to an inference tensor outside InferenceMode is not allowed; clone() it to get "
                "a normal tensor first",
                op ? op : "in-place operation");
}

void TensorImpl::replace_data(const TensorImpl& source) {
  if (&source == this) return;
  storage_ = source.storage_;
  sizes_ = source.sizes_;
  strides_ = source.strides_;
  storage_offset_ = source.storage_offset_;
  dtype_ = source.dtype_;
  key_set_ = tensor_key_set_for_backend(backend_dispatch_key(storage_->device().type()));
  refresh();
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  ANATOMY_INTERNAL_ASSERT(sizes.size() == strides.size());
  sizes_ = DimVector(sizes);
  strides_ = DimVector(strides);
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::refresh() {
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  is_contiguous_ = compute_contiguous(sizes_, strides_);
}

bool TensorImpl::is_contiguous(MemoryFormat f) const {
  if (is_channels_last(f)) return compute_channels_last_contiguous(sizes_, strides_, f);
  return is_contiguous_;
}

bool TensorImpl::is_non_overlapping_and_dense() const {
  if (is_contiguous_) return true;
  // Dense in some order: sorted by stride, each stride equals the product of the sizes below it.
  std::vector<size_t> perm(sizes_.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes_[a] < 2) return false;
    if (sizes_[b] < 2) return true;
    return strides_[a] < strides_[b];
  });
  int64_t expected = 1;
  for (size_t d : perm) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    if (__builtin_mul_overflow(expected, sizes_[d], &expected)) expected = -1;  // matches no stride
  }
  return true;
}

}  // namespace anatomy

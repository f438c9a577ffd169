// TensorImpl: the state behind a Tensor handle. A view of storage: sizes, strides (in
// elements), an offset into the storage, a dtype and a device, plus what the dispatcher and
// autograd need (the key set, the version counter shared by views, the autograd slot).
//
// A tensor made while InferenceMode is on is an inference tensor: it has no version counter at
// all (nor have its views), so in-place ops on it count nothing; outside the mode it may not be
// written in place, and autograd refuses to save it (docs/autograd.md, "Inference mode").
#pragma once

#include <atomic>
#include <memory>

#include "anatomy/core/dim_vector.h"
#include "anatomy/core/dispatch_key_set.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/intrusive_ptr.h"
#include "anatomy/core/memory_format.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/storage.h"

namespace anatomy {

// Shared by a tensor and all its views, so that an in-place change through any of them is seen
// by autograd's saved-tensor checks on all of them.
class VersionCounter : public RefCounted {
 public:
  uint32_t current() const { return version_.load(std::memory_order_relaxed); }
  void bump() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

// The slot autograd fills; core only needs to know whether a tensor requires grad.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
  virtual bool requires_grad() const = 0;
  virtual void set_requires_grad(bool value) = 0;
  // The name of the node that produced the tensor ("AddBackward0"), empty for leaves.
  virtual std::string grad_fn_name() const = 0;
};

// Installed by the autograd module: makes the metadata for a tensor that starts requiring grad.
using AutogradMetaFactory = std::unique_ptr<AutogradMetaInterface> (*)();
void set_autograd_meta_factory(AutogradMetaFactory factory);
AutogradMetaFactory autograd_meta_factory();

// The backend dispatch key of a device type's tensors (CPU -> CPU, CUDA -> CUDA, ...).
DispatchKey backend_dispatch_key(DeviceType t);

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // The same at offset 0 for sizes and strides known to be contiguous with `numel` elements
  // (those of an existing contiguous tensor): nothing to work out from them.
  struct ContiguousLayout {
    int64_t numel;
  };
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, ContiguousLayout layout);
  // A view: shares `base`'s storage and version counter.
  TensorImpl(const TensorImpl& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Storage& storage() const { return storage_; }
  DispatchKeySet key_set() const { return key_set_; }
  bool is_contiguous() const { return is_contiguous_; }
  bool is_contiguous(MemoryFormat f) const;
  bool is_non_overlapping_and_dense() const;

  // Changes the metadata in place (as_strided_, resize of an empty tensor, squeeze_): the
  // cached contiguity and numel are recomputed.
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // Takes `source`'s storage, sizes, strides, offset and dtype, and with the storage its device
  // and backend keys; keeps this tensor's version counter and autograd metadata (Tensor::set_data).
  void replace_data(const TensorImpl& source);

  // Pointer to element 0 of this view (the storage's data plus the offset).
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // No version counter: made in inference mode (or a view of such a tensor).
  bool is_inference() const { return !version_; }
  // ValueError for an inference tensor, which does not track versions.
  uint32_t version() const {
    if (!version_) [[unlikely]]
      throw_no_version_counter();
    return version_->current();
  }
  // Every kernel that writes a tensor in place calls this after the write. An inference tensor
  // counts nothing; outside inference mode it raises, as a backstop: kernels refuse the write
  // before it happens (check_writable, through check_no_internal_overlap).
  void bump_version() {
    if (version_) [[likely]] {
      version_->bump();
    } else {
      check_inference_write(nullptr);
    }
  }
  // ValueError naming `op` when this is an inference tensor and inference mode is off.
  void check_writable(const char* op) const {
    if (!version_) [[unlikely]]
      check_inference_write(op);
  }
  const IntrusivePtr<VersionCounter>& version_counter() const { return version_; }

  // A 0-dim tensor made from a C++ number for an operator (`t * 2.5`): promotion treats it as a
  // Python scalar (by category only), as PyTorch's wrapped numbers.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool v) { is_wrapped_number_ = v; }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }

 private:
  void refresh();
  [[noreturn]] void throw_no_version_counter() const;
  void check_inference_write(const char* op) const;

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  IntrusivePtr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  DispatchKeySet key_set_;
  DType dtype_;
  bool is_contiguous_ = true;
  bool is_wrapped_number_ = false;
};

// A hot structure: every op allocates one. Keep it within four cache lines.
static_assert(sizeof(TensorImpl) <= 256, "TensorImpl grew: keep it small");

}  // namespace anatomy

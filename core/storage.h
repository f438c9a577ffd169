// Storage: the refcounted block of bytes behind one or more tensors. Views share it; it is
// freed when the last tensor (or other handle) referring to it goes.
#pragma once

#include <cstddef>

#include "anatomy/core/allocator.h"
#include "anatomy/core/intrusive_ptr.h"

namespace anatomy {

class StorageImpl : public RefCounted {
 public:
  StorageImpl(DataPtr data, size_t nbytes, Allocator* allocator)
      : data_(std::move(data)), nbytes_(nbytes), allocator_(allocator) {}

  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  const DataPtr& data_ptr() const { return data_; }
  // The allocator that made the memory; nullptr for memory that came from a user (from_blob).
  Allocator* allocator() const { return allocator_; }

 private:
  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_;
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace anatomy

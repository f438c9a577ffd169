// DimVector: sizes or strides of a tensor, stored inline up to kInlineDims dims and on the heap
// beyond, so the common tensor costs no extra allocation for its shape.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "anatomy/core/array_ref.h"

namespace anatomy {

class DimVector {
 public:
  static constexpr size_t kInlineDims = 5;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  DimVector(IntArrayRef v) { assign(v); }
  DimVector(std::initializer_list<int64_t> v) { assign(IntArrayRef(v.begin(), v.size())); }
  DimVector(const DimVector& o) { assign(o); }
  DimVector(DimVector&& o) noexcept { steal(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o);
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      steal(o);
    }
    return *this;
  }
  ~DimVector() { free_heap(); }

  void assign(IntArrayRef v) {
    reserve(v.size());
    copy_dims(v.data(), v.size(), data());
    size_ = v.size();
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }

  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t back() const { return data()[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(data(), size_); }
  bool operator==(const DimVector& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

 private:
  void reserve(size_t n) {
    if (n <= capacity()) return;
    size_t cap = std::max(n, 2 * capacity());
    auto* p = new int64_t[cap];
    std::copy(data(), data() + size_, p);
    free_heap();
    heap_ = p;
    heap_capacity_ = cap;
  }
  size_t capacity() const { return heap_ ? heap_capacity_ : kInlineDims; }
  // Shapes are copied on every op (a new TensorImpl, a plan): up to kInlineDims values are moved
  // one by one, which is a few instructions where a call to memmove (what GCC makes of a copy
  // loop) costs a few dozen.
  static void copy_dims(const int64_t* src, size_t n, int64_t* dst) {
    static_assert(kInlineDims == 5, "copy_dims moves up to kInlineDims values one by one");
    switch (n) {
      case 5:
        dst[4] = src[4];
        [[fallthrough]];
      case 4:
        dst[3] = src[3];
        [[fallthrough]];
      case 3:
        dst[2] = src[2];
        [[fallthrough]];
      case 2:
        dst[1] = src[1];
        [[fallthrough]];
      case 1:
        dst[0] = src[0];
        [[fallthrough]];
      case 0:
        return;
      default:
        std::memmove(dst, src, n * sizeof(int64_t));
    }
  }
  void free_heap() {
    delete[] heap_;
    heap_ = nullptr;
  }
  void steal(DimVector& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      heap_capacity_ = o.heap_capacity_;
      o.heap_ = nullptr;
    } else {
      copy_dims(o.inline_, o.size_, inline_);
    }
    o.size_ = 0;
  }

  int64_t inline_[kInlineDims];
  int64_t* heap_ = nullptr;
  size_t heap_capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace anatomy

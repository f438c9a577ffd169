// PointerMap: a map from non-null addresses to values, for the caching allocator's allocated
// blocks (raw_free and record_stream find a block by its pointer) and the autograd engine's
// nodes of a backward run (engine.cpp). An open-addressing table with
// linear probing and backward-shift deletion: once it has grown to the largest number of blocks
// alive at once, an insert or an erase allocates nothing and touches a slot or two, where a
// std::unordered_map allocates and frees a node on every allocation and free.
//
// Not thread-safe: its owner guards it (the allocator's mutex; a backward run's table is its own).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace anatomy {

template <typename V>
class PointerMap {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The value of `key`, or nullptr.
  V* find(const void* key) {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

  // Adds `key` (non-null, not in the map) with `value`.
  void insert(const void* key, V value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask();
    slots_[i] = {key, value};
    ++size_;
  }

  // Removes `key`; false when it is not in the map.
  bool erase(const void* key) {
    const size_t i = slot_of(key);
    if (i == kNone) return false;
    erase_slot(i);
    return true;
  }

  // Removes `key` and returns its value, or V{} when it is not in the map: a lookup and an erase
  // in one probe (raw_free).
  V take(const void* key) {
    const size_t i = slot_of(key);
    if (i == kNone) return V{};
    const V value = slots_[i].value;
    erase_slot(i);
    return value;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.key != nullptr) f(s.key, s.value);
    }
  }

 private:
  struct Slot {
    const void* key = nullptr;
    V value{};
  };

  static constexpr size_t kNone = ~size_t{0};

  size_t mask() const { return slots_.size() - 1; }

  // The slot holding `key`, or kNone.
  size_t slot_of(const void* key) const {
    if (slots_.empty()) return kNone;
    size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return kNone;
      i = (i + 1) & mask();
    }
    return i;
  }

  // Backward shift: each later entry of the probe run whose home is not in (hole, its slot]
  // moves into the hole, so every entry stays reachable from its home without tombstones.
  void erase_slot(size_t i) {
    for (size_t j = (i + 1) & mask(); slots_[j].key != nullptr; j = (j + 1) & mask()) {
      const size_t h = home(slots_[j].key);
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    --size_;
  }
  // Fibonacci hashing: block addresses are multiples of 512, so the low bits say nothing; the
  // product's top bits mix them all.
  size_t home(const void* key) const {
    const uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(x >> shift_);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t capacity = old.empty() ? 64 : old.size() * 2;
    slots_.assign(capacity, Slot{});
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != nullptr) insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace anatomy

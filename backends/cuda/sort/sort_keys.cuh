// Internal to sort/: included by the room's own files only (its launcher header is launch.h).
// Sort keys: each element mapped to an unsigned integer of its own width whose ascending order is
// the order sort and topk want (the CPU's, backends/cpu/sort_cpu.cpp), so that CUB's radix sorts
// (stable) give the CPU's stable order bit for bit.
//
// - bool: 0 or 1; unsigned integers as they are; signed integers with the sign bit flipped.
// - floats (fp16 and bf16 too, whose order is their float value's): -0.0 becomes +0.0 (the two
//   compare equal and keep their input order), then a set sign bit inverts every bit and a clear
//   one sets the sign bit (the usual monotone map); every NaN, whatever its sign and payload,
//   becomes the largest key (NaN is larger than every number, and NaNs are equal to each other).
// - descending: the bitwise NOT of the ascending key. Equal keys stay equal, so a stable
//   ascending sort of the inverted keys keeps ties in input order, as the CPU does both ways.
#pragma once

#include <cstdint>

#include "anatomy/core/dtype.h"
#include "anatomy/core/macros.h"

namespace anatomy::cuda {

enum class KeyKind : uint8_t { Bool, Unsigned, Signed, Float };

// How one dtype's bits become keys. `inf_bits` (floats only) is +infinity's bit pattern: a value
// whose bits without the sign are above it is a NaN.
struct KeyRule {
  KeyKind kind = KeyKind::Unsigned;
  uint64_t inf_bits = 0;
  bool descending = false;
};

// The rule of each dtype; its keys are unsigned integers of element_size(dtype) bytes.
constexpr KeyRule key_rule(DType dtype, bool descending) {
  switch (dtype) {
    case DType::Bool:
      return {KeyKind::Bool, 0, descending};
    case DType::UInt8:
      return {KeyKind::Unsigned, 0, descending};
    case DType::Int8:
    case DType::Int32:
    case DType::Int64:
      return {KeyKind::Signed, 0, descending};
    case DType::Float16:
      return {KeyKind::Float, 0x7C00, descending};
    case DType::BFloat16:
      return {KeyKind::Float, 0x7F80, descending};
    case DType::Float32:
      return {KeyKind::Float, 0x7F800000u, descending};
    case DType::Float64:
      return {KeyKind::Float, 0x7FF0000000000000ull, descending};
  }
  return {KeyKind::Unsigned, 0, descending};
}

// The key of one element, from its bits (host and device: the GPU tests check the map on the
// host against the CPU's comparisons).
template <typename U>
ANATOMY_HOST_DEVICE U order_key(U bits, const KeyRule& rule) {
  constexpr U sign = static_cast<U>(U{1} << (8 * sizeof(U) - 1));
  U key = bits;
  switch (rule.kind) {
    case KeyKind::Bool:
      key = bits != 0 ? U{1} : U{0};
      break;
    case KeyKind::Unsigned:
      break;
    case KeyKind::Signed:
      key = static_cast<U>(bits ^ sign);
      break;
    case KeyKind::Float: {
      const U magnitude = static_cast<U>(bits & static_cast<U>(~sign));
      if (magnitude > static_cast<U>(rule.inf_bits)) {
        key = static_cast<U>(~U{0});
      } else if (magnitude == 0) {
        key = sign;  // +0.0 and -0.0 alike
      } else {
        key = (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
      }
      break;
    }
  }
  return rule.descending ? static_cast<U>(~key) : key;
}

}  // namespace anatomy::cuda

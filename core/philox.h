// Philox4x32-10 counter-based RNG and the element mapping every random kernel (CPU and CUDA) shares.
//
// Stream contract: element i of a random tensor drawn with seed `s` at generator offset `off`
// uses the block
//     philox4x32_10(off + i, 0, s)
// i.e. counter words (lo32(off + i), hi32(off + i), 0, 0) and key words (lo32(s), hi32(s)).
// The block is then mapped to a value by exactly one of the helpers below:
//   uniform (float type with D mantissa digits): philox_uniform_bits<D>: top D bits of
//     (v[1] << 32 | v[0]) times 2^-D, in [0, 1) and exactly representable in that type, so
//     narrowing it never rounds up to 1.0;
//   normal: philox_normal: Box-Muller, cosine branch only, one block per element;
//   raw bits / integer ranges: philox_u64.
// Every element consumes one block regardless of dtype, so a kernel can compute element i
// independently, and a draw of n elements advances the generator offset by n.
// Uniforms and raw bits are bit-identical on host and device; normals go through log/cos/sqrt,
// so they agree only to within the accuracy of the respective math libraries (a few ulp).
#pragma once

#include <cmath>
#include <cstdint>

#include "anatomy/core/macros.h"

namespace anatomy {

struct Philox4x32Result {
  uint32_t v[4];
};

namespace detail {

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

}  // namespace detail

// Raw word interface, in Random123's order, so the published known-answer vectors apply directly.
ANATOMY_HOST_DEVICE inline Philox4x32Result philox4x32_10_words(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                                                uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += detail::kPhiloxW0;
      k1 += detail::kPhiloxW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(detail::kPhiloxM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(detail::kPhiloxM1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32);
    const uint32_t lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32);
    const uint32_t lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return Philox4x32Result{{c0, c1, c2, c3}};
}

// Counter words are (lo32(counter_lo), hi32(counter_lo), lo32(counter_hi), hi32(counter_hi)),
// key words are (lo32(key), hi32(key)).
ANATOMY_HOST_DEVICE inline Philox4x32Result philox4x32_10(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  return philox4x32_10_words(static_cast<uint32_t>(counter_lo), static_cast<uint32_t>(counter_lo >> 32),
                             static_cast<uint32_t>(counter_hi), static_cast<uint32_t>(counter_hi >> 32),
                             static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

// The single place the stream contract is spelled out in code; kernels should call this rather
// than re-deriving the counter so CPU and CUDA cannot drift apart.
ANATOMY_HOST_DEVICE inline Philox4x32Result philox_element_block(uint64_t seed, uint64_t offset, uint64_t index) {
  return philox4x32_10(offset + index, 0, seed);
}

ANATOMY_HOST_DEVICE inline uint64_t philox_u64(const Philox4x32Result& r) {
  return (static_cast<uint64_t>(r.v[1]) << 32) | r.v[0];
}

// Truncating to MantissaDigits bits (instead of rounding a 53-bit uniform) keeps every value on
// the target type's grid below 1, so converting to that type is exact and 1.0 is unreachable.
template <int MantissaDigits>
ANATOMY_HOST_DEVICE inline double philox_uniform_bits(const Philox4x32Result& r) {
  static_assert(MantissaDigits >= 1 && MantissaDigits <= 53, "the result must be exact in a double");
  constexpr double scale = 1.0 / static_cast<double>(uint64_t{1} << MantissaDigits);
  return static_cast<double>(philox_u64(r) >> (64 - MantissaDigits)) * scale;
}

ANATOMY_HOST_DEVICE inline double philox_uniform_f64(const Philox4x32Result& r) { return philox_uniform_bits<53>(r); }

ANATOMY_HOST_DEVICE inline double philox_normal(const Philox4x32Result& r) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  constexpr double kScale = 1.0 / 9007199254740992.0;  // 2^-53
  // Shifting the 53-bit grid up by one ulp maps it onto (0, 1], so log(u1) is always finite.
  const double u1 = static_cast<double>((philox_u64(r) >> 11) + 1) * kScale;
  const uint64_t w = (static_cast<uint64_t>(r.v[3]) << 32) | r.v[2];
  const double u2 = static_cast<double>(w >> 11) * kScale;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * u2);
}

}  // namespace anatomy

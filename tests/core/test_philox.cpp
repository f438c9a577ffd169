// Philox4x32-10 known-answer vectors and the statistical sanity of the element mapping helpers.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "anatomy/core/philox.h"

using anatomy::philox4x32_10;
using anatomy::philox4x32_10_words;
using anatomy::Philox4x32Result;
using anatomy::philox_element_block;
using anatomy::philox_normal;
using anatomy::philox_u64;
using anatomy::philox_uniform_bits;
using anatomy::philox_uniform_f64;

namespace {

bool same(const Philox4x32Result& r, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return r.v[0] == a && r.v[1] == b && r.v[2] == c && r.v[3] == d;
}

// True when x is k * 2^-digits for an integer 0 <= k < 2^digits, i.e. on the grid of a float
// type with `digits` mantissa bits inside [0, 1).
bool on_grid_below_one(double x, int digits) {
  if (!(x >= 0.0 && x < 1.0)) return false;
  const double scaled = std::ldexp(x, digits);
  return scaled == std::floor(scaled);
}

}  // namespace

TEST_CASE("Philox: Random123 known-answer vectors") {
  CHECK(same(philox4x32_10_words(0, 0, 0, 0, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  CHECK(same(philox4x32_10_words(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu),
             0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  CHECK(same(philox4x32_10_words(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u),
             0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

TEST_CASE("Philox: 64-bit counter and key packing") {
  CHECK(same(philox4x32_10(0, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  CHECK(same(philox4x32_10(~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}), 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u,
             0x6d5451fdu));
  CHECK(same(philox4x32_10(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull), 0xd16cfe09u,
             0x94fdccebu, 0x5001e420u, 0x24126ea1u));

  // Element i at offset off with seed s is block (off + i, 0, s).
  const uint64_t seed = 0x0123456789abcdefull;
  for (uint64_t i = 0; i < 16; ++i) {
    const Philox4x32Result a = philox_element_block(seed, 1000, i);
    const Philox4x32Result b = philox4x32_10(1000 + i, 0, seed);
    CHECK(same(a, b.v[0], b.v[1], b.v[2], b.v[3]));
  }
  // Offsets compose: drawing at offset 1000 element 5 is the same block as offset 1005 element 0.
  const Philox4x32Result x = philox_element_block(seed, 1000, 5);
  const Philox4x32Result y = philox_element_block(seed, 1005, 0);
  CHECK(same(x, y.v[0], y.v[1], y.v[2], y.v[3]));
  CHECK(philox_u64(Philox4x32Result{{0x89abcdefu, 0x01234567u, 0, 0}}) == 0x0123456789abcdefull);
}

TEST_CASE("Philox: uniform helpers lie in 0 to 1 (1 excluded) and are exactly representable") {
  // Extremes: all-zero bits give 0, all-one bits give the largest grid value below 1.
  const Philox4x32Result zeros{{0, 0, 0, 0}};
  const Philox4x32Result ones{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}};
  CHECK(philox_uniform_f64(zeros) == 0.0);
  CHECK(philox_uniform_f64(ones) == 1.0 - 0x1p-53);
  CHECK(philox_uniform_bits<24>(ones) == 1.0 - 0x1p-24);
  CHECK(static_cast<float>(philox_uniform_bits<24>(ones)) < 1.0f);
  CHECK(philox_uniform_bits<11>(ones) == 1.0 - 0x1p-11);
  CHECK(philox_uniform_bits<8>(ones) == 1.0 - 0x1p-8);
  CHECK(philox_uniform_bits<53>(ones) == 1.0 - 0x1p-53);
  // The top bits are the ones used: only the highest bit set gives exactly one half.
  CHECK(philox_uniform_bits<8>(Philox4x32Result{{0, 0x80000000u, 0, 0}}) == 0.5);
  CHECK(philox_uniform_bits<8>(Philox4x32Result{{0xffffffffu, 0x00ffffffu, 0, 0}}) == 0.0);
  // u1 of Box-Muller is never 0, so the normal of an all-zero block is finite.
  CHECK(std::isfinite(philox_normal(zeros)));
  CHECK(std::isfinite(philox_normal(ones)));

  int bad = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const Philox4x32Result r = philox_element_block(42, 7, i);
    const double u24 = philox_uniform_bits<24>(r);
    const float f24 = static_cast<float>(u24);
    if (static_cast<double>(f24) != u24 || !(f24 < 1.0f) || !(f24 >= 0.0f)) ++bad;
    if (!on_grid_below_one(u24, 24)) ++bad;
    if (!on_grid_below_one(philox_uniform_bits<11>(r), 11)) ++bad;
    if (!on_grid_below_one(philox_uniform_bits<8>(r), 8)) ++bad;
    if (!on_grid_below_one(philox_uniform_f64(r), 53)) ++bad;
    // Coarser uniforms are truncations of finer ones from the same block.
    if (std::ldexp(std::floor(std::ldexp(philox_uniform_f64(r), 11)), -11) != philox_uniform_bits<11>(r)) ++bad;
    if (!std::isfinite(philox_normal(r))) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("Philox: moments of uniforms and normals") {
  constexpr int n = 1'000'000;
  const uint64_t seed = 20240601;
  double su = 0, suu = 0, sn = 0, snn = 0, s3 = 0, s4 = 0;
  int below_zero = 0;
  for (int i = 0; i < n; ++i) {
    const Philox4x32Result r = philox_element_block(seed, 0, static_cast<uint64_t>(i));
    const double u = philox_uniform_f64(r);
    su += u;
    suu += u * u;
    const double z = philox_normal(r);
    sn += z;
    snn += z * z;
    s3 += z * z * z;
    s4 += z * z * z * z;
    below_zero += z < 0;
  }
  const double mean_u = su / n;
  const double var_u = suu / n - mean_u * mean_u;
  CHECK(mean_u == doctest::Approx(0.5).epsilon(0.005));
  CHECK(var_u == doctest::Approx(1.0 / 12.0).epsilon(0.01));

  const double mean_z = sn / n;
  const double var_z = snn / n - mean_z * mean_z;
  // Standard errors at n = 1e6: mean 1e-3, variance ~1.4e-3, skew ~2.4e-3, kurtosis ~5e-3.
  CHECK(std::fabs(mean_z) < 0.005);
  CHECK(var_z == doctest::Approx(1.0).epsilon(0.01));
  CHECK(std::fabs(s3 / n) < 0.02);
  CHECK(s4 / n == doctest::Approx(3.0).epsilon(0.02));
  CHECK(static_cast<double>(below_zero) / n == doctest::Approx(0.5).epsilon(0.005));
}

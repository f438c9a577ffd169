// The vectorized fp32 <-> bf16 / fp16 conversions (backends/cpu/convert_loops.h): bit for bit
// the conversions of core/bfloat16.h and core/half.h, over every 16-bit pattern one way and
// random fp32 bit patterns plus the rounding edges the other, at lengths that leave tails; and
// copy_ (`to`) between those dtypes, contiguous, equal to them.
#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "anatomy/backends/cpu/convert_loops.h"
#include "test_util.h"

using namespace anatomy;

namespace {

// fp32 arguments: random bit patterns (NaNs with payloads, subnormals, everything), the values
// on both sides of each rounding tie and overflow edge, and the specials.
std::vector<float> float_arguments() {
  std::vector<float> x;
  std::mt19937 gen(5);
  for (int i = 0; i < 300000; ++i) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(gen())));
  const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffbfffffu,
                            0x00000001u, 0x007fffffu, 0x00800000u, 0x33000000u, 0x33000001u, 0x38800000u, 0x387fffffu,
                            0x477fefffu, 0x477ff000u, 0x477ff001u, 0x7f7fffffu, 0x3f808000u, 0x3f818000u, 0x3f800fffu,
                            0x3f801000u, 0x3f803000u, 0x7f7f8000u, 0x7f7f7fffu};
  for (uint32_t e : edges) {
    for (uint32_t d : {0u, 1u}) {
      x.push_back(std::bit_cast<float>(e + d));
      x.push_back(std::bit_cast<float>((e + d) ^ 0x80000000u));
    }
  }
  return x;
}

uint16_t bits_of(Half h) { return h.x; }
uint16_t bits_of(BFloat16 b) { return b.x; }

template <typename H>
void check_pair(DType narrow) {
  const cpu::ConvertLoop down = cpu::convert_loop(DType::Float32, narrow);
  const cpu::ConvertLoop up = cpu::convert_loop(narrow, DType::Float32);
  if (down == nullptr || up == nullptr) {
    MESSAGE("no vectorized " << name(narrow) << " conversion on this CPU");
    return;
  }
  const std::vector<float> x = float_arguments();
  for (size_t n : {x.size(), x.size() - 3, size_t{7}, size_t{1}}) {
    std::vector<uint16_t> got(n);
    down(x.data(), got.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(std::bit_cast<uint32_t>(x[i]));
      CHECK(got[i] == bits_of(H(x[i])));
    }
  }
  std::vector<uint16_t> every(65536);
  for (uint32_t i = 0; i < 65536; ++i) every[i] = static_cast<uint16_t>(i);
  for (size_t n : {every.size(), every.size() - 5}) {
    std::vector<float> got(n);
    up(every.data(), got.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(every[i]);
      const float want = static_cast<float>(H::from_bits(every[i]));
      CHECK(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want));
    }
  }
}

}  // namespace

TEST_CASE("convert loops: fp32 <-> bf16 bit for bit as core/bfloat16.h converts") {
  check_pair<BFloat16>(DType::BFloat16);
}

TEST_CASE("convert loops: fp32 <-> fp16 bit for bit as core/half.h converts") { check_pair<Half>(DType::Float16); }

TEST_CASE("convert loops: to() between fp32 and the 16-bit floats gives the element-wise conversions") {
  manual_seed(9);
  const Tensor x = randn({1000, 37}) * 1e4;  // overflows fp16 here and there
  for (DType narrow : {DType::BFloat16, DType::Float16}) {
    CAPTURE(name(narrow));
    const Tensor down = x.to(narrow);
    const Tensor back = down.to(DType::Float32);
    const float* in = x.data_ptr<float>();
    const float* round_trip = back.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float want =
          narrow == DType::BFloat16 ? static_cast<float>(BFloat16(in[i])) : static_cast<float>(Half(in[i]));
      CHECK(std::bit_cast<uint32_t>(round_trip[i]) == std::bit_cast<uint32_t>(want));
    }
  }
}

// Adversarial argument draws (generator.h). The proportions keep most calls valid enough to
// reach the size, stride and offset arithmetic behind an operator's first checks.
#include "generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace anatomy_fuzz {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Values at which size, stride and offset arithmetic overflows, or which a check forgets. No
// value between 2^31 and 2^40: as a size that would be a real allocation of gigabytes, not a
// refused one, and the fuzzer must stay fast and small.
const std::vector<int64_t> kExtremes = {
    kMax, kMin, kMax - 1, kMin + 1,    int64_t{1} << 62, -(int64_t{1} << 62), int64_t{1} << 61, int64_t{1} << 40,
    -1,   -2,   kMax / 2, kMax / 3 + 1};

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t running = 1;
  for (size_t k = sizes.size(); k-- > 0;) {
    st[k] = running;
    running *= std::max<int64_t>(sizes[k], 1);
  }
  return st;
}

}  // namespace

Gen Gen::for_iteration(uint64_t seed, uint64_t iteration) {
  uint64_t s = seed;
  uint64_t a = splitmix64(s);
  s = a ^ (iteration * 0xD1B54A32D192ED03ULL);
  return Gen(splitmix64(s));
}

uint64_t Gen::next() { return splitmix64(state_); }

int64_t Gen::uniform(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  const uint64_t r = span == 0 ? next() : next() % span;
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
}

bool Gen::chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

int64_t Gen::extreme() { return pick(kExtremes); }

int64_t Gen::dim(int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (chance(0.75)) return uniform(-n, n - 1);
  if (chance(0.5)) return chance(0.5) ? ndim : -ndim - 1;
  return extreme();
}

int64_t Gen::index(int64_t n) {
  if (n > 0 && chance(0.7)) return uniform(-n, n - 1);
  if (chance(0.5)) return chance(0.5) ? n : -n - 1;
  return chance(0.2) ? (int64_t{1} << 31) : extreme();
}

int64_t Gen::length(int64_t n) {
  if (chance(0.7)) return uniform(0, std::max<int64_t>(n, 0));
  if (chance(0.5)) return chance(0.5) ? n + 1 : -1;
  return extreme();
}

int64_t Gen::count() {
  if (chance(0.75)) return uniform(0, 4);
  if (chance(0.3)) return uniform(-2, -1);
  return extreme();
}

int64_t Gen::any_int() { return chance(0.65) ? uniform(-4, 4) : extreme(); }

std::vector<int64_t> Gen::shape(int64_t max_dim) {
  static const std::vector<int64_t> kDims = {0, 1, 1, 2, 2, 2, 3, 3, 4};
  int64_t nd = std::min(pick(kDims), max_dim);
  std::vector<int64_t> s(static_cast<size_t>(nd));
  for (int64_t& v : s) v = chance(0.1) ? 0 : chance(0.28) ? 1 : uniform(2, 4);
  return s;
}

std::vector<int64_t> Gen::factory_shape() {
  std::vector<int64_t> s = shape();
  for (int64_t& v : s) {
    if (chance(0.12)) v = extreme();
  }
  return s;
}

std::vector<int64_t> Gen::dims(int64_t ndim) {
  std::vector<int64_t> d;
  const int64_t k = uniform(0, std::max<int64_t>(ndim, 1));
  for (int64_t j = 0; j < k; ++j) {
    if (chance(0.85) && ndim > 0) {
      int64_t v = uniform(0, ndim - 1);
      if (std::find(d.begin(), d.end(), v) != d.end() && chance(0.8)) continue;
      d.push_back(chance(0.3) ? v - ndim : v);
    } else {
      d.push_back(dim(ndim));
    }
  }
  return d;
}

std::vector<int64_t> Gen::permutation(int64_t ndim) {
  std::vector<int64_t> p(static_cast<size_t>(std::max<int64_t>(ndim, 0)));
  for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<int64_t>(k);
  for (size_t k = p.size(); k > 1; --k)
    std::swap(p[k - 1], p[static_cast<size_t>(uniform(0, static_cast<int64_t>(k) - 1))]);
  if (chance(0.2)) {
    switch (uniform(0, 3)) {
      case 0:
        if (!p.empty()) p[0] = p.back();
        break;  // a repeated dim
      case 1:
        p.push_back(dim(ndim));
        break;  // one too many
      case 2:
        if (!p.empty()) p.pop_back();
        break;  // one too few
      default:
        if (!p.empty()) p[static_cast<size_t>(uniform(0, ndim - 1))] = extreme();
        break;
    }
  } else if (chance(0.3) && !p.empty()) {
    p[0] -= ndim;  // the same dim, counted from the end
  }
  return p;
}

anatomy::DType Gen::dtype() {
  if (chance(0.4)) return anatomy::DType::Float32;
  if (chance(0.25)) return anatomy::DType::Int64;
  return static_cast<anatomy::DType>(uniform(0, anatomy::kNumDTypes - 1));
}

std::optional<anatomy::DType> Gen::maybe_dtype() {
  if (chance(0.6)) return std::nullopt;
  return dtype();
}

Number Gen::scalar(anatomy::DType like) {
  static const std::vector<double> kFloats = {0.0, 1.0, -1.0, 0.5, 2.5, -3.25};
  static const std::vector<double> kOdd = {std::nan(""), INFINITY, -INFINITY, 1e300, -1e300, 1e-300, 65504.0, 3.4e38};
  if (chance(0.1)) return any_number();
  if (anatomy::is_floating(like)) return Number::of_float(chance(0.75) ? pick(kFloats) : pick(kOdd));
  if (like == anatomy::DType::Bool) return Number::of_bool(chance(0.5));
  return Number::of_int(chance(0.8) ? uniform(-5, 5) : extreme());
}

Number Gen::any_number() {
  switch (uniform(0, 2)) {
    case 0:
      return Number::of_bool(chance(0.5));
    case 1:
      return Number::of_int(any_int());
    default:
      return scalar(anatomy::DType::Float64);
  }
}

TensorSpec Gen::tensor(anatomy::DType dtype, std::vector<int64_t> sizes) {
  TensorSpec t;
  t.dtype = dtype;
  t.sizes = std::move(sizes);
  const size_t nd = t.sizes.size();
  if (chance(0.5)) {
    // A layout over a base storage: dims in a permuted memory order, each stepped (as a slice
    // with a step leaves it), some broadcast (stride 0, as expand leaves it), at an offset.
    std::vector<int64_t> order = permutation(static_cast<int64_t>(nd));
    if (order.size() != nd || !chance(0.5)) {
      order.resize(nd);
      for (size_t k = 0; k < nd; ++k) order[k] = static_cast<int64_t>(k);
    }
    const int64_t n = std::max<int64_t>(static_cast<int64_t>(nd), 1);
    for (int64_t& o : order) o = ((o % n) + n) % n;
    std::vector<int64_t> strides(nd, -1);
    int64_t running = 1;
    for (size_t k = nd; k-- > 0;) {
      const size_t d = static_cast<size_t>(order[k]);
      if (strides[d] != -1) continue;  // a repeated dim in the drawn order: keep the first
      const int64_t step = chance(0.3) ? uniform(2, 3) : 1;
      strides[d] = running * step;
      running = strides[d] * std::max<int64_t>(t.sizes[d], 1);
    }
    for (size_t d = 0; d < nd; ++d) {
      if (strides[d] == -1) {
        strides[d] = running;
        running *= std::max<int64_t>(t.sizes[d], 1);
      }
      if (chance(0.2)) strides[d] = 0;
    }
    t.offset = chance(0.4) ? uniform(1, 3) : 0;
    if (strides != contiguous_strides(t.sizes) || t.offset != 0) t.strides = strides;
    if (!t.strides && t.offset != 0) t.strides = strides;
  }
  if (chance(0.1)) {
    t.fill = TensorSpec::Fill::Constant;
    t.values = {chance(0.5) ? Number::of_int(uniform(0, 1)) : scalar(dtype)};
  } else if (chance(0.06)) {
    t.fill = TensorSpec::Fill::Values;
    for (int64_t k = uniform(1, 4); k > 0; --k) t.values.push_back(scalar(dtype));
  }
  t.requires_grad = (dtype == anatomy::DType::Float32 || dtype == anatomy::DType::Float64) && chance(0.15);
  return t;
}

TensorSpec Gen::tensor() { return tensor(dtype(), shape()); }

TensorSpec Gen::index_tensor(int64_t n, std::vector<int64_t> sizes, bool negative_ok) {
  anatomy::DType dt = anatomy::DType::Int64;
  if (chance(0.08)) dt = anatomy::DType::Int32;
  else if (chance(0.06))
    dt = pick(std::vector<anatomy::DType>{anatomy::DType::Float32, anatomy::DType::UInt8, anatomy::DType::Int8,
                                          anatomy::DType::Bool});
  TensorSpec t = tensor(dt, std::move(sizes));
  t.requires_grad = false;
  t.fill = TensorSpec::Fill::Values;
  t.values.clear();
  for (int64_t k = uniform(1, 6); k > 0; --k) {
    const bool in_range = n > 0 && chance(0.8);
    t.values.push_back(Number::of_int(in_range ? uniform(negative_ok ? -n : 0, n - 1) : index(n)));
  }
  return t;
}

TensorSpec Gen::mask_for(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s = sizes;
  for (int64_t& v : s) {
    if (chance(0.3)) v = 1;
  }
  if (!s.empty() && chance(0.2)) s.erase(s.begin(), s.begin() + uniform(1, static_cast<int64_t>(s.size())));
  if (chance(0.25)) s.insert(s.begin(), static_cast<size_t>(uniform(1, 2)), 1);  // leading 1s broadcast away
  if (chance(0.08)) s = shape();                                                 // likely not broadcastable
  anatomy::DType dt = chance(0.9)   ? anatomy::DType::Bool
                      : chance(0.5) ? anatomy::DType::UInt8
                                    : anatomy::DType::Float32;
  TensorSpec t = tensor(dt, s);
  t.requires_grad = false;
  t.fill = TensorSpec::Fill::Values;
  t.values.clear();
  for (int64_t k = uniform(1, 5); k > 0; --k) t.values.push_back(Number::of_int(uniform(0, 1)));
  return t;
}

}  // namespace anatomy_fuzz

// Inputs made from specs, and reads and snapshots that do not go through the engine's kernels
// (fixtures.h): a copy kernel that misreads a layout cannot also fool the check.
#include "fixtures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "anatomy/core/dtype_visit.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;

// Storage contents a test can tell apart: small values of both signs, every bool.
double pattern(anatomy::DType dtype, int64_t i) {
  const int64_t k = (i * 7 + 3) % 11;
  if (dtype == anatomy::DType::Bool) return i % 3 == 0;
  if (dtype == anatomy::DType::UInt8) return static_cast<double>(k);
  return anatomy::is_floating(dtype) ? static_cast<double>(k - 5) * 0.5 : static_cast<double>(k - 5);
}

// A number as an element of type T without the undefined behaviour of casting a NaN or an
// out-of-range double to an integer (the spec's intent: saturate).
template <typename T>
T to_element(const Number& n) {
  if constexpr (std::is_same_v<T, bool>) {
    return n.kind == Number::Kind::Float ? n.d != 0 : n.i != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (n.kind != Number::Kind::Float) return static_cast<T>(n.i);
    if (std::isnan(n.d)) return T(0);
    if (n.d <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (n.d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(n.d);
  } else {
    return anatomy::convert<T>(n.kind == Number::Kind::Float ? n.d : static_cast<double>(n.i));
  }
}

void fill(const Tensor& t, const TensorSpec& spec, int64_t count) {
  anatomy::visit_dtype(spec.dtype, "fuzz fill", [&]<typename T>() {
    T* p = static_cast<T*>(t.storage()->data());
    for (int64_t i = 0; i < count; ++i) {
      if (spec.fill == TensorSpec::Fill::Pattern) {
        p[i] = to_element<T>(Number::of_float(pattern(spec.dtype, i)));
      } else {
        p[i] = to_element<T>(spec.values[static_cast<size_t>(i) % spec.values.size()]);
      }
    }
  });
}

}  // namespace

Tensor materialize(const TensorSpec& spec) {
  const size_t nd = spec.sizes.size();
  if (nd > 8) throw BadCase{"a tensor spec has more than 8 dims"};
  if (spec.strides && spec.strides->size() != nd) throw BadCase{"a tensor spec has strides of another rank"};
  if (spec.offset < 0) throw BadCase{"a tensor spec has a negative offset"};
  if ((spec.fill != TensorSpec::Fill::Pattern) && spec.values.empty()) throw BadCase{"a tensor spec has no values"};
  __int128 numel = 1, hi = spec.offset;
  std::vector<int64_t> strides(nd);
  int64_t running = 1;
  for (size_t k = nd; k-- > 0;) {
    if (spec.sizes[k] < 0) throw BadCase{"a tensor spec has a negative size"};
    strides[k] = spec.strides ? (*spec.strides)[k] : running;
    if (strides[k] < 0) throw BadCase{"a tensor spec has a negative stride"};
    numel *= spec.sizes[k];
    if (numel > std::numeric_limits<int64_t>::max()) throw BadCase{"a tensor spec has more than 2^63 elements"};
    if (spec.sizes[k] > 0) hi += static_cast<__int128>(spec.sizes[k] - 1) * strides[k];
    running = static_cast<int64_t>(std::min<__int128>(
        static_cast<__int128>(running) * std::max<int64_t>(spec.sizes[k], 1), std::numeric_limits<int64_t>::max()));
  }
  // The base holds every reachable element (none past the offset when the view is empty).
  const __int128 storage = numel == 0 ? spec.offset : hi + 1;
  if (storage > (int64_t{1} << 24)) throw BadCase{"a tensor spec needs a storage of more than 2^24 elements"};
  if (!spec.strides && spec.offset == 0 && numel > (int64_t{1} << 24)) throw BadCase{"a tensor spec is too large"};
  Tensor t;
  if (!spec.strides && spec.offset == 0) {
    t = anatomy::empty(spec.sizes, spec.dtype);
    fill(t, spec, static_cast<int64_t>(numel));
  } else {
    Tensor base = anatomy::empty({static_cast<int64_t>(storage)}, spec.dtype);
    fill(base, spec, static_cast<int64_t>(storage));
    t = base.as_strided(spec.sizes, strides, spec.offset);
  }
  if (spec.requires_grad) {
    if (!spec.strides && spec.offset == 0) {
      t.requires_grad_(true);
    } else {
      t = t.detach();  // a leaf of its own: the base it views does not take part in autograd
      t.requires_grad_(true);
    }
  }
  return t;
}

std::vector<int64_t> positions(const Tensor& t) {
  std::vector<int64_t> out;
  if (t.numel() == 0) return out;
  out.reserve(static_cast<size_t>(t.numel()));
  const int64_t nd = t.dim();
  std::vector<int64_t> index(static_cast<size_t>(nd), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t pos = t.storage_offset();
    for (int64_t d = 0; d < nd; ++d) pos += index[static_cast<size_t>(d)] * t.strides()[static_cast<size_t>(d)];
    out.push_back(pos);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < t.sizes()[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

double read_element(const Tensor& t, int64_t pos) {
  return anatomy::visit_dtype(t.dtype(), "fuzz read", [&]<typename T>() -> double {
    const char* base = static_cast<const char*>(t.storage()->data());
    if constexpr (std::is_same_v<T, bool>) {
      return base[pos] != 0;  // a byte, so a stray value in a bool tensor reads as true, not UB
    } else {
      T v;
      std::memcpy(&v, base + pos * static_cast<int64_t>(sizeof(T)), sizeof(T));
      return anatomy::convert<double>(v);
    }
  });
}

Snapshot snapshot(const Tensor& t) {
  Snapshot s;
  s.sizes.assign(t.sizes().begin(), t.sizes().end());
  s.strides.assign(t.strides().begin(), t.strides().end());
  s.offset = t.storage_offset();
  s.dtype = t.dtype();
  s.has_version = !t.is_inference();
  if (s.has_version) s.version = t.version();
  s.requires_grad = t.requires_grad();
  s.storage = t.storage().get();
  s.nbytes = t.storage()->nbytes();
  if (s.nbytes <= (size_t{64} << 20)) {
    const auto* p = static_cast<const unsigned char*>(t.storage()->data());
    s.bytes.assign(p, p + s.nbytes);
  }
  return s;
}

std::string changes(const Tensor& t, const Snapshot& s, bool writable) {
  if (std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) != s.sizes) {
    return fmt::format("sizes changed from [{}] to [{}]", fmt::join(s.sizes, ", "), fmt::join(t.sizes(), ", "));
  }
  if (std::vector<int64_t>(t.strides().begin(), t.strides().end()) != s.strides) {
    return fmt::format("strides changed from [{}] to [{}]", fmt::join(s.strides, ", "), fmt::join(t.strides(), ", "));
  }
  if (t.storage_offset() != s.offset) return fmt::format("offset changed from {} to {}", s.offset, t.storage_offset());
  if (t.dtype() != s.dtype) return "dtype changed";
  if (t.storage().get() != s.storage || t.storage()->nbytes() != s.nbytes) return "storage replaced";
  if (writable) return "";  // an in-place op may also make self require grad (from its other inputs)
  if (t.requires_grad() != s.requires_grad) return "requires_grad changed";
  if (s.has_version && t.version() != s.version)
    return fmt::format("version changed from {} to {}", s.version, t.version());
  if (!s.bytes.empty() && std::memcmp(s.bytes.data(), t.storage()->data(), s.nbytes) != 0) {
    size_t k = 0;
    const auto* p = static_cast<const unsigned char*>(t.storage()->data());
    while (k < s.nbytes && p[k] == s.bytes[k]) ++k;
    return fmt::format("values changed (storage byte {} of {})", k, s.nbytes);
  }
  return "";
}

std::string changes_outside(const Tensor& t, const Snapshot& s) {
  if (s.bytes.empty() || t.storage()->nbytes() != s.nbytes) return "";
  std::vector<bool> own(s.nbytes, false);
  const size_t item = t.element_size();
  for (int64_t pos : positions(t))
    std::fill_n(own.begin() + static_cast<int64_t>(static_cast<size_t>(pos) * item), item, true);
  const auto* p = static_cast<const unsigned char*>(t.storage()->data());
  for (size_t k = 0; k < s.nbytes; ++k) {
    if (!own[k] && p[k] != s.bytes[k]) {
      return fmt::format("storage byte {} changed, outside the elements of self (element {} of the storage)", k,
                         k / item);
    }
  }
  return "";
}

}  // namespace anatomy_fuzz

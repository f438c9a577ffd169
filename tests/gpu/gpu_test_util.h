// Shared helpers of the GPU tests: the skip macro, dtype lists, sample data and exact
// comparisons through the CPU.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/cuda.h"

// First line of every GPU test: without a CUDA device the test prints the skip marker and
// returns, and CTest (SKIP_REGULAR_EXPRESSION "\[anatomy-skip\]") reports it as skipped rather
// than passed.
#define ANATOMY_REQUIRE_GPU()                                                                                      \
  do {                                                                                                             \
    if (::anatomy::cuda::device_count() == 0) {                                                                    \
      std::cout << "[anatomy-skip] no CUDA device (" << ::anatomy::cuda::unavailable_reason() << ")" << std::endl; \
      return;                                                                                                      \
    }                                                                                                              \
  } while (0)

namespace anatomy::gpu_test {

inline const Device kCuda{"cuda:0"};

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> dtypes = {
#define ANATOMY_GPU_TEST_DTYPE(type, name, short_name, long_name) DType::name,
      ANATOMY_FORALL_DTYPES(ANATOMY_GPU_TEST_DTYPE)
#undef ANATOMY_GPU_TEST_DTYPE
  };
  return dtypes;
}

// Random CPU values that every dtype holds and every conversion keeps defined: [0, 1) for
// floats, integers in [0, 100) (0 and 1 for bool). No negatives, since a negative float cast to
// uint8 is undefined behaviour.
// The floating dtypes, narrowest first.
inline const std::vector<DType> kFloatingDtypes = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// How close a CUDA floating result must be to the CPU's, relative. fp16 and bf16 are computed in
// fp32 and rounded once, so their bound is the dtype's rounding; fp32's and fp64's depend on how
// differently the two sides order the arithmetic, which the caller knows.
inline double float_rtol(DType d, double fp32, double fp64) {
  switch (d) {
    case DType::Float16:
      return 4e-3;
    case DType::BFloat16:
      return 3e-2;
    case DType::Float32:
      return fp32;
    default:
      return fp64;
  }
}

inline Tensor sample(IntArrayRef sizes, DType dtype) {
  if (is_floating(dtype)) return rand(sizes, dtype);
  return randint(0, dtype == DType::Bool ? 2 : 100, sizes, dtype);
}

// The bytes of t's elements in row-major order, read on the CPU.
inline std::vector<unsigned char> bytes_of(const Tensor& t) {
  Tensor host = t.cpu().contiguous();
  std::vector<unsigned char> bytes(host.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.data_ptr(), bytes.size());
  return bytes;
}

// Same sizes, dtype and bit patterns (what a copy must preserve exactly).
inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() && bytes_of(a) == bytes_of(b);
}

// The values of t as doubles, row-major (for checks against literal numbers).
inline std::vector<double> values_of(const Tensor& t) {
  Tensor host = t.cpu().to(DType::Float64).contiguous();
  const double* p = static_cast<const double*>(host.data_ptr());
  return std::vector<double>(p, p + host.numel());
}

// Like same_values, except that any NaN matches any NaN (and -0 only -0): CUDA's arithmetic
// returns its canonical NaN where the CPU's keeps an input NaN's payload.
inline bool same_numbers(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  if (!is_floating(a.dtype())) return same_values(a, b);
  const std::vector<double> x = values_of(a), y = values_of(b);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (!(x[i] == y[i] && std::signbit(x[i]) == std::signbit(y[i]))) return false;
  }
  return true;
}

// "" when got and want (any devices) have one shape and values within rtol * (|want| + 1), NaN
// matching NaN and infinities matching exactly; else the first difference.
inline std::string close_values(const Tensor& got, const Tensor& want, double rtol) {
  if (got.sizes() != want.sizes()) return "shape differs";
  const std::vector<double> g = values_of(got), w = values_of(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (!std::isfinite(w[i]) || !std::isfinite(g[i])) {
      if (g[i] != w[i]) return fmt::format("element {}: {} != {}", i, g[i], w[i]);
      continue;
    }
    if (std::abs(g[i] - w[i]) > rtol * (std::abs(w[i]) + 1)) {
      return fmt::format("element {}: {} != {} (rtol {})", i, g[i], w[i], rtol);
    }
  }
  return "";
}

// Sets the sync-debug mode for a scope (tests must not leave it on): in Error mode, a call that
// makes the host wait for the device throws.
struct SyncDebugScope {
  explicit SyncDebugScope(cuda::SyncDebugMode mode) { cuda::set_sync_debug_mode(mode); }
  ~SyncDebugScope() { cuda::set_sync_debug_mode(cuda::SyncDebugMode::Off); }
};

// The message of the IndexError that the next wait for the device raises ("" when none does):
// a bad index in device memory is reported there (Note [Bad indices on the device]).
inline std::string pending_index_error() {
  try {
    cuda::synchronize();
  } catch (const IndexError& e) {
    return e.what();
  }
  return "";
}

// The same view on the GPU: a storage as large as the source's reach, the same strides and
// storage offset, filled from the CPU tensor.
inline Tensor to_cuda_same_layout(const Tensor& t) {
  if (!t.defined() || t.impl()->is_wrapped_number()) return t;
  // An expanded (stride-0) view cannot be written through: move the values it reads, then
  // expand again on the GPU.
  DimVector base_sizes(t.sizes());
  bool expanded = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) {
      base_sizes[d] = 1;
      expanded = true;
    }
  }
  if (expanded) return to_cuda_same_layout(t.as_strided(base_sizes, t.strides(), t.storage_offset())).expand(t.sizes());
  const int64_t reach = required_storage_elements(t.sizes(), t.strides(), "to_cuda_same_layout");
  Tensor storage = empty({reach + t.storage_offset()}, TensorOptions().dtype(t.dtype()).device(kCuda));
  Tensor view = storage.as_strided(t.sizes(), t.strides(), t.storage_offset());
  view.copy_(t);
  return view;
}

}  // namespace anatomy::gpu_test

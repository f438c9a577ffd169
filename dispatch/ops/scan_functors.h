// The scans' arithmetic, written once for every backend: the running value's type, its
// conversions, and the combine op of each scan, as host-device code that the CPU loops
// (backends/cpu/scan_cpu.cpp, scan_extrema_cpu.cpp) and the CUDA kernels (backends/cuda/scan/)
// both run, so both backends compute the same values. Includes nothing that needs fmt.
//
// A combine op is associative (the CUDA scans regroup it) and takes the earlier value first:
//   A operator()(A earlier, A later) const;
//   static A identity();                 what pads a partial chunk (only after a row's last element)
//   template <typename T> takes_v;       whether the op is defined for element type T
#pragma once

#include <cstdint>
#include <type_traits>

#include "anatomy/core/convert.h"
#include "anatomy/dispatch/ops/binary_functors.h"
#include "anatomy/dispatch/ops/reduce_functors.h"

namespace anatomy::scan {

// What cumsum, cumprod and logcumsumexp keep their running value in, as PyTorch's CPU kernels
// do: float for fp16/bf16, double for fp32 (each output is rounded once from it, so long rows do
// not drift), and for integers and bool a uint64 whose wrapping arithmetic gives two's-complement
// results without signed-overflow UB.
template <typename T>
using scan_acc_t =
    std::conditional_t<is_reduced_float_v<T>, float, std::conditional_t<std::is_integral_v<T>, uint64_t, double>>;

template <typename T>
ANATOMY_HOST_DEVICE inline scan_acc_t<T> to_scan_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return convert<scan_acc_t<T>>(v);
}

template <typename T>
ANATOMY_HOST_DEVICE inline T from_scan_acc(scan_acc_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return convert<T>(v);
}

struct SumOp {
  template <typename T>
  static constexpr bool takes_v = true;
  template <typename A>
  ANATOMY_HOST_DEVICE A operator()(A a, A b) const {
    return a + b;
  }
  template <typename A>
  ANATOMY_HOST_DEVICE static A identity() {
    return A(0);
  }
};

struct ProdOp {
  template <typename T>
  static constexpr bool takes_v = true;
  template <typename A>
  ANATOMY_HOST_DEVICE A operator()(A a, A b) const {
    return a * b;
  }
  template <typename A>
  ANATOMY_HOST_DEVICE static A identity() {
    return A(1);
  }
};

// logcumsumexp: log(exp(a) + exp(b)) as logaddexp computes it (max + log1p(exp(-|a - b|)); -inf
// with -inf is -inf, +inf wins over everything but NaN, NaN propagates); identity -inf.
struct LogAddExpOp {
  template <typename T>
  static constexpr bool takes_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
  template <typename A>
  ANATOMY_HOST_DEVICE A operator()(A a, A b) const {
    return elementwise::LogaddexpFn<A>{}(a, b);
  }
  template <typename A>
  ANATOMY_HOST_DEVICE static A identity() {
    return -elementwise::infinity<A>();
  }
};

// cummax / cummin: the running extremum, in the type values compare in (float for fp16/bf16),
// and the index along the row where it was taken.
template <typename T>
struct ValueIndex {
  reduction::cmp_t<T> value;
  int64_t index;
};

template <typename T>
ANATOMY_HOST_DEVICE inline ValueIndex<T> value_index(T v, int64_t i) {
  return {convert<reduction::cmp_t<T>>(v), i};
}

// PyTorch's rule: the later element replaces the running one when it is NaN, or when neither is
// NaN and it is >= (cummax) / <= (cummin), so ties take the latest index and a NaN, once seen,
// stays (each later NaN moving the index). That is: unless the earlier one is strictly better.
// It picks the greatest of (is NaN, value, index) in lexicographic order, so it is associative.
template <bool IsMax>
struct ExtremumOp {
  template <typename T>
  static constexpr bool takes_v = true;
  template <typename T>
  ANATOMY_HOST_DEVICE ValueIndex<T> operator()(ValueIndex<T> earlier, ValueIndex<T> later) const {
    return reduction::better<IsMax>(earlier.value, later.value) ? earlier : later;
  }
  template <typename A>
  ANATOMY_HOST_DEVICE static A identity() {
    return {reduction::worst<IsMax, decltype(A::value)>(), -1};
  }
};

}  // namespace anatomy::scan

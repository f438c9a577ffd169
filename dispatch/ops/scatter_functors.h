// How a scatter writes one value into its target, written once for every backend: the CPU's
// scatter loops (backends/cpu/index_utils.h) and the CUDA scatter kernels
// (backends/cuda/index/index_scatter.cu, and segmented_combine.h of the sorted path) all
// instantiate scatter_combine, so repeated indices combine to the same values on both (the sorted
// path combines partial results: every mode is associative, floating sums and products up to
// rounding). The modes are scatter_'s plain write, scatter_add_'s and
// index_put_(accumulate)'s sum, and the reductions of scatter_reduce_ (mean is a sum divided
// afterwards, dispatch/ops/scatter_registration.h). The arithmetic is the element-wise binary
// functors' (add, mul, maximum, minimum): fp16/bf16 through float, integers wrapping, bool as
// or/and, NaN propagating through amax and amin. Includes nothing that needs fmt (.cu files take it).
#pragma once

#include <cstdint>

#include "anatomy/dispatch/ops/binary_functors.h"

namespace anatomy {

enum class ScatterMode : uint8_t { Assign, Add, Multiply, Max, Min };

template <ScatterMode Mode, typename T>
ANATOMY_HOST_DEVICE inline T scatter_combine(T target, T value) {
  using namespace elementwise;
  if constexpr (Mode == ScatterMode::Assign) return value;
  else if constexpr (Mode == ScatterMode::Add) return AddFn<T>{{opmath_t<T>(1)}}(target, value);
  else if constexpr (Mode == ScatterMode::Multiply) return MulFn<T>{}(target, value);
  else if constexpr (Mode == ScatterMode::Max) return MaximumFn<T>{}(target, value);
  else return MinimumFn<T>{}(target, value);
}

// Calls fn with std::integral_constant<ScatterMode, mode>, so a loop is instantiated per mode.
template <typename F>
decltype(auto) visit_scatter_mode(ScatterMode mode, F&& fn) {
  switch (mode) {
    case ScatterMode::Assign:
      return fn(std::integral_constant<ScatterMode, ScatterMode::Assign>{});
    case ScatterMode::Add:
      return fn(std::integral_constant<ScatterMode, ScatterMode::Add>{});
    case ScatterMode::Multiply:
      return fn(std::integral_constant<ScatterMode, ScatterMode::Multiply>{});
    case ScatterMode::Max:
      return fn(std::integral_constant<ScatterMode, ScatterMode::Max>{});
    case ScatterMode::Min:
      break;
  }
  return fn(std::integral_constant<ScatterMode, ScatterMode::Min>{});
}

}  // namespace anatomy

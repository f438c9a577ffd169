// CUDA kernels of uniform_, normal_ and random_: one grid-stride loop in which every element
// computes its own Philox block from its index, so the numbers do not depend on the launch
// geometry and equal the CPU's (uniforms and integers bit for bit, normals to a few ulp).
//
// The affine steps use __dadd_rn and __dmul_rn: nvcc would otherwise fuse `from + span * u` into
// one fma, which rounds once where the CPU rounds twice, and the last bit would differ.
#include <type_traits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/random/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/philox.h"

namespace anatomy::cuda {
namespace {

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// The mantissa digits of a floating type, as backends/cpu/random_cpu.cpp counts them.
// (A variable, not a function: device code may read a host constexpr variable but not call a
// host constexpr function.)
template <typename T>
inline constexpr int kMantissaDigits = std::is_same_v<T, Half>       ? 11
                                       : std::is_same_v<T, BFloat16> ? 8
                                       : std::is_same_v<T, float>    ? 24
                                                                     : 53;

// convert<T>(double) and convert<T>(int64_t) of core/dtype_visit.h (which nvcc cannot include: it
// needs fmt), for the two source types the random ops convert from.
template <typename T, typename From>
__device__ __forceinline__ T to_element(From v) {
  if constexpr (std::is_same_v<T, From>) return v;
  else if constexpr (std::is_same_v<T, bool>) return v != From(0);
  else if constexpr (is_reduced_float_v<T>) return T(v);  // rounds once, as on the host
  else return static_cast<T>(v);
}

template <typename T>
struct UniformMap {
  double from, span;
  __device__ T operator()(const Philox4x32Result& r) const {
    const double u = philox_uniform_bits<kMantissaDigits<T>>(r);
    return to_element<T>(__dadd_rn(from, __dmul_rn(span, u)));
  }
};

template <typename T>
struct NormalMap {
  double mean, std;
  __device__ T operator()(const Philox4x32Result& r) const {
    return to_element<T>(__dadd_rn(mean, __dmul_rn(std, philox_normal(r))));
  }
};

template <typename T>
struct IntegerMap {
  int64_t from;
  uint64_t range;
  __device__ T operator()(const Philox4x32Result& r) const {
    const uint64_t bits = philox_u64(r);
    const uint64_t v = static_cast<uint64_t>(from) + (range == 0 ? bits : bits % range);
    return to_element<T>(static_cast<int64_t>(v));
  }
};

template <typename T, bool Contiguous, typename Map>
__global__ void random_kernel(T* data, StridedLayout<1> layout, int64_t n, PhiloxPosition pos, Map map) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if (pos.graph_state != nullptr) {  // replayed in a CUDA graph: this replay's seed and base
    pos.seed = pos.graph_state[0];
    pos.offset += pos.graph_state[1];
  }
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const T v = map(philox_element_block(pos.seed, pos.offset, static_cast<uint64_t>(i)));
    if constexpr (Contiguous) {
      data[i] = v;
    } else {
      int64_t offset[1];
      layout.offsets(i, offset);
      data[offset[0]] = v;
    }
  }
}

template <typename T, typename Map>
void launch(const RandomOutput& out, PhiloxPosition pos, Map map, cudaStream_t stream) {
  T* data = static_cast<T*>(out.data);
  if (out.contiguous) {
    random_kernel<T, true><<<grid_blocks(out.numel), kBlockThreads, 0, stream>>>(data, out.layout, out.numel, pos, map);
  } else {
    random_kernel<T, false>
        <<<grid_blocks(out.numel), kBlockThreads, 0, stream>>>(data, out.layout, out.numel, pos, map);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void unsupported(const char* launcher) {
  detail::throw_cuda_error(cudaErrorInvalidValue, launcher, __FILE__, __LINE__);
}

}  // namespace

void launch_uniform(const RandomOutput& out, PhiloxPosition pos, double from, double span, cudaStream_t stream) {
  const bool launched = dtype_switch(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      launch<T>(out, pos, UniformMap<T>{from, span}, stream);
      return true;
    }
    return false;
  });
  if (!launched) unsupported("launch_uniform: not a floating dtype");
}

void launch_normal(const RandomOutput& out, PhiloxPosition pos, double mean, double std, cudaStream_t stream) {
  const bool launched = dtype_switch(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      launch<T>(out, pos, NormalMap<T>{mean, std}, stream);
      return true;
    }
    return false;
  });
  if (!launched) unsupported("launch_normal: not a floating dtype");
}

void launch_random(const RandomOutput& out, PhiloxPosition pos, int64_t from, uint64_t range, cudaStream_t stream) {
  const bool launched = dtype_switch(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch<T>(out, pos, IntegerMap<T>{from, range}, stream);
    return true;
  });
  if (!launched) unsupported("launch_random: unknown dtype");
}

}  // namespace anatomy::cuda

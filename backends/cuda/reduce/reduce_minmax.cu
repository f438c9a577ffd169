// CUDA kernels of max, min, amax, amin (values; a NaN wins), argmax, argmin, max.dim and min.dim
// (values and the index of the first extreme element; a NaN counts as the extreme, the first NaN
// wins): backends/cpu/reduce_minmax_cpu.cpp's ops on the device, for every dtype. fp16/bf16
// compare in fp32.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
using cmp_t = opmath_t<T>;

// `after` is a better extreme than `before` (max: larger; min: smaller); NaN beats everything.
template <bool IsMax, typename V>
__device__ __forceinline__ bool better(V after, V before) {
  if (is_nan_value(before)) return false;
  if (is_nan_value(after)) return true;
  return IsMax ? after > before : after < before;
}

// The identity: nothing is worse.
template <bool IsMax, typename V>
__device__ __forceinline__ V worst() {
  if constexpr (std::is_same_v<V, bool>) {
    return !IsMax;
  } else if constexpr (std::is_floating_point_v<V>) {
    return IsMax ? -infinity<V>() : infinity<V>();
  } else if constexpr (std::is_signed_v<V>) {
    // Two's complement: the lowest value is the top bit alone, the highest all other bits.
    using U = std::make_unsigned_t<V>;
    const U top = static_cast<U>(U(1) << (sizeof(V) * 8 - 1));
    return IsMax ? static_cast<V>(top) : static_cast<V>(static_cast<U>(~top));
  } else {
    return IsMax ? V(0) : static_cast<V>(~V(0));
  }
}

template <typename T, bool IsMax>
struct ValueOp {
  using acc_t = cmp_t<T>;
  T* out;
  __device__ acc_t identity() const { return worst<IsMax, acc_t>(); }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return combine(a, convert<acc_t>(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return better<IsMax>(b, a) ? b : a; }
  __device__ void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

template <typename V>
struct ValueIndex {
  V value;
  int64_t index;  // -1: no element yet
};

template <typename T, bool IsMax>
struct IndexOp {
  using acc_t = ValueIndex<cmp_t<T>>;
  T* values;  // null for argmax / argmin
  int64_t* indices;
  __device__ acc_t identity() const { return {worst<IsMax, cmp_t<T>>(), -1}; }
  __device__ acc_t step(acc_t a, T x, int64_t i) const { return combine(a, {convert<cmp_t<T>>(x), i}); }
  // Partials arrive in any order (threads interleave the indices): ties go to the smaller index.
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (better<IsMax>(b.value, a.value)) return b;
    if (better<IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;  // equal, or both NaN
  }
  __device__ void write(int64_t o, acc_t a) const {
    if (values) values[o] = convert<T>(a.value);
    indices[o] = a.index;
  }
};

template <typename T, bool IsMax>
void launch_extreme(const ReduceGeometry& g, const ReduceBuffers& b, cudaStream_t stream) {
  T* values = static_cast<T*>(b.values);
  if (b.indices) {
    launch_reduce<T>(g, b.input, b.scratch, IndexOp<T, IsMax>{values, static_cast<int64_t*>(b.indices)}, stream);
  } else {
    launch_reduce<T>(g, b.input, b.scratch, ValueOp<T, IsMax>{values}, stream);
  }
}

}  // namespace

void launch_reduce_extreme(ExtremeReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == ExtremeReduceOp::Max) launch_extreme<T, true>(g, b, stream);
    else launch_extreme<T, false>(g, b, stream);
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_extreme: unknown dtype");
}

}  // namespace anatomy::cuda

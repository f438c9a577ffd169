// CUDA kernels of sum, mean and prod (backends/cpu/reduce_sum_cpu.cpp's ops on the device):
// fp16/bf16/fp32 accumulate in fp32, fp64 in fp64, integers and bool in int64 with
// two's-complement wrap-around (computed unsigned); mean divides the sum once, in the
// accumulation type (an empty mean is 0 / 0 = NaN). Sum and mean read 16-byte vectors when the
// geometry asks for them (Note [CUDA reduction paths]).
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

template <typename A>
__device__ __forceinline__ A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename A>
__device__ __forceinline__ A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

template <typename T>
struct SumOp {
  using acc_t = reduce_acc_t<T>;
  using vector_loads = std::true_type;
  T* out;
  double divisor;  // 1, or N for mean
  __device__ acc_t identity() const { return acc_t(0); }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return wrap_add(a, convert<acc_t>(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return wrap_add(a, b); }
  __device__ void write(int64_t o, acc_t a) const {
    if constexpr (std::is_integral_v<acc_t>) out[o] = convert<T>(a);
    else out[o] = convert<T>(divisor == 1 ? a : static_cast<acc_t>(a / static_cast<acc_t>(divisor)));
  }
};

template <typename T>
struct ProdOp {
  using acc_t = reduce_acc_t<T>;
  T* out;
  __device__ acc_t identity() const { return acc_t(1); }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return wrap_mul(a, convert<acc_t>(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return wrap_mul(a, b); }
  __device__ void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

}  // namespace

void launch_reduce_sum(SumReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                       cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = static_cast<T*>(b.values);
    if (op == SumReduceOp::Prod) {
      launch_reduce<T>(g, b.input, b.scratch, ProdOp<T>{out}, stream);
    } else {
      const double n = static_cast<double>(g.reduced);
      launch_reduce<T>(g, b.input, b.scratch, SumOp<T>{out, op == SumReduceOp::Mean ? n : 1.0}, stream);
    }
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_sum: unknown dtype");
}

}  // namespace anatomy::cuda

// CUDA kernels of any and all (bool results; an element is true when nonzero, NaN included) and
// count_nonzero (int64): backends/cpu/reduce_logical_cpu.cpp's ops on the device, every dtype.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

template <typename T, bool IsAny>
struct AnyAllOp {
  using acc_t = bool;
  bool* out;
  __device__ acc_t identity() const { return !IsAny; }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    return IsAny ? (a || convert<bool>(x)) : (a && convert<bool>(x));
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return IsAny ? (a || b) : (a && b); }
  __device__ void write(int64_t o, acc_t a) const { out[o] = a; }
};

template <typename T>
struct CountOp {
  using acc_t = int64_t;
  int64_t* out;
  __device__ acc_t identity() const { return 0; }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return a + (convert<bool>(x) ? 1 : 0); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
  __device__ void write(int64_t o, acc_t a) const { out[o] = a; }
};

}  // namespace

void launch_reduce_logical(LogicalReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
      case LogicalReduceOp::Any:
        launch_reduce<T>(g, b.input, b.scratch, AnyAllOp<T, true>{static_cast<bool*>(b.values)}, stream);
        break;
      case LogicalReduceOp::All:
        launch_reduce<T>(g, b.input, b.scratch, AnyAllOp<T, false>{static_cast<bool*>(b.values)}, stream);
        break;
      case LogicalReduceOp::CountNonzero:
        launch_reduce<T>(g, b.input, b.scratch, CountOp<T>{static_cast<int64_t*>(b.values)}, stream);
        break;
    }
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_logical: unknown dtype");
}

}  // namespace anatomy::cuda

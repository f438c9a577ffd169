// CUDA kernels of the comparisons (eq, ne, lt, le, gt, ge) and the logical ops (and, or, xor):
// inputs of the plan's common dtype, a bool output. fp16 and bf16 compare as float, so NaN is
// unordered and -0 == +0; logical ops read any nonzero value (NaN included) as true.
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T, CompareOp Op>
struct CompareFn {
  __device__ bool operator()(T a, T b) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    if constexpr (Op == CompareOp::Eq) return x == y;
    else if constexpr (Op == CompareOp::Ne) return x != y;
    else if constexpr (Op == CompareOp::Lt) return x < y;
    else if constexpr (Op == CompareOp::Le) return x <= y;
    else if constexpr (Op == CompareOp::Gt) return x > y;
    else if constexpr (Op == CompareOp::Ge) return x >= y;
    else if constexpr (Op == CompareOp::LogicalAnd) return x != M(0) && y != M(0);
    else if constexpr (Op == CompareOp::LogicalOr) return x != M(0) || y != M(0);
    else return (x != M(0)) != (y != M(0));
  }
};

template <typename T, CompareOp Op>
bool launch_one(const ElementwiseArgs<2>& args, cudaStream_t stream) {
  launch_elementwise<2, bool, T>(args, CompareFn<T, Op>{}, stream);
  return true;
}

template <typename T>
bool launch_for(CompareOp op, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  switch (op) {
    case CompareOp::Eq: return launch_one<T, CompareOp::Eq>(args, stream);
    case CompareOp::Ne: return launch_one<T, CompareOp::Ne>(args, stream);
    case CompareOp::Lt: return launch_one<T, CompareOp::Lt>(args, stream);
    case CompareOp::Le: return launch_one<T, CompareOp::Le>(args, stream);
    case CompareOp::Gt: return launch_one<T, CompareOp::Gt>(args, stream);
    case CompareOp::Ge: return launch_one<T, CompareOp::Ge>(args, stream);
    case CompareOp::LogicalAnd: return launch_one<T, CompareOp::LogicalAnd>(args, stream);
    case CompareOp::LogicalOr: return launch_one<T, CompareOp::LogicalOr>(args, stream);
    case CompareOp::LogicalXor: return launch_one<T, CompareOp::LogicalXor>(args, stream);
  }
  return false;
}

}  // namespace

void launch_compare(CompareOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_compare: unknown op or dtype", __FILE__, __LINE__);
  }
}

}  // namespace anatomy::cuda

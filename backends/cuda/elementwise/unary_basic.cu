// CUDA kernels of the unary ops that keep the dtype (neg, abs, sign, floor, ceil, round, trunc,
// relu, nan_to_num, bitwise_not) and of the predicates (isnan, isinf, isfinite, logical_not),
// with the CPU's rules (backends/cpu/unary_cpu.cpp): integer negation wraps, round is half to
// even, relu and sign keep NaN, nan_to_num's replacements come rounded from the host.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"

namespace anatomy::cuda {
namespace {

// The ops that leave an integer as it is: floor, ceil, round, trunc, nan_to_num (and, for bool,
// sign).
template <typename T>
struct IdentityOp {
  __device__ T operator()(T x) const { return x; }
};

// Integers and bool (bool only reaches BitwiseNot here).
template <typename T, BasicUnaryOp Op>
struct IntegerFn {
  __device__ T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x;
    else if constexpr (Op == BasicUnaryOp::Neg) return wrapping_neg(x);  // unsigned values wrap, as in PyTorch
    else if constexpr (Op == BasicUnaryOp::BitwiseNot) return static_cast<T>(~x);
    else if constexpr (std::is_unsigned_v<T>) {
      if constexpr (Op == BasicUnaryOp::Sign) return static_cast<T>(x != 0);
      else return x;  // abs, relu
    } else if constexpr (Op == BasicUnaryOp::Abs) return x < 0 ? wrapping_neg(x) : x;
    else if constexpr (Op == BasicUnaryOp::Sign) return static_cast<T>((T(0) < x) - (x < T(0)));
    else return x < T(0) ? T(0) : x;  // relu
  }
};

template <typename T, BasicUnaryOp Op>
struct FloatingFn {
  opmath_t<T> nan, posinf, neginf;  // nan_to_num's replacements
  __device__ T operator()(T v) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(v);
    if constexpr (Op == BasicUnaryOp::Neg) return static_cast<T>(-x);
    else if constexpr (Op == BasicUnaryOp::Abs) return static_cast<T>(abs(x));
    // NaN stays NaN (NumPy's sign; PyTorch's gives 0).
    else if constexpr (Op == BasicUnaryOp::Sign) return static_cast<T>(isnan(x) ? x : M((M(0) < x) - (x < M(0))));
    else if constexpr (Op == BasicUnaryOp::Floor) return static_cast<T>(floor(x));
    else if constexpr (Op == BasicUnaryOp::Ceil) return static_cast<T>(ceil(x));
    else if constexpr (Op == BasicUnaryOp::Round) return static_cast<T>(nearbyint(x));  // half to even
    else if constexpr (Op == BasicUnaryOp::Trunc) return static_cast<T>(trunc(x));
    // x < 0 is false for NaN, so NaN propagates.
    else if constexpr (Op == BasicUnaryOp::Relu) return static_cast<T>(x < M(0) ? M(0) : x);
    else return static_cast<T>(isnan(x) ? nan : isinf(x) ? (x > M(0) ? posinf : neginf) : x);  // nan_to_num
  }
};

template <typename T, BasicUnaryOp Op>
bool launch_one(const ElementwiseArgs<1>& args, const UnaryConstants& k, cudaStream_t stream) {
  if constexpr (is_floating_v<T>) {
    if constexpr (Op == BasicUnaryOp::BitwiseNot) {
      return false;  // refused for floating dtypes on the host
    } else {
      using M = opmath_t<T>;
      const FloatingFn<T, Op> f{static_cast<M>(k.a), static_cast<M>(k.b), static_cast<M>(k.c)};
      launch_elementwise<1, T, T>(args, f, stream);
      return true;
    }
  } else if constexpr (Op == BasicUnaryOp::Floor || Op == BasicUnaryOp::Ceil || Op == BasicUnaryOp::Round ||
                       Op == BasicUnaryOp::Trunc || Op == BasicUnaryOp::NanToNum ||
                       (std::is_same_v<T, bool> && Op == BasicUnaryOp::Sign)) {
    launch_elementwise<1, T, T>(args, IdentityOp<T>{}, stream);
    return true;
  } else if constexpr (std::is_same_v<T, bool> && Op != BasicUnaryOp::BitwiseNot) {
    return false;  // neg, abs and relu refuse bool on the host
  } else {
    launch_elementwise<1, T, T>(args, IntegerFn<T, Op>{}, stream);
    return true;
  }
}

template <typename T>
bool launch_basic_for(BasicUnaryOp op, const ElementwiseArgs<1>& args, const UnaryConstants& k, cudaStream_t stream) {
  switch (op) {
    case BasicUnaryOp::Neg: return launch_one<T, BasicUnaryOp::Neg>(args, k, stream);
    case BasicUnaryOp::Abs: return launch_one<T, BasicUnaryOp::Abs>(args, k, stream);
    case BasicUnaryOp::Sign: return launch_one<T, BasicUnaryOp::Sign>(args, k, stream);
    case BasicUnaryOp::Floor: return launch_one<T, BasicUnaryOp::Floor>(args, k, stream);
    case BasicUnaryOp::Ceil: return launch_one<T, BasicUnaryOp::Ceil>(args, k, stream);
    case BasicUnaryOp::Round: return launch_one<T, BasicUnaryOp::Round>(args, k, stream);
    case BasicUnaryOp::Trunc: return launch_one<T, BasicUnaryOp::Trunc>(args, k, stream);
    case BasicUnaryOp::Relu: return launch_one<T, BasicUnaryOp::Relu>(args, k, stream);
    case BasicUnaryOp::NanToNum: return launch_one<T, BasicUnaryOp::NanToNum>(args, k, stream);
    case BasicUnaryOp::BitwiseNot: return launch_one<T, BasicUnaryOp::BitwiseNot>(args, k, stream);
  }
  return false;
}

// A bool from T's value; integers are never NaN or infinite.
template <typename T, PredicateOp Op>
struct PredicateFn {
  __device__ bool operator()(T v) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(v);
    if constexpr (Op == PredicateOp::LogicalNot) return x == M(0);
    else if constexpr (!is_floating_v<T>) return Op == PredicateOp::Isfinite;
    else if constexpr (Op == PredicateOp::Isnan) return isnan(x);
    else if constexpr (Op == PredicateOp::Isinf) return isinf(x);
    else return isfinite(x);
  }
};

template <typename T>
bool launch_predicate_for(PredicateOp op, const ElementwiseArgs<1>& args, cudaStream_t stream) {
  switch (op) {
    case PredicateOp::Isnan:
      launch_elementwise<1, bool, T>(args, PredicateFn<T, PredicateOp::Isnan>{}, stream);
      return true;
    case PredicateOp::Isinf:
      launch_elementwise<1, bool, T>(args, PredicateFn<T, PredicateOp::Isinf>{}, stream);
      return true;
    case PredicateOp::Isfinite:
      launch_elementwise<1, bool, T>(args, PredicateFn<T, PredicateOp::Isfinite>{}, stream);
      return true;
    case PredicateOp::LogicalNot:
      launch_elementwise<1, bool, T>(args, PredicateFn<T, PredicateOp::LogicalNot>{}, stream);
      return true;
  }
  return false;
}

}  // namespace

void launch_unary_basic(BasicUnaryOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryConstants& k,
                        cudaStream_t stream) {
  const bool launched = dtype_switch(
      dtype, [&](auto tag) { return launch_basic_for<typename decltype(tag)::type>(op, args, k, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_unary_basic: op and dtype do not go together", __FILE__,
                             __LINE__);
  }
}

void launch_predicate(PredicateOp op, DType dtype, const ElementwiseArgs<1>& args, cudaStream_t stream) {
  const bool launched = dtype_switch(
      dtype, [&](auto tag) { return launch_predicate_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_predicate: unknown op or dtype", __FILE__, __LINE__);
  }
}

}  // namespace anatomy::cuda

// CPU: the element-wise unary operators over the iteration plan, one loop per row of
// dispatch/ops/unary_rows.h with the row's functor (dispatch/ops/unary_functors.h, shared with
// the CUDA kernels). fp16 and bf16 compute in float and round once; each chunk of the plan is a
// plain loop the compiler vectorizes when the operands are contiguous and the function is simple
// (neg, abs, relu, rounding, predicates). exp, log, tanh, sigmoid, gelu and the other
// transcendental functions run the branch-free fp32 loops of vec_loops.h instead of a libm call
// per element, which no compiler vectorizes; fp64 exp, log, exp2, log2, expm1, log1p, sigmoid,
// silu, tanh, erf, gelu (both forms), softplus, sin, cos and tan run its fp64 loops.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "anatomy/backends/cpu/vec_loops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/unary_functors.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::cpu {
namespace {

using elementwise::opmath_t;

// out = f(in) over the plan; In and Out are the element types of the input and the output.
template <typename Out, typename In, typename F>
void run_loop(const IterationPlan& plan, F f) {
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const In* in = reinterpret_cast<const In*>(data[1]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(data[0] + i * s[0]) = f(*reinterpret_cast<const In*>(data[1] + i * s[1]));
      }
    }
  });
}

// A chunk whose operands (T in and out) are strided or not of the loop's type C, through blocks
// of C on the stack: converted on the way in, `loop(in, out, count)` over each block, rounded once
// on the way out.
template <typename C, typename T, typename Loop>
void through_blocks(char* const* data, const int64_t* s, int64_t n, const Loop& loop) {
  constexpr int64_t kBlock = 256;
  C in[kBlock], out[kBlock];
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t m = std::min(kBlock, n - begin);
    const char* src = data[1] + begin * s[1];
    for (int64_t i = 0; i < m; ++i) in[i] = static_cast<C>(*reinterpret_cast<const T*>(src + i * s[1]));
    loop(in, out, m);
    char* dst = data[0] + begin * s[0];
    for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(dst + i * s[0]) = static_cast<T>(out[i]);
  }
}

// fp32, fp16 and bf16 through the vectorized fp32 loops (backends/cpu/vec_loops.h). Contiguous
// fp32 runs the loop on the operands themselves; anything else goes through blocks of floats, so
// strided operands and the 2-byte types also run the vectorized loop.
// Contiguous fp32 outputs are written in place, however large: the loops prefetch the output's
// lines for writing ahead of themselves (Note [Prefetching the transcendental loops]), so its
// reads for ownership overlap the arithmetic, where streaming stores (Note [Streaming stores for
// large outputs]) made each 4 KiB block wait for its computation and then for its stores (16M
// fp32 on the dev VM; docs/perf.md "The transcendental loops write in place").
template <typename T>
void run_vec(const IterationPlan& plan, VecFn fn, VecArgs args = {}) {
  const VecLoop loop = vec_loop(fn);
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
        const auto* in = reinterpret_cast<const float*>(data[1]);
        auto* out = reinterpret_cast<float*>(data[0]);
        // In blocks that stay in the cache: sin, cos and tan scan a call's arguments for large
        // ones before computing, which over a whole chunk in memory would read it twice.
        constexpr int64_t kBlock = 4096;
        for (int64_t begin = 0; begin < n; begin += kBlock) {
          loop(in + begin, out + begin, std::min(kBlock, n - begin), args);
        }
        return;
      }
    }
    through_blocks<float, T>(data, s, n, [&](const float* in, float* out, int64_t m) { loop(in, out, m, args); });
  });
}

// fp64 through the vectorized fp64 loops (vec_loops.h): contiguous operands directly, strided
// ones through blocks.
void run_vec64(const IterationPlan& plan, VecFn fn, VecArgs64 args = {}) {
  const VecLoop64 loop = vec_loop64(fn);
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(double) && s[1] == sizeof(double)) {
      loop(reinterpret_cast<const double*>(data[1]), reinterpret_cast<double*>(data[0]), n, args);
      return;
    }
    through_blocks<double, double>(data, s, n,
                                   [&](const double* in, double* out, int64_t m) { loop(in, out, m, args); });
  });
}

// The functions with vectorized loops (fp32, fp16 and bf16 through the fp32 loops, fp64 through
// its own), or nullopt. A CPU detail, so a table here rather than a column of the rows, which
// every backend shares.
std::optional<VecFn> vec_fn(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
      return VecFn::Exp;
    case UnaryOp::Expm1:
      return VecFn::Expm1;
    case UnaryOp::Log:
      return VecFn::Log;
    case UnaryOp::Log1p:
      return VecFn::Log1p;
    case UnaryOp::Sigmoid:
      return VecFn::Sigmoid;
    case UnaryOp::Silu:
      return VecFn::Silu;
    case UnaryOp::Tanh:
      return VecFn::Tanh;
    case UnaryOp::Erf:
      return VecFn::Erf;
    case UnaryOp::Gelu:
      return VecFn::Gelu;
    case UnaryOp::GeluTanh:
      return VecFn::GeluTanh;
    case UnaryOp::Softplus:
      return VecFn::Softplus;
    case UnaryOp::Sin:
      return VecFn::Sin;
    case UnaryOp::Cos:
      return VecFn::Cos;
    case UnaryOp::Tan:
      return VecFn::Tan;
    case UnaryOp::Exp2:
      return VecFn::Exp2;
    case UnaryOp::Log2:
      return VecFn::Log2;
    default:
      return std::nullopt;
  }
}

void unary_kernel(UnaryOp op, const IterationPlan& plan, const UnaryParams& params) {
  const UnaryScalars k = unary_scalars(op, plan.common_dtype(), params);
  visit_dtype(plan.common_dtype(), unary_op_name(op), [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, float> || is_reduced_float_v<T>) {
      if (const std::optional<VecFn> fn = vec_fn(op)) {
        return run_vec<T>(plan, *fn, {static_cast<float>(k.a), static_cast<float>(k.b)});
      }
    }
    if constexpr (std::is_same_v<T, double>) {
      if (const std::optional<VecFn> fn = vec_fn(op)) return run_vec64(plan, *fn, {k.a, k.b});
    }
    switch (op) {
      // One case per row of dispatch/ops/unary_rows.h, for the dtypes the row's kind takes (the
      // plan refused the others).
#define ANATOMY_CPU_UNARY_CASE(e, name, kind, Fn, ...)                            \
  case UnaryOp::e:                                                                \
    if constexpr (unary_takes_v<UnaryKind::kind, T>) {                            \
      using F = elementwise::Fn<T>;                                               \
      run_loop<std::invoke_result_t<F, T>, T>(plan, F{{M(k.a), M(k.b), M(k.c)}}); \
    }                                                                             \
    break;
      ANATOMY_FORALL_UNARY_OPS(ANATOMY_CPU_UNARY_CASE)
#undef ANATOMY_CPU_UNARY_CASE
    }
  });
  plan.finish();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_unary_kernels<&unary_kernel>(m); }

}  // namespace anatomy::cpu

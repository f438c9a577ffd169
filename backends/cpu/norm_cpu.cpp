// CPU: layer_norm (native_layer_norm: the output, each row's mean and 1/sqrt(var + eps)) and
// rms_norm, one row of the trailing normalized dims at a time. Row statistics accumulate in
// fp64 and the variance is two-pass (mean first, then the squared deviations), so a large
// common offset does not cancel the variance away.
#include <cmath>
#include <limits>
#include <tuple>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::cpu {
namespace {

template <typename T>
constexpr bool is_float_type = std::is_floating_point_v<T> || is_reduced_float_v<T>;

template <typename T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_kernel(const Tensor& input, IntArrayRef normalized_shape,
                                                            const std::optional<Tensor>& weight,
                                                            const std::optional<Tensor>& bias, double eps) {
  RowNormPlan plan = prepare_row_norm("native_layer_norm", input, normalized_shape, weight, bias);
  const TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
  Tensor mean = empty(plan.stat_shape, opts), rstd = empty(plan.stat_shape, opts);
  visit_dtype(input.dtype(), "native_layer_norm", [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      const T* x = static_cast<const T*>(plan.input.data_ptr());
      const T* w = data_or_null<T>(plan.weight);
      const T* b = data_or_null<T>(plan.bias);
      T* y = static_cast<T*>(plan.out.data_ptr());
      T* mean_out = static_cast<T*>(mean.data_ptr());
      T* rstd_out = static_cast<T*>(rstd.data_ptr());
      const int64_t cols = plan.cols;
      parallel_for(0, plan.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                       const T* xr = x + r * cols;
                       T* yr = y + r * cols;
                       double s = 0;
                       for (int64_t i = 0; i < cols; ++i) s += convert<double>(xr[i]);
                       const double mu = s / static_cast<double>(cols);
                       double sq = 0;
                       for (int64_t i = 0; i < cols; ++i) {
                         const double d = convert<double>(xr[i]) - mu;
                         sq += d * d;
                       }
                       const double rs = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
                       for (int64_t i = 0; i < cols; ++i) {
                         double v = (convert<double>(xr[i]) - mu) * rs;
                         if (w) v *= convert<double>(w[i]);
                         if (b) v += convert<double>(b[i]);
                         yr[i] = convert<T>(v);
                       }
                       mean_out[r] = convert<T>(mu);
                       rstd_out[r] = convert<T>(rs);
                     }
                   });
    }
  });
  return {plan.out, mean, rstd};
}

Tensor rms_norm_kernel(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                       std::optional<double> eps) {
  RowNormPlan plan = prepare_row_norm("rms_norm", input, normalized_shape, weight, std::nullopt);
  visit_dtype(input.dtype(), "rms_norm", [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      // The default eps is the input dtype's machine epsilon, as in PyTorch.
      const double e = eps ? *eps : convert<double>(std::numeric_limits<T>::epsilon());
      const T* x = static_cast<const T*>(plan.input.data_ptr());
      const T* w = data_or_null<T>(plan.weight);
      T* y = static_cast<T*>(plan.out.data_ptr());
      const int64_t cols = plan.cols;
      parallel_for(0, plan.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                       const T* xr = x + r * cols;
                       T* yr = y + r * cols;
                       double sq = 0;
                       for (int64_t i = 0; i < cols; ++i) sq += convert<double>(xr[i]) * convert<double>(xr[i]);
                       const double rs = 1.0 / std::sqrt(sq / static_cast<double>(cols) + e);
                       for (int64_t i = 0; i < cols; ++i) {
                         double v = convert<double>(xr[i]) * rs;
                         if (w) v *= convert<double>(w[i]);
                         yr[i] = convert<T>(v);
                       }
                     }
                   });
    }
  });
  return plan.out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("native_layer_norm", dispatch::named_kernel(&native_layer_norm_kernel, "native_layer_norm"));
  m.impl("rms_norm", dispatch::named_kernel(&rms_norm_kernel, "rms_norm"));
}

}  // namespace anatomy::cpu

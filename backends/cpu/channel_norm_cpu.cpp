// CPU: native_batch_norm and native_group_norm. The input is made dense in the layout its
// strides suggest (contiguous (N, C, S) or channels innermost (N, S, C)) and the output is
// written in that layout; statistics accumulate in fp64 with a two-pass variance (mean first,
// then the squared deviations), so a large common offset does not cancel the variance away.
// Every loop reads memory in order: batch norm's statistics of a channels_last input are column
// sums over its (N * S) rows of C values, in blocks of rows whose partial sums are added in block
// order (the same bits for any thread count), and the output is written row by row there.
// The backward operators have kernels here too, two passes over memory each (the composites of
// dispatch/ops/channel_norm.cpp serve the other backends and the double backward).
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/channel_norm_rules.h"

namespace anatomy::cpu {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

template <typename T>
constexpr bool is_float_type = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// A per-channel parameter as doubles (`fill` for each channel when it is absent).
std::vector<double> to_doubles(const Tensor& t, int64_t n, double fill) {
  if (!t.defined()) return std::vector<double>(static_cast<size_t>(n), fill);
  const Tensor d = t.to(DType::Float64).contiguous();
  const double* p = static_cast<const double*>(d.data_ptr());
  return std::vector<double>(p, p + n);
}

// Statistics of no values (0 / 0 for every entry), as two tensors of `sizes`. Tensors rather
// than scratch vectors: the count may be more than memory holds, which is then the allocator's
// typed error.
std::pair<Tensor, Tensor> undefined_statistics(IntArrayRef sizes, DType stat, const Device& device) {
  const TensorOptions options = TensorOptions().dtype(stat).device(device);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {full(sizes, nan, options), full(sizes, nan, options)};
}

Tensor from_doubles(const std::vector<double>& v, IntArrayRef sizes, DType dtype) {
  return tensor(v, sizes, TensorOptions().dtype(DType::Float64)).to(dtype);
}

// The sum of term(i) for i < n in eight independent lanes (an add need not wait for the one
// before it, and the compiler may keep the lanes in vector registers), the lanes added in a fixed
// order: the same bits wherever the same terms are summed.
template <typename Term>
double lane_sum(int64_t n, const Term& term) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lane[k] += term(i + k);
  }
  double tail = 0;
  for (; i < n; ++i) tail += term(i);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) + tail;
}

// The sum of f(x[i]) over a contiguous run of n values.
template <typename T, typename F>
double run_sum(const T* x, int64_t n, const F& f) {
  return lane_sum(n, [&](int64_t i) { return f(convert<double>(x[i])); });
}

// The sum of g[i] * (x[i] - center) over a contiguous run.
template <typename T>
double dot_run(const T* g, const T* x, int64_t n, double center) {
  return lane_sum(n, [&](int64_t i) { return convert<double>(g[i]) * (convert<double>(x[i]) - center); });
}

// The mean and biased variance of the values in `runs` contiguous runs of `length` values, run k
// starting at x + start(k) (one statistic: the elements of channel c, or of one sample's group).
template <typename T, typename Start>
std::pair<double, double> moments(const T* x, int64_t runs, int64_t length, const Start& start) {
  const double count = static_cast<double>(runs * length);
  double s = 0;
  for (int64_t k = 0; k < runs; ++k) s += run_sum(x + start(k), length, [](double v) { return v; });
  const double mean = s / count;
  double sq = 0;
  for (int64_t k = 0; k < runs; ++k) {
    sq += run_sum(x + start(k), length, [mean](double v) { return (v - mean) * (v - mean); });
  }
  return {mean, sq / count};
}

// y = x * scale[n * C + c] + shift[n * C + c] for every element, in the layout of `l`.
template <typename T>
void write_affine(const ChannelLayout& l, const T* x, T* y, const std::vector<double>& scale,
                  const std::vector<double>& shift) {
  if (l.channels_last) {
    parallel_for(0, l.N * l.S, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.C, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t row = b; row < e; ++row) {
                     const double* sc = scale.data() + row / l.S * l.C;
                     const double* sh = shift.data() + row / l.S * l.C;
                     const T* xr = x + row * l.C;
                     T* yr = y + row * l.C;
                     for (int64_t c = 0; c < l.C; ++c) yr[c] = convert<T>(convert<double>(xr[c]) * sc[c] + sh[c]);
                   }
                 });
    return;
  }
  parallel_for(0, l.N * l.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.S, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t nc = b; nc < e; ++nc) {
                   const double sc = scale[nc], sh = shift[nc];
                   const T* xr = x + nc * l.S;
                   T* yr = y + nc * l.S;
                   for (int64_t s = 0; s < l.S; ++s) yr[s] = convert<T>(convert<double>(xr[s]) * sc + sh);
                 }
               });
}

// The backward's input gradient dx = k1 * g + k2 * (x - centre) + k0, the coefficients per
// (sample, channel) at n * C + c, in the layout of `l`.
template <typename T>
void write_input_gradient(const ChannelLayout& l, const T* x, const T* g, T* d, const std::vector<double>& k1,
                          const std::vector<double>& k2, const std::vector<double>& k0,
                          const std::vector<double>& centre) {
  const auto element = [&](int64_t i, int64_t nc) {
    return convert<T>(k1[nc] * convert<double>(g[i]) + k2[nc] * (convert<double>(x[i]) - centre[nc]) + k0[nc]);
  };
  if (l.channels_last) {
    parallel_for(0, l.N * l.S, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.C, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t row = b; row < e; ++row) {
                     const int64_t n = row / l.S;
                     for (int64_t c = 0; c < l.C; ++c) d[row * l.C + c] = element(row * l.C + c, n * l.C + c);
                   }
                 });
    return;
  }
  parallel_for(0, l.N * l.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.S, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t nc = b; nc < e; ++nc)
                   for (int64_t i = nc * l.S; i < (nc + 1) * l.S; ++i) d[i] = element(i, nc);
               });
}

// Rows of a channels_last input per block of batch norm's column sums: a fixed count, so that the
// partial sums and the order they are added in do not depend on the thread count.
constexpr int64_t kStatRowsPerBlock = 256;

// Column sums over `rows` rows of `width` accumulators (a channels_last tensor's N * S rows):
// add_row(row, acc) adds row `row`'s terms into acc[0, width). Each block of rows sums into its
// own partials, added in block order into `out` (width values).
template <typename AddRow>
void column_sums(int64_t rows, int64_t width, const AddRow& add_row, std::vector<double>& out) {
  const int64_t blocks = (rows + kStatRowsPerBlock - 1) / kStatRowsPerBlock;
  std::vector<double> partial(static_cast<size_t>(blocks * width), 0.0);
  parallel_for(0, blocks, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(kStatRowsPerBlock * width, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t blk = b; blk < e; ++blk) {
                   const int64_t end = std::min(rows, (blk + 1) * kStatRowsPerBlock);
                   for (int64_t row = blk * kStatRowsPerBlock; row < end; ++row) {
                     add_row(row, partial.data() + blk * width);
                   }
                 }
               });
  out.assign(static_cast<size_t>(width), 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t c = 0; c < width; ++c) out[c] += partial[blk * width + c];
}

// Batch norm's per-channel mean and biased variance (two passes), either layout.
template <typename T>
void channel_moments(const ChannelLayout& l, const T* x, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t C = l.C;
  const double count = static_cast<double>(l.N * l.S);
  if (l.channels_last) {
    column_sums(
        l.N * l.S, C,
        [&](int64_t row, double* acc) {
          for (int64_t c = 0; c < C; ++c) acc[c] += convert<double>(x[row * C + c]);
        },
        mean);
    for (double& m : mean) m /= count;
    column_sums(
        l.N * l.S, C,
        [&](int64_t row, double* acc) {
          for (int64_t c = 0; c < C; ++c) {
            const double d = convert<double>(x[row * C + c]) - mean[c];
            acc[c] += d * d;
          }
        },
        var);
    for (double& v : var) v /= count;
    return;
  }
  mean.resize(C);
  var.resize(C);
  parallel_for(0, C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.N * l.S, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      std::tie(mean[c], var[c]) = moments(x, l.N, l.S, [&](int64_t n) { return (n * C + c) * l.S; });
    }
  });
}

Tensor3 native_batch_norm_kernel(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                                 const OptTensor& running_mean, const OptTensor& running_var, bool training,
                                 double momentum, double eps) {
  const char* op = "native_batch_norm";
  const BatchNormArgs a = check_batch_norm(op, input, weight, bias, running_mean, running_var, training);
  const ChannelLayout l = channel_layout(input);
  const int64_t C = l.C;
  Tensor y = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  if (input.numel() == 0) {
    // No values: training's statistics are 0 / 0 and the running ones stay as they are; eval's
    // are the running statistics'.
    if (training) {
      auto [mean, invstd] = undefined_statistics({C}, a.stat, input.device());
      return {y, mean, invstd};
    }
    return {y, a.running_mean.to(a.stat, false, /*copy=*/true),
            a.running_var.to(DType::Float64).add(eps).rsqrt().to(a.stat)};
  }
  std::vector<double> mean(C), var(C);
  visit_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      const T* x = static_cast<const T*>(l.x.data_ptr());
      if (training) {
        channel_moments(l, x, mean, var);
      } else {
        mean = to_doubles(a.running_mean, C, 0);
        var = to_doubles(a.running_var, C, 1);
      }
      const std::vector<double> w = to_doubles(a.weight, C, 1), bias_v = to_doubles(a.bias, C, 0);
      // One row of C per sample (at least one, which an empty batch writes nothing with).
      std::vector<double> scale(std::max<int64_t>(l.N, 1) * C), shift(std::max<int64_t>(l.N, 1) * C);
      for (int64_t c = 0; c < C; ++c) {
        scale[c] = w[c] / std::sqrt(var[c] + eps);
        shift[c] = bias_v[c] - mean[c] * scale[c];
      }
      for (int64_t n = 1; n < l.N; ++n) {  // the same for every sample
        std::copy(scale.begin(), scale.begin() + C, scale.begin() + n * C);
        std::copy(shift.begin(), shift.begin() + C, shift.begin() + n * C);
      }
      write_affine(l, x, static_cast<T*>(y.data_ptr()), scale, shift);
    }
  });
  std::vector<double> invstd(C);
  for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  Tensor save_mean = from_doubles(mean, {C}, a.stat), save_invstd = from_doubles(invstd, {C}, a.stat);
  if (training) {
    update_running_stats(running_mean, running_var, from_doubles(mean, {C}, a.stat), from_doubles(var, {C}, a.stat),
                         l.N * l.S, momentum);
  }
  return {y, save_mean, save_invstd};
}

// native_batch_norm_backward with the composite's checks and results (dispatch/ops/
// channel_norm_rules.cpp, batch_norm_backward_formula) in two passes over memory: the per-channel
// sums of g and g * xhat (xhat = (x - mean) * invstd), then dx = invstd * w * (g - sum(g) / M -
// xhat * sum(g * xhat) / M) when training, g * w * invstd otherwise; in fp64.
Tensor3 native_batch_norm_backward_kernel(const Tensor& grad_out, const Tensor& input, const OptTensor& weight,
                                          const OptTensor& running_mean, const OptTensor& running_var,
                                          const OptTensor& save_mean, const OptTensor& save_invstd, bool train,
                                          double eps, IntArrayRef output_mask) {
  const char* op = "native_batch_norm_backward";
  const BatchNormArgs a =
      check_batch_norm_backward(op, grad_out, input, weight, running_mean, running_var, output_mask);
  const ChannelLayout l = channel_layout(input);
  const int64_t C = l.C;
  std::vector<double> mean, invstd;
  if (!train && a.running_mean.defined()) {
    mean = to_doubles(a.running_mean, C, 0);
    invstd = to_doubles(a.running_var, C, 1);
    for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
  } else {
    mean = to_doubles(check_saved_stat(op, "save_mean", save_mean, input, C), C, 0);
    invstd = to_doubles(check_saved_stat(op, "save_invstd", save_invstd, input, C), C, 1);
  }
  const std::vector<double> w = to_doubles(a.weight, C, 1);
  const DType param = a.weight.defined() ? a.weight.dtype() : input.dtype();
  const Tensor g = dense_in_layout(grad_out, l.channels_last);
  const double count = static_cast<double>(l.N * l.S);
  std::vector<double> sum_g(C, 0.0), sum_gx(C, 0.0);
  Tensor dx;
  if (output_mask[0]) dx = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  visit_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      const T* x = static_cast<const T*>(l.x.data_ptr());
      const T* gp = static_cast<const T*>(g.data_ptr());
      const bool sums = output_mask[1] || output_mask[2] || (output_mask[0] && train);
      if (sums && l.channels_last) {
        // sum_g and sum_gx side by side: 2C accumulators a row.
        std::vector<double> both;
        column_sums(
            l.N * l.S, 2 * C,
            [&](int64_t row, double* acc) {
              for (int64_t c = 0; c < C; ++c) {
                const double gv = convert<double>(gp[row * C + c]);
                acc[c] += gv;
                acc[C + c] += gv * (convert<double>(x[row * C + c]) - mean[c]);
              }
            },
            both);
        for (int64_t c = 0; c < C; ++c) {
          sum_g[c] = both[c];
          sum_gx[c] = both[C + c] * invstd[c];
        }
      } else if (sums) {
        parallel_for(0, C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.N * l.S, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t c = b; c < e; ++c) {
                         double sg = 0, sgx = 0;
                         for (int64_t n = 0; n < l.N; ++n) {
                           const int64_t at = (n * C + c) * l.S;
                           const T* xr = x + at;
                           sg += run_sum(gp + at, l.S, [](double v) { return v; });
                           // g * (x - mean) as a run over g's positions, x read beside it.
                           sgx += dot_run(gp + at, xr, l.S, mean[c]);
                         }
                         sum_g[c] = sg;
                         sum_gx[c] = sgx * invstd[c];
                       }
                     });
      }
      if (!output_mask[0] || count == 0) return;
      // dx = k1 * g + k2 * (x - mean) + k0, per channel (the same for every sample).
      const int64_t samples = std::max<int64_t>(l.N, 1);
      std::vector<double> k1(samples * C), k2(samples * C), k0(samples * C), centre(samples * C);
      for (int64_t c = 0; c < C; ++c) {
        const double rw = invstd[c] * w[c];
        k1[c] = rw;
        k2[c] = train ? -rw * invstd[c] * sum_gx[c] / count : 0.0;
        k0[c] = train ? -rw * sum_g[c] / count : 0.0;
        centre[c] = mean[c];
      }
      for (std::vector<double>* k : {&k1, &k2, &k0, &centre}) {
        for (int64_t n = 1; n < l.N; ++n) std::copy(k->begin(), k->begin() + C, k->begin() + n * C);
      }
      write_input_gradient(l, x, gp, static_cast<T*>(dx.data_ptr()), k1, k2, k0, centre);
    }
  });
  Tensor dw, db;
  if (output_mask[1]) dw = from_doubles(sum_gx, {C}, param);
  if (output_mask[2]) db = from_doubles(sum_g, {C}, param);
  return {dx, dw, db};
}

Tensor3 native_group_norm_kernel(const Tensor& input, const OptTensor& weight, const OptTensor& bias, int64_t N,
                                 int64_t C, int64_t HxW, int64_t group, double eps) {
  const char* op = "native_group_norm";
  const GroupNormArgs a = check_group_norm(op, input, weight, bias, N, C, HxW, group);
  const ChannelLayout l = channel_layout(input);
  const int64_t cpg = C / group;
  Tensor y = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  if (input.numel() == 0) {
    // No values (HxW == 0): each group's mean and rstd are 0 / 0.
    auto [mean, rstd] = undefined_statistics({N, group}, a.stat, input.device());
    return {y, mean, rstd};
  }
  std::vector<double> mean(N * group), rstd(N * group);
  visit_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      const T* x = static_cast<const T*>(l.x.data_ptr());
      if (l.channels_last) {
        // A sample's S rows of C values: column sums (the lanes are the channels), added up per
        // group; then the same for the squared deviations from the group's mean.
        parallel_for(0, N, 1, [&](int64_t b, int64_t e) {
          std::vector<double> col(C), centre(C);
          for (int64_t n = b; n < e; ++n) {
            const T* xn = x + n * l.S * C;
            const double count = static_cast<double>(cpg * l.S);
            std::fill(col.begin(), col.end(), 0.0);
            for (int64_t s = 0; s < l.S; ++s)
              for (int64_t c = 0; c < C; ++c) col[c] += convert<double>(xn[s * C + c]);
            for (int64_t grp = 0; grp < group; ++grp) {
              double sum = 0;
              for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) sum += col[c];
              mean[n * group + grp] = sum / count;
            }
            // Each channel's group mean, so that the loop over a row divides nothing.
            for (int64_t c = 0; c < C; ++c) centre[c] = mean[n * group + c / cpg];
            std::fill(col.begin(), col.end(), 0.0);
            for (int64_t s = 0; s < l.S; ++s) {
              for (int64_t c = 0; c < C; ++c) {
                const double d = convert<double>(xn[s * C + c]) - centre[c];
                col[c] += d * d;
              }
            }
            for (int64_t grp = 0; grp < group; ++grp) {
              double sq = 0;
              for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) sq += col[c];
              rstd[n * group + grp] = 1.0 / std::sqrt(sq / count + eps);
            }
          }
        });
      } else {
        parallel_for(0, N * group, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cpg * l.S, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t ng = b; ng < e; ++ng) {
                         // A group's values are one run of cpg * S.
                         const int64_t n = ng / group, c0 = ng % group * cpg;
                         const auto [m, v] = moments(x, 1, cpg * l.S, [&](int64_t) { return (n * C + c0) * l.S; });
                         mean[ng] = m;
                         rstd[ng] = 1.0 / std::sqrt(v + eps);
                       }
                     });
      }
      const std::vector<double> w = to_doubles(a.weight, C, 1), bias_v = to_doubles(a.bias, C, 0);
      std::vector<double> scale(N * C), shift(N * C);
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t ng = n * group + c / cpg;
          scale[n * C + c] = rstd[ng] * w[c];
          shift[n * C + c] = bias_v[c] - mean[ng] * scale[n * C + c];
        }
      }
      write_affine(l, x, static_cast<T*>(y.data_ptr()), scale, shift);
    }
  });
  return {y, from_doubles(mean, {N, group}, a.stat), from_doubles(rstd, {N, group}, a.stat)};
}

// native_group_norm_backward with the composite's checks and results (group_norm_backward_formula
// in dispatch/ops/channel_norm_rules.cpp), in fp64 from per-(sample, channel) sums: a = sum(g),
// b = sum(g * (x - mean)) over the channel's S values. Then over a group of M = cpg * S values,
// with r its rstd, P = sum(w a) and Q = r sum(w b): dx = r w g - r P / M - r^2 (x - mean) Q / M,
// dw = sum over samples of r b, db = sum of a.
Tensor3 native_group_norm_backward_kernel(const Tensor& grad_out, const Tensor& input, const Tensor& mean_t,
                                          const Tensor& rstd_t, const OptTensor& weight, int64_t N, int64_t C,
                                          int64_t HxW, int64_t group, IntArrayRef output_mask) {
  const char* op = "native_group_norm_backward";
  const GroupNormArgs a =
      check_group_norm_backward(op, grad_out, input, mean_t, rstd_t, weight, N, C, HxW, group, output_mask);
  const ChannelLayout l = channel_layout(input);
  const int64_t cpg = C / group, S = l.S;
  const DType param = a.weight.defined() ? a.weight.dtype() : input.dtype();
  if (input.numel() == 0) {
    // No values: an empty dx and sums over nothing (as tensors: C may be more than memory holds).
    const TensorOptions param_options = TensorOptions().dtype(param).device(input.device());
    return {output_mask[0] ? empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device())) : Tensor(),
            output_mask[1] ? zeros({C}, param_options) : Tensor(),
            output_mask[2] ? zeros({C}, param_options) : Tensor()};
  }
  const std::vector<double> mean = to_doubles(mean_t.reshape({N * group}), N * group, 0);
  const std::vector<double> rstd = to_doubles(rstd_t.reshape({N * group}), N * group, 1);
  const std::vector<double> w = to_doubles(a.weight, C, 1);
  const Tensor g = dense_in_layout(grad_out, l.channels_last);
  // a and b per (sample, channel), laid out n * C + c.
  std::vector<double> sum_g(N * C, 0.0), sum_gx(N * C, 0.0);
  Tensor dx;
  if (output_mask[0]) dx = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  visit_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (is_float_type<T>) {
      const T* x = static_cast<const T*>(l.x.data_ptr());
      const T* gp = static_cast<const T*>(g.data_ptr());
      if (l.channels_last) {
        // One sample's S rows of C values, summed row after row (the lanes are the channels).
        parallel_for(0, N, 1, [&](int64_t b, int64_t e) {
          std::vector<double> centre(C);
          for (int64_t n = b; n < e; ++n) {
            double* sg = sum_g.data() + n * C;
            double* sgx = sum_gx.data() + n * C;
            for (int64_t c = 0; c < C; ++c) centre[c] = mean[n * group + c / cpg];
            for (int64_t s = 0; s < S; ++s) {
              const int64_t row = (n * S + s) * C;
              for (int64_t c = 0; c < C; ++c) {
                const double gv = convert<double>(gp[row + c]);
                sg[c] += gv;
                sgx[c] += gv * (convert<double>(x[row + c]) - centre[c]);
              }
            }
          }
        });
      } else {
        parallel_for(0, N * C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(S, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t nc = b; nc < e; ++nc) {
                         const double m = mean[nc / C * group + nc % C / cpg];
                         sum_g[nc] = run_sum(gp + nc * S, S, [](double v) { return v; });
                         sum_gx[nc] = dot_run(gp + nc * S, x + nc * S, S, m);
                       }
                     });
      }
      if (!output_mask[0] || S == 0) return;
      // dx = k1 * g + k2 * (x - mean) + k0 per (sample, channel).
      const double M = static_cast<double>(cpg * S);
      std::vector<double> k1(N * C), k2(N * C), k0(N * C), centre(N * C);
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t grp = 0; grp < group; ++grp) {
          const int64_t ng = n * group + grp;
          const double r = rstd[ng];
          double P = 0, Q = 0;
          for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) {
            P += w[c] * sum_g[n * C + c];
            Q += w[c] * sum_gx[n * C + c];
          }
          Q *= r;
          for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) {
            k1[n * C + c] = r * w[c];
            k2[n * C + c] = -r * r * Q / M;
            k0[n * C + c] = -r * P / M;
            centre[n * C + c] = mean[ng];
          }
        }
      }
      write_input_gradient(l, x, gp, static_cast<T*>(dx.data_ptr()), k1, k2, k0, centre);
    }
  });
  Tensor dw, db;
  if (output_mask[1] || output_mask[2]) {
    std::vector<double> gw(C, 0.0), gb(C, 0.0);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        gw[c] += rstd[n * group + c / cpg] * sum_gx[n * C + c];
        gb[c] += sum_g[n * C + c];
      }
    }
    if (output_mask[1]) dw = from_doubles(gw, {C}, param);
    if (output_mask[2]) db = from_doubles(gb, {C}, param);
  }
  return {dx, dw, db};
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("native_batch_norm", dispatch::named_kernel(&native_batch_norm_kernel, "native_batch_norm"));
  m.impl("native_group_norm", dispatch::named_kernel(&native_group_norm_kernel, "native_group_norm"));
  m.impl("native_batch_norm_backward",
         dispatch::named_kernel(&native_batch_norm_backward_kernel, "native_batch_norm_backward"));
  m.impl("native_group_norm_backward",
         dispatch::named_kernel(&native_group_norm_backward_kernel, "native_group_norm_backward"));
}

}  // namespace anatomy::cpu

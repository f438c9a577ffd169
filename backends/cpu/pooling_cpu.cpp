// CPU: max pooling's loops (max_pool2d_with_indices and its backward), and the registration of
// every pooling and upsampling kernel (dispatch/ops/pooling_registration.h) over them and the
// weighted-window loops of upsample_cpu.cpp. The engine's own loops rather than oneDNN's pooling
// primitives: oneDNN has neither adaptive pooling, PyTorch's int64 flat indices, nor fp64, so
// one set of loops serves every case (docs/ops.md, "Pooling and upsampling"). Inputs are made
// dense in their suggested layout first.
#include <atomic>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "anatomy/backends/cpu/window_loops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"
#include "anatomy/dispatch/ops/pooling_registration.h"

namespace anatomy::cpu {
namespace {

using elementwise::opmath_t;
using pooling::Taps;

template <typename A>
constexpr A lowest() {
  return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
}
// PyTorch's comparison: a larger value or a NaN takes the place (so the first NaN stays).
template <typename A>
bool takes_max(A v, A best) {
  if constexpr (std::is_floating_point_v<A>) return v > best || std::isnan(v);
  else return v > best;
}

template <typename T>
void max_forward(const Geometry& g, bool channels_last, const T* x, T* y, int64_t* idx) {
  using A = opmath_t<T>;
  if (!channels_last) {
    parallel_for(0, g.n * g.c, grain_for(g.out_plane()), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* xp = x + p * g.in_plane();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const Taps& r = g.rows[oh];
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Taps& s = g.cols[ow];
            A best = lowest<A>();
            int64_t at = pooling::window_start(r, s, g.w);
            for (int64_t i = 0; i < r.count; ++i) {
              for (int64_t j = 0; j < s.count; ++j) {
                const int64_t k = (r.first + i * r.step) * g.w + s.first + j * s.step;
                const A v = convert<A>(xp[k]);
                if (takes_max(v, best)) {
                  best = v;
                  at = k;
                }
              }
            }
            const int64_t o = p * g.out_plane() + oh * g.ow + ow;
            y[o] = convert<T>(best);
            idx[o] = at;
          }
        }
      }
    });
    return;
  }
  parallel_for(0, g.n * g.out_plane(), grain_for(g.c), [&](int64_t q0, int64_t q1) {
    std::vector<A> best(g.c);
    std::vector<int64_t> at(g.c);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / g.out_plane(), oh = (q / g.ow) % g.oh, ow = q % g.ow;
      const Taps &r = g.rows[oh], &s = g.cols[ow];
      std::fill(best.begin(), best.end(), lowest<A>());
      std::fill(at.begin(), at.end(), pooling::window_start(r, s, g.w));
      for (int64_t i = 0; i < r.count; ++i) {
        for (int64_t j = 0; j < s.count; ++j) {
          const int64_t k = (r.first + i * r.step) * g.w + s.first + j * s.step;
          const T* xs = x + (n * g.in_plane() + k) * g.c;
          for (int64_t c = 0; c < g.c; ++c) {
            const A v = convert<A>(xs[c]);
            if (takes_max(v, best[c])) {
              best[c] = v;
              at[c] = k;
            }
          }
        }
      }
      for (int64_t c = 0; c < g.c; ++c) {
        y[q * g.c + c] = convert<T>(best[c]);
        idx[q * g.c + c] = at[c];
      }
    }
  });
}

// grad_output added at the indices; an empty window's index (pooling::kEmptyWindow) is passed
// over, and any other index outside the plane is skipped and reported (the caller raises), so a
// bad indices tensor cannot write outside the result.
template <typename T>
bool max_backward_loop(const Geometry& g, bool channels_last, const T* gy, const int64_t* idx, T* gx) {
  using A = opmath_t<T>;
  std::atomic<bool> in_range{true};
  // NCHW: one plane per item, stride 1 between a plane's elements; NHWC: one image per item,
  // channel c of flat position k at k * C + c.
  const int64_t items = channels_last ? g.n : g.n * g.c;
  const int64_t lanes = channels_last ? g.c : 1;
  parallel_for(0, items, channels_last ? 1 : grain_for(g.out_plane()), [&](int64_t p0, int64_t p1) {
    std::vector<A> buf(g.in_plane() * lanes);
    for (int64_t p = p0; p < p1; ++p) {
      std::fill(buf.begin(), buf.end(), A(0));
      const int64_t base = p * g.out_plane() * lanes;
      for (int64_t o = 0; o < g.out_plane(); ++o) {
        for (int64_t c = 0; c < lanes; ++c) {
          const int64_t k = idx[base + o * lanes + c];
          if (k == pooling::kEmptyWindow) continue;
          if (k < 0 || k >= g.in_plane()) {
            in_range = false;
            continue;
          }
          buf[k * lanes + c] += convert<A>(gy[base + o * lanes + c]);
        }
      }
      T* xp = gx + p * g.in_plane() * lanes;
      for (int64_t k = 0; k < g.in_plane() * lanes; ++k) xp[k] = convert<T>(buf[k]);
    }
  });
  return in_range;
}

template <typename T>
constexpr bool is_pooled_type = elementwise::is_floating_v<T> || elementwise::is_int_v<T>;

struct CpuPoolLoops {
  static Tensor sum(const char* op, const PoolPlan& p, const Tensor& self) { return window_sum_forward(op, p, self); }
  static Tensor sum_backward(const char* op, const PoolPlan& p, const Tensor& grad_output) {
    return window_sum_backward(op, p, grad_output);
  }
  static std::tuple<Tensor, Tensor> max(const char* op, const PoolPlan& p, const Tensor& self) {
    const Tensor x = p.dense(self);
    Tensor y = p.empty_result(p.out_sizes, p.dtype);
    Tensor idx = p.empty_result(p.out_sizes, DType::Int64);
    const Geometry g(p);
    visit_dtype(p.dtype, op, [&]<typename T>() {
      if constexpr (is_pooled_type<T>) {
        max_forward<T>(g, p.channels_last, static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()),
                       static_cast<int64_t*>(idx.data_ptr()));
      }
    });
    return {y, idx};
  }
  static Tensor max_backward(const char* op, const PoolPlan& p, const Tensor& grad_output, const Tensor& indices) {
    const Tensor gy = p.dense(grad_output), idx = p.dense(indices);
    Tensor gx = p.empty_result(p.in_sizes, p.dtype);
    const Geometry g(p);
    bool ok = true;
    visit_dtype(p.dtype, op, [&]<typename T>() {
      if constexpr (elementwise::is_floating_v<T>) {
        ok = max_backward_loop<T>(g, p.channels_last, static_cast<const T*>(gy.data_ptr()),
                                  static_cast<const int64_t*>(idx.data_ptr()), static_cast<T*>(gx.data_ptr()));
      }
    });
    ANATOMY_CHECK(ok, IndexError, "{}: an index lies outside the input plane of {} elements", op, g.in_plane());
    return gx;
  }
};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_pooling_kernels<CpuPoolLoops>(m); }

}  // namespace anatomy::cpu

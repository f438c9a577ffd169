// CPU: the weighted-window loops of upsample_nearest2d and upsample_bilinear2d (one pixel, or two
// rows by two columns with PyTorch's lambdas), which avg_pool2d and _adaptive_avg_pool2d share
// (uniform weights), and their transpose for the backward operators. pooling_cpu.cpp registers
// them (dispatch/ops/pooling_registration.h).
#include <vector>

#include "anatomy/backends/cpu/window_loops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::cpu {
namespace {

using elementwise::opmath_t;
using pooling::tap_weight;
using pooling::Taps;

template <typename T>
void sum_forward(const Geometry& g, bool channels_last, const T* x, T* y) {
  using A = opmath_t<T>;
  if (!channels_last) {
    parallel_for(0, g.n * g.c, grain_for(g.out_plane()), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* xp = x + p * g.in_plane();
        T* yp = y + p * g.out_plane();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const Taps& r = g.rows[oh];
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Taps& s = g.cols[ow];
            A acc = 0;
            for (int64_t i = 0; i < r.count; ++i) {
              const T* xr = xp + (r.first + i * r.step) * g.w;
              A row = 0;
              for (int64_t j = 0; j < s.count; ++j) {
                row += static_cast<A>(tap_weight(s, j)) * convert<A>(xr[s.first + j * s.step]);
              }
              acc += static_cast<A>(tap_weight(r, i)) * row;
            }
            yp[oh * g.ow + ow] = convert<T>(acc);
          }
        }
      }
    });
    return;
  }
  parallel_for(0, g.n * g.out_plane(), grain_for(g.c), [&](int64_t q0, int64_t q1) {
    std::vector<A> acc(g.c);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / g.out_plane(), oh = (q / g.ow) % g.oh, ow = q % g.ow;
      const Taps &r = g.rows[oh], &s = g.cols[ow];
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t i = 0; i < r.count; ++i) {
        for (int64_t j = 0; j < s.count; ++j) {
          const A wt = static_cast<A>(tap_weight(r, i) * tap_weight(s, j));
          const T* xs = x + ((n * g.h + r.first + i * r.step) * g.w + s.first + j * s.step) * g.c;
          for (int64_t c = 0; c < g.c; ++c) acc[c] += wt * convert<A>(xs[c]);
        }
      }
      T* ys = y + q * g.c;
      for (int64_t c = 0; c < g.c; ++c) ys[c] = convert<T>(acc[c]);
    }
  });
}

// The transpose of sum_forward, accumulated per plane (NCHW) or per image (NHWC) in the
// computation type, so no two threads write one element.
template <typename T>
void sum_backward(const Geometry& g, bool channels_last, const T* gy, T* gx) {
  using A = opmath_t<T>;
  if (!channels_last) {
    parallel_for(0, g.n * g.c, grain_for(g.out_plane()), [&](int64_t p0, int64_t p1) {
      std::vector<A> buf(g.in_plane());
      for (int64_t p = p0; p < p1; ++p) {
        std::fill(buf.begin(), buf.end(), A(0));
        const T* gp = gy + p * g.out_plane();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const Taps& r = g.rows[oh];
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Taps& s = g.cols[ow];
            const A v = convert<A>(gp[oh * g.ow + ow]);
            for (int64_t i = 0; i < r.count; ++i) {
              A* br = buf.data() + (r.first + i * r.step) * g.w;
              const A vr = static_cast<A>(tap_weight(r, i)) * v;
              for (int64_t j = 0; j < s.count; ++j) br[s.first + j * s.step] += static_cast<A>(tap_weight(s, j)) * vr;
            }
          }
        }
        T* xp = gx + p * g.in_plane();
        for (int64_t k = 0; k < g.in_plane(); ++k) xp[k] = convert<T>(buf[k]);
      }
    });
    return;
  }
  parallel_for(0, g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<A> buf(g.in_plane() * g.c);
    for (int64_t n = n0; n < n1; ++n) {
      std::fill(buf.begin(), buf.end(), A(0));
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        const Taps& r = g.rows[oh];
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Taps& s = g.cols[ow];
          const T* gs = gy + ((n * g.oh + oh) * g.ow + ow) * g.c;
          for (int64_t i = 0; i < r.count; ++i) {
            for (int64_t j = 0; j < s.count; ++j) {
              const A wt = static_cast<A>(tap_weight(r, i) * tap_weight(s, j));
              A* bs = buf.data() + ((r.first + i * r.step) * g.w + s.first + j * s.step) * g.c;
              for (int64_t c = 0; c < g.c; ++c) bs[c] += wt * convert<A>(gs[c]);
            }
          }
        }
      }
      T* xs = gx + n * g.in_plane() * g.c;
      for (int64_t k = 0; k < g.in_plane() * g.c; ++k) xs[k] = convert<T>(buf[k]);
    }
  });
}

}  // namespace

Tensor window_sum_forward(const char* op, const PoolPlan& plan, const Tensor& self) {
  const Tensor x = plan.dense(self);
  Tensor y = plan.empty_result(plan.out_sizes, self.dtype());
  const Geometry g(plan);
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    if constexpr (elementwise::is_floating_v<T>) {
      sum_forward<T>(g, plan.channels_last, static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()));
    }
  });
  return y;
}

Tensor window_sum_backward(const char* op, const PoolPlan& plan, const Tensor& grad_output) {
  const Tensor gy = plan.dense(grad_output);
  Tensor gx = plan.empty_result(plan.in_sizes, grad_output.dtype());
  const Geometry g(plan);
  visit_dtype(grad_output.dtype(), op, [&]<typename T>() {
    if constexpr (elementwise::is_floating_v<T>) {
      sum_backward<T>(g, plan.channels_last, static_cast<const T*>(gy.data_ptr()), static_cast<T*>(gx.data_ptr()));
    }
  });
  return gx;
}

}  // namespace anatomy::cpu

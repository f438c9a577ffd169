// The pooling and upsampling CUDA kernels: one thread per output element (a grid-stride loop),
// numbered in memory order of the layout, so consecutive threads write consecutive addresses:
// along W in NCHW, along C in NHWC (where their reads are consecutive too). Each thread computes
// its row and column windows with the CPU's host-device code (dispatch/ops/pooling_windows.h).
// The backward kernels scatter with atomicAdd into a buffer of the computation type (fp16 and
// bf16 accumulate in fp32), which the host casts to the result's dtype; sums are in another
// order than the CPU's, so results agree to rounding. Max pooling's backward, where few windows
// can hold an input element, gathers instead: one thread per input element sums its windows'
// gradients in the order of their outputs and writes the result's dtype once. Max pooling in NHWC
// whose channels fill 16-byte words runs max_pool_nhwc.cu's kernels instead (the same results).
#include <cstdint>
#include <limits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/pooling/launch.h"
#include "anatomy/backends/cuda/pooling/window_max.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::cuda {
namespace {

using elementwise::is_floating_v;
using elementwise::is_int_v;
using elementwise::opmath_t;
using pooling::tap_weight;
using pooling::Taps;
using pooling::Window2d;

// Where output element e sits, and where an input pixel of its (n, c) is.
struct Layout {
  int64_t c, h, w, oh, ow;
  bool channels_last;

  __device__ void position(int64_t e, int64_t& n, int64_t& ch, int64_t& y, int64_t& x) const {
    if (channels_last) {
      ch = e % c;
      e /= c;
      x = e % ow;
      e /= ow;
      y = e % oh;
      n = e / oh;
    } else {
      x = e % ow;
      e /= ow;
      y = e % oh;
      e /= oh;
      ch = e % c;
      n = e / c;
    }
  }
  __device__ int64_t input(int64_t n, int64_t ch, int64_t y, int64_t x) const {
    return channels_last ? ((n * h + y) * w + x) * c + ch : ((n * c + ch) * h + y) * w + x;
  }
  // position() for input element e, and output() as input() for the output's plane.
  __device__ void input_position(int64_t e, int64_t& n, int64_t& ch, int64_t& y, int64_t& x) const {
    const Layout in{c, h, w, h, w, channels_last};
    in.position(e, n, ch, y, x);
  }
  __device__ int64_t output(int64_t n, int64_t ch, int64_t y, int64_t x) const {
    return channels_last ? ((n * oh + y) * ow + x) * c + ch : ((n * c + ch) * oh + y) * ow + x;
  }
};

Layout layout_of(const WindowArgs& a) {
  return {a.channels, a.window.h.in, a.window.w.in, a.window.h.out, a.window.w.out, a.channels_last};
}
int64_t outputs_of(const WindowArgs& a) { return a.batch * a.channels * a.window.h.out * a.window.w.out; }

#define ANATOMY_GRID_STRIDE(e, total)                                                        \
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < (total); \
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename T>
__global__ void window_sum_kernel(Window2d win, Layout l, int64_t total, const T* __restrict__ x, T* __restrict__ y) {
  using A = opmath_t<T>;
  ANATOMY_GRID_STRIDE(e, total) {
    int64_t n, c, oh, ow;
    l.position(e, n, c, oh, ow);
    const Taps r = pooling::taps(win.kind, win.h, oh), s = pooling::taps(win.kind, win.w, ow);
    A acc = 0;
    for (int64_t i = 0; i < r.count; ++i) {
      A row = 0;
      for (int64_t j = 0; j < s.count; ++j) {
        row +=
            static_cast<A>(tap_weight(s, j)) * convert<A>(x[l.input(n, c, r.first + i * r.step, s.first + j * s.step)]);
      }
      acc += static_cast<A>(tap_weight(r, i)) * row;
    }
    y[e] = convert<T>(acc);
  }
}

template <typename T>
__global__ void window_sum_backward_kernel(Window2d win, Layout l, int64_t total, const T* __restrict__ gy,
                                           opmath_t<T>* __restrict__ gx) {
  using A = opmath_t<T>;
  ANATOMY_GRID_STRIDE(e, total) {
    int64_t n, c, oh, ow;
    l.position(e, n, c, oh, ow);
    const Taps r = pooling::taps(win.kind, win.h, oh), s = pooling::taps(win.kind, win.w, ow);
    const A g = convert<A>(gy[e]);
    for (int64_t i = 0; i < r.count; ++i) {
      const A gr = static_cast<A>(tap_weight(r, i)) * g;
      for (int64_t j = 0; j < s.count; ++j) {
        atomicAdd(gx + l.input(n, c, r.first + i * r.step, s.first + j * s.step),
                  static_cast<A>(tap_weight(s, j)) * gr);
      }
    }
  }
}

template <typename T>
__global__ void window_max_kernel(Window2d win, Layout l, int64_t total, opmath_t<T> lowest, const T* __restrict__ x,
                                  T* __restrict__ y, int64_t* __restrict__ idx) {
  using A = opmath_t<T>;
  ANATOMY_GRID_STRIDE(e, total) {
    int64_t n, c, oh, ow;
    l.position(e, n, c, oh, ow);
    const Taps r = pooling::taps(win.kind, win.h, oh), s = pooling::taps(win.kind, win.w, ow);
    A best = lowest;
    int64_t at = pooling::window_start(r, s, l.w);
    for (int64_t i = 0; i < r.count; ++i) {
      for (int64_t j = 0; j < s.count; ++j) {
        const int64_t hi = r.first + i * r.step, wj = s.first + j * s.step;
        const A v = convert<A>(x[l.input(n, c, hi, wj)]);
        if (takes_max(v, best)) {
          best = v;
          at = hi * l.w + wj;
        }
      }
    }
    y[e] = convert<T>(best);
    idx[e] = at;
  }
}

template <typename T>
__global__ void window_max_backward_kernel(Layout l, int64_t total, const T* __restrict__ gy,
                                           const int64_t* __restrict__ idx, opmath_t<T>* __restrict__ gx,
                                           IndexErrorSink sink) {
  using A = opmath_t<T>;
  ANATOMY_GRID_STRIDE(e, total) {
    int64_t n, c, oh, ow;
    l.position(e, n, c, oh, ow);
    const int64_t k = idx[e];
    if (k == pooling::kEmptyWindow) continue;
    if (k < 0 || k >= l.h * l.w) {
      sink.report(IndexErrorKind::OutOfBounds, k, l.h * l.w, 2);
      continue;
    }
    atomicAdd(gx + l.input(n, c, k / l.w, k % l.w), convert<A>(gy[e]));
  }
}

// One thread per input element, in memory order: the sum of grad_output over the windows that
// can hold the element (pooling::max_outputs_holding) and recorded it as their maximum, written
// once in the result's dtype. No atomics and no zeroed buffer; each element's terms are added in
// the order of their outputs. An index outside the plane (not an empty window's)
// is reported through `sink` by each thread that reads it.
template <typename T>
__global__ void window_max_backward_gather_kernel(Window2d win, Layout l, int64_t total, const T* __restrict__ gy,
                                                  const int64_t* __restrict__ idx, T* __restrict__ gx,
                                                  IndexErrorSink sink) {
  using A = opmath_t<T>;
  const int64_t plane = l.h * l.w;
  ANATOMY_GRID_STRIDE(e, total) {
    int64_t n, c, y, x;
    l.input_position(e, n, c, y, x);
    const pooling::OutputRange rows = pooling::max_outputs_holding(win.h, y);
    const pooling::OutputRange cols = pooling::max_outputs_holding(win.w, x);
    const int64_t here = y * l.w + x;
    A acc = 0;
    for (int64_t oy = rows.first; oy <= rows.last; ++oy) {
      for (int64_t ox = cols.first; ox <= cols.last; ++ox) {
        const int64_t o = l.output(n, c, oy, ox);
        const int64_t k = idx[o];
        if (k == here) {
          acc += convert<A>(gy[o]);
        } else if (k != pooling::kEmptyWindow && (k < 0 || k >= plane)) {
          sink.report(IndexErrorKind::OutOfBounds, k, plane, 2);
        }
      }
    }
    gx[e] = convert<T>(acc);
  }
}

[[noreturn]] void dtype_error(const char* launcher) {
  detail::throw_cuda_error(cudaErrorInvalidValue, launcher, __FILE__, __LINE__);
}

}  // namespace

void launch_window_sum(const WindowArgs& a, const void* x, void* y, cudaStream_t stream) {
  const int64_t total = outputs_of(a);
  if (total == 0) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      window_sum_kernel<T><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
          a.window, layout_of(a), total, static_cast<const T*>(x), static_cast<T*>(y));
      return true;
    }
    return false;
  });
  if (!launched) dtype_error("launch_window_sum: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void launch_window_sum_backward(const WindowArgs& a, const void* grad_output, void* grad_input, cudaStream_t stream) {
  const int64_t total = outputs_of(a);
  if (total == 0) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      window_sum_backward_kernel<T><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
          a.window, layout_of(a), total, static_cast<const T*>(grad_output), static_cast<opmath_t<T>*>(grad_input));
      return true;
    }
    return false;
  });
  if (!launched) dtype_error("launch_window_sum_backward: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void launch_window_max(const WindowArgs& a, const void* x, void* y, int64_t* indices, cudaStream_t stream) {
  const int64_t total = outputs_of(a);
  if (total == 0 || launch_window_max_nhwc(a, x, y, indices, stream)) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T> || is_int_v<T>) {
      using A = opmath_t<T>;
      const A lowest = below_every_value<A>();
      window_max_kernel<T><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
          a.window, layout_of(a), total, lowest, static_cast<const T*>(x), static_cast<T*>(y), indices);
      return true;
    }
    return false;
  });
  if (!launched) dtype_error("launch_window_max: not a floating or integer dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void launch_window_max_backward(const WindowArgs& a, const void* grad_output, const int64_t* indices, void* grad_input,
                                const IndexErrorSink& sink, cudaStream_t stream) {
  const int64_t total = outputs_of(a);
  if (total == 0) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      window_max_backward_kernel<T>
          <<<grid_blocks(total), kBlockThreads, 0, stream>>>(layout_of(a), total, static_cast<const T*>(grad_output),
                                                             indices, static_cast<opmath_t<T>*>(grad_input), sink);
      return true;
    }
    return false;
  });
  if (!launched) dtype_error("launch_window_max_backward: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

bool window_max_backward_gathers(const WindowArgs& a) {
  const int64_t rows = pooling::max_outputs_per_input(a.window.h, kMaxGatherSpan);
  const int64_t cols = pooling::max_outputs_per_input(a.window.w, kMaxGatherSpan);
  return rows > 0 && cols > 0 && rows * cols <= kMaxGatherWindows;
}

void launch_window_max_backward_gather(const WindowArgs& a, const void* grad_output, const int64_t* indices,
                                       void* grad_input, const IndexErrorSink& sink, cudaStream_t stream) {
  const int64_t total = a.batch * a.channels * a.window.h.in * a.window.w.in;
  if (total == 0 || launch_window_max_backward_nhwc(a, grad_output, indices, grad_input, sink, stream)) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      window_max_backward_gather_kernel<T><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
          a.window, layout_of(a), total, static_cast<const T*>(grad_output), indices, static_cast<T*>(grad_input),
          sink);
      return true;
    }
    return false;
  });
  if (!launched) dtype_error("launch_window_max_backward_gather: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda

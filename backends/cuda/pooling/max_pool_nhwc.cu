// Max pooling in NHWC with whole 16-byte words of channels: each thread takes one pixel's run of
// V = 16 / sizeof(T) channels (8 for fp16/bf16, 4 for fp32), so the position arithmetic is done
// once per V channels instead of once per element, and every load and store of the data is one
// 16-byte word (the indices four). Positions are in 32-bit arithmetic where every offset fits.
// The forward compares and records as window_max_kernel does, lane by lane (NaN wins, the first
// maximum in window order keeps its index), and the backward gathers in the order of
// window_max_backward_gather_kernel: the results are those kernels' to the bit.
#include <cstdint>
#include <initializer_list>
#include <limits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/pooling/launch.h"
#include "anatomy/backends/cuda/pooling/window_max.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::cuda {
namespace {

using elementwise::is_floating_v;
using elementwise::is_int_v;
using elementwise::opmath_t;
using pooling::Taps;
using pooling::Window2d;

constexpr int kWordBytes = 16;
template <typename T>
constexpr int kLanes = kWordBytes / static_cast<int>(sizeof(T));

// The plane and the channel words of one call, in the index type I (int32_t where every offset
// of the input and the output fits, int64_t otherwise).
template <typename I>
struct NhwcShape {
  I words;  // channels / V
  I h, w, oh, ow;
};

// V int64 indices as V / 2 16-byte words (V is at least 2: no dtype is wider than 8 bytes).
template <int V>
__device__ __forceinline__ void store_indices(int64_t* at, const int64_t (&k)[V]) {
  auto* words = reinterpret_cast<longlong2*>(at);
#pragma unroll
  for (int l = 0; l < V / 2; ++l) words[l] = make_longlong2(k[2 * l], k[2 * l + 1]);
}
template <int V>
__device__ __forceinline__ void load_indices(const int64_t* at, int64_t (&k)[V]) {
  const auto* words = reinterpret_cast<const longlong2*>(at);
#pragma unroll
  for (int l = 0; l < V / 2; ++l) {
    const longlong2 p = words[l];
    k[2 * l] = p.x;
    k[2 * l + 1] = p.y;
  }
}

// Where word e of an NHWC plane of `height` x `width` pixels sits: its pixel (n, y, x) and its
// word of channels.
template <typename I>
struct WordAt {
  I n, y, x, word;
};
template <typename I>
__device__ __forceinline__ WordAt<I> word_at(I e, I words, I height, I width) {
  WordAt<I> a;
  a.word = e % words;
  I p = e / words;
  a.x = p % width;
  p /= width;
  a.y = p % height;
  a.n = p / height;
  return a;
}

// The grid-stride loop over words [0, total).
#define ANATOMY_WORD_LOOP(e, total)                                              \
  for (I e = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; e < (total); \
       e += static_cast<I>(gridDim.x) * blockDim.x)

template <typename T, typename I>
__global__ void window_max_nhwc_kernel(Window2d win, NhwcShape<I> s, I total, opmath_t<T> lowest,
                                       const T* __restrict__ x, T* __restrict__ y, int64_t* __restrict__ idx) {
  using A = opmath_t<T>;
  constexpr int V = kLanes<T>;
  using Word = AlignedVector<T, V>;
  ANATOMY_WORD_LOOP(e, total) {
    const auto [n, oy, ox, word] = word_at(e, s.words, s.oh, s.ow);
    const Taps r = pooling::max_taps(win.h, oy), c = pooling::max_taps(win.w, ox);
    A best[V];
    int64_t at[V];
    const int64_t start = pooling::window_start(r, c, s.w);
#pragma unroll
    for (int l = 0; l < V; ++l) {
      best[l] = lowest;
      at[l] = start;
    }
    for (I i = 0; i < static_cast<I>(r.count); ++i) {
      const I hi = static_cast<I>(r.first) + i * static_cast<I>(r.step);
      for (I j = 0; j < static_cast<I>(c.count); ++j) {
        const I wj = static_cast<I>(c.first) + j * static_cast<I>(c.step);
        const Word v = reinterpret_cast<const Word*>(x)[((n * s.h + hi) * s.w + wj) * s.words + word];
#pragma unroll
        for (int l = 0; l < V; ++l) {
          const A a = convert<A>(v.v[l]);
          if (takes_max(a, best[l])) {
            best[l] = a;
            at[l] = static_cast<int64_t>(hi) * s.w + wj;
          }
        }
      }
    }
    Word out;
#pragma unroll
    for (int l = 0; l < V; ++l) out.v[l] = convert<T>(best[l]);
    reinterpret_cast<Word*>(y)[e] = out;
    store_indices<V>(idx + static_cast<int64_t>(e) * V, at);
  }
}

template <typename T, typename I>
__global__ void window_max_backward_nhwc_kernel(Window2d win, NhwcShape<I> s, I total, const T* __restrict__ gy,
                                                const int64_t* __restrict__ idx, T* __restrict__ gx,
                                                IndexErrorSink sink) {
  using A = opmath_t<T>;
  constexpr int V = kLanes<T>;
  using Word = AlignedVector<T, V>;
  const int64_t plane = static_cast<int64_t>(s.h) * s.w;
  ANATOMY_WORD_LOOP(e, total) {
    const auto [n, y, x, word] = word_at(e, s.words, s.h, s.w);
    const pooling::OutputRange rows = pooling::max_outputs_holding(win.h, y);
    const pooling::OutputRange cols = pooling::max_outputs_holding(win.w, x);
    const int64_t here = static_cast<int64_t>(y) * s.w + x;
    A acc[V];
#pragma unroll
    for (int l = 0; l < V; ++l) acc[l] = 0;
    for (I oy = static_cast<I>(rows.first); oy <= static_cast<I>(rows.last); ++oy) {
      for (I ox = static_cast<I>(cols.first); ox <= static_cast<I>(cols.last); ++ox) {
        const I o = ((n * s.oh + oy) * s.ow + ox) * s.words + word;
        int64_t k[V];
        load_indices<V>(idx + static_cast<int64_t>(o) * V, k);
        const Word g = reinterpret_cast<const Word*>(gy)[o];
#pragma unroll
        for (int l = 0; l < V; ++l) {
          if (k[l] == here) {
            acc[l] += convert<A>(g.v[l]);
          } else if (k[l] != pooling::kEmptyWindow && (k[l] < 0 || k[l] >= plane)) {
            sink.report(IndexErrorKind::OutOfBounds, k[l], plane, 2);
          }
        }
      }
    }
    Word out;
#pragma unroll
    for (int l = 0; l < V; ++l) out.v[l] = convert<T>(acc[l]);
    reinterpret_cast<Word*>(gx)[e] = out;
  }
}

bool word_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kWordBytes == 0; }

// Whether the words fit: NHWC, channels a multiple of V, and every pointer on a word.
template <typename T>
bool takes_words(const WindowArgs& a, std::initializer_list<const void*> pointers) {
  if (!a.channels_last || a.channels % kLanes<T> != 0) return false;
  for (const void* p : pointers) {
    if (!word_aligned(p)) return false;
  }
  return true;
}

// Calls f(shape) with int32_t where every element offset of the input and the output fits with
// room for the grid-stride loop's last step, int64_t otherwise.
constexpr int64_t kInt32Elements = std::numeric_limits<int32_t>::max() - kMaxBlocks * kBlockThreads;
template <typename F>
void with_index_type(const WindowArgs& a, int64_t lanes, F&& f) {
  const int64_t in = a.batch * a.window.h.in * a.window.w.in * a.channels;
  const int64_t out = a.batch * a.window.h.out * a.window.w.out * a.channels;
  const int64_t words = a.channels / lanes;
  if (in <= kInt32Elements && out <= kInt32Elements) {
    f(NhwcShape<int32_t>{static_cast<int32_t>(words), static_cast<int32_t>(a.window.h.in),
                         static_cast<int32_t>(a.window.w.in), static_cast<int32_t>(a.window.h.out),
                         static_cast<int32_t>(a.window.w.out)});
  } else {
    f(NhwcShape<int64_t>{words, a.window.h.in, a.window.w.in, a.window.h.out, a.window.w.out});
  }
}

#undef ANATOMY_WORD_LOOP

}  // namespace

bool launch_window_max_nhwc(const WindowArgs& a, const void* x, void* y, int64_t* indices, cudaStream_t stream) {
  return dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T> || is_int_v<T>) {
      if (!takes_words<T>(a, {x, y, indices})) return false;
      using A = opmath_t<T>;
      const A lowest = below_every_value<A>();
      with_index_type(a, kLanes<T>, [&](auto s) {
        using I = decltype(s.words);
        const I total = static_cast<I>(a.batch) * s.oh * s.ow * s.words;
        if (total == 0) return;
        window_max_nhwc_kernel<T, I><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
            a.window, s, total, lowest, static_cast<const T*>(x), static_cast<T*>(y), indices);
        ANATOMY_CUDA_LAUNCH_CHECK();
      });
      return true;
    }
    return false;
  });
}

bool launch_window_max_backward_nhwc(const WindowArgs& a, const void* grad_output, const int64_t* indices,
                                     void* grad_input, const IndexErrorSink& sink, cudaStream_t stream) {
  return dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      if (!takes_words<T>(a, {grad_output, indices, grad_input})) return false;
      with_index_type(a, kLanes<T>, [&](auto s) {
        using I = decltype(s.words);
        const I total = static_cast<I>(a.batch) * s.h * s.w * s.words;
        if (total == 0) return;
        window_max_backward_nhwc_kernel<T, I><<<grid_blocks(total), kBlockThreads, 0, stream>>>(
            a.window, s, total, static_cast<const T*>(grad_output), indices, static_cast<T*>(grad_input), sink);
        ANATOMY_CUDA_LAUNCH_CHECK();
      });
      return true;
    }
    return false;
  });
}

}  // namespace anatomy::cuda

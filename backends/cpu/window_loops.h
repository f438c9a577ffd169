// The CPU loops behind pooling and upsampling: every one of those operators reads, for each
// output pixel, the product of a row window and a column window (dispatch/ops/pooling_windows.h).
// A weighted sum covers average, adaptive average, nearest and bilinear, and its transpose their
// backward (upsample_cpu.cpp); max pooling has its own pair (pooling_cpu.cpp). Each loop has an
// NCHW path (one (n, c) plane at a time) and an NHWC path (the channel innermost, contiguous, so
// the compiler vectorizes over C). fp16 and bf16 accumulate in fp32.
#pragma once

#include <algorithm>
#include <vector>

#include "anatomy/core/parallel.h"
#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/pooling_rules.h"

namespace anatomy::cpu {

// The 4-D problem and every output row's and column's taps, computed once per call.
struct Geometry {
  int64_t n, c, h, w, oh, ow;
  std::vector<pooling::Taps> rows, cols;

  explicit Geometry(const PoolPlan& p)
      : n(p.batch), c(p.channels), h(p.window.h.in), w(p.window.w.in), oh(p.window.h.out), ow(p.window.w.out) {
    // Nothing to compute, no taps: a zero-size output (or grad_output) may claim any OH or OW,
    // more taps than memory holds. An output with no rows or no columns has neither (the loops
    // over the other would look up taps).
    if (oh == 0 || ow == 0) oh = ow = 0;
    if (n * c == 0 || oh == 0) return;
    rows.resize(oh);
    cols.resize(ow);
    for (int64_t o = 0; o < oh; ++o) rows[o] = pooling::taps(p.window.kind, p.window.h, o);
    for (int64_t o = 0; o < ow; ++o) cols[o] = pooling::taps(p.window.kind, p.window.w, o);
  }
  int64_t in_plane() const { return h * w; }
  int64_t out_plane() const { return oh * ow; }
};

// parallel_for's grain for items of `work_per_item` elements each.
inline int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_item));
}

// The windows' weighted sums of `self`, in the plan's layout.
Tensor window_sum_forward(const char* op, const PoolPlan& plan, const Tensor& self);
// Their transpose: each grad_output value added, weighted, to the input pixels its window read.
Tensor window_sum_backward(const char* op, const PoolPlan& plan, const Tensor& grad_output);

}  // namespace anatomy::cpu

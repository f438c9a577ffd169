// The CPU indexing kernels' shared pieces: reading index values, checking them (before anything
// is written), and the two loops every kernel reduces to. Each kernel turns its indices into a
// table of element offsets into the indexed tensor (validated), then
//   gather:  out[p] = src[src_base(p) + offsets[offset_pos(p)]]
//   scatter: dst[dst_base(p) + offsets[offset_pos(p)]] = (or +=, *=, max=, min=) src[p]
// where *_base and offset_pos are plain strided positions over the walked shape (a stride of 0
// repeats a value). The scatter loop runs serially, so accumulation is deterministic.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include <fmt/ranges.h>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/indexing_rules.h"
#include "anatomy/dispatch/ops/scatter_functors.h"

namespace anatomy::cpu {

// The values of an int64 or int32 index tensor (any strides), row-major.
inline std::vector<int64_t> read_indices(const Tensor& index) {
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(index.numel()));
  auto read = [&]<typename I>() {
    const I* data = static_cast<const I*>(index.data_ptr());
    for_each_strided<1>(index.sizes(), {index.strides()},
                        [&](const std::array<int64_t, 1>& o) { v.push_back(static_cast<int64_t>(data[o[0]])); });
  };
  if (index.dtype() == DType::Int32) read.template operator()<int32_t>();
  else read.template operator()<int64_t>();
  return v;
}

// An index into a dim of `size` elements: negative ones count from the end when
// `allow_negative`; out of range raises IndexError naming op, the value, the dim and the size.
inline int64_t checked_index(int64_t v, int64_t size, int64_t dim, bool allow_negative, const char* op) {
  const int64_t lo = allow_negative ? -size : 0;
  ANATOMY_CHECK(v >= lo && v < size, IndexError, "{}: index {} is out of bounds for dimension {} with size {}", op, v,
                dim, size);
  return v < 0 ? v + size : v;
}

// for_each_strided, split across threads along the first dim when the walk is large. Only for
// loops whose writes never meet (each position writes its own element).
template <size_t N, typename F>
void parallel_for_each_strided(IntArrayRef sizes, const std::array<IntArrayRef, N>& strides, const F& fn) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (sizes.empty() || numel < 2 * kParallelGrain) {
    for_each_strided<N>(sizes, strides, fn);
    return;
  }
  const int64_t rows = sizes[0], row_numel = numel / rows;
  const IntArrayRef inner(sizes.data() + 1, sizes.size() - 1);
  std::array<IntArrayRef, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = IntArrayRef(strides[k].data() + 1, strides[k].size() - 1);
  parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / row_numel), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      std::array<int64_t, N> base;
      for (size_t k = 0; k < N; ++k) base[k] = r * strides[k][0];
      for_each_strided<N>(inner, inner_strides, [&](const std::array<int64_t, N>& o) {
        std::array<int64_t, N> at;
        for (size_t k = 0; k < N; ++k) at[k] = base[k] + o[k];
        fn(at);
      });
    }
  });
}

// out[p] = src[src_base(p) + offsets[offset_pos(p)]] over `sizes` (out and src of one dtype).
inline void gather_elements(IntArrayRef sizes, const Tensor& out, IntArrayRef out_strides, const Tensor& src,
                            IntArrayRef src_strides, const std::vector<int64_t>& offsets, IntArrayRef offset_strides,
                            const char* op) {
  visit_dtype(out.dtype(), op, [&]<typename T>() {
    T* o = static_cast<T*>(out.data_ptr());
    const T* s = static_cast<const T*>(src.data_ptr());
    const int64_t* off = offsets.data();
    // Every position writes its own element of the fresh out: safe to split across threads.
    parallel_for_each_strided<3>(sizes, {out_strides, src_strides, offset_strides},
                                 [&](const std::array<int64_t, 3>& p) { o[p[0]] = s[p[1] + off[p[2]]]; });
  });
}

// dst[dst_base(p) + offsets[offset_pos(p)]] = combine(that element, src[p]) over `sizes`, in
// row-major order (dispatch/ops/scatter_functors.h: a plain write, a sum, a product, max or min).
inline void scatter_elements(IntArrayRef sizes, const Tensor& dst, IntArrayRef dst_strides, const Tensor& src,
                             IntArrayRef src_strides, const std::vector<int64_t>& offsets, IntArrayRef offset_strides,
                             ScatterMode mode, const char* op) {
  visit_dtype(dst.dtype(), op, [&]<typename T>() {
    T* d = static_cast<T*>(dst.data_ptr());
    const T* s = static_cast<const T*>(src.data_ptr());
    const int64_t* off = offsets.data();
    visit_scatter_mode(mode, [&](auto m) {
      for_each_strided<3>(sizes, {dst_strides, src_strides, offset_strides}, [&](const std::array<int64_t, 3>& p) {
        T& target = d[p[0] + off[p[2]]];
        target = scatter_combine<decltype(m)::value, T>(target, s[p[1]]);
      });
    });
  });
}

// Advanced indexing (index_cpu.cpp, used by index_put_ in scatter_cpu.cpp too; the bool masks
// and the walk are dispatch/ops/indexing_rules.h's, shared with CUDA).
// The element offset into self of every position of the broadcast index shape, row-major;
// negative indices wrap, out-of-range ones raise IndexError.
std::vector<int64_t> advanced_index_offsets(const Tensor& self, const std::vector<Tensor>& entries,
                                            const AdvancedIndexShape& plan, const char* op);

}  // namespace anatomy::cpu

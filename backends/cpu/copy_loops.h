// The loops of the CPU copy_ between layouts: out[i] = convert(in[i]) over one shape, with any
// strides on both sides (a broadcast source has stride 0).
//
// Note [Strided copies on the CPU]
// The dims are put in the output's order (smallest output stride innermost) and merged where
// both sides step through them as one; then:
//   - the inner dim is unit-stride on both sides: a tight loop per row (a memcpy where the
//     dtypes agree);
//   - the source's unit-stride dim is another one (a transpose, channels_last <-> contiguous):
//     tiles of kTile x kTile elements over those two dims, so that the tile's source lines stay
//     in L1 while the output is written row by row. Element by element along the output, each
//     read of a transposed 8192^2 fp32 source touches a new cache line, 13 ns an element;
//   - anything else: a strided loop along the output's inner dim.
// Rows (or tiles) are spread over the engine's threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "anatomy/core/array_ref.h"
#include "anatomy/core/parallel.h"

namespace anatomy::cpu {

// `bytes` from src to dst (not overlapping), split over the engine's threads from 512 KiB up in
// parts of whole 64 KiB units: one thread's memcpy reaches only a fraction of the memory's
// bandwidth on a many-core host (docs/perf.md, "Prefetching the transcendental loops", has a
// 64 MiB copy_ on 1 and 2 threads beside torch's).
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  constexpr size_t kUnit = size_t{64} << 10;
  const auto units = static_cast<int64_t>((bytes + kUnit - 1) / kUnit);
  parallel_for(0, units, 4, [&](int64_t begin, int64_t end) {
    const size_t first = static_cast<size_t>(begin) * kUnit;
    const size_t last = std::min(bytes, static_cast<size_t>(end) * kUnit);
    std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first, last - first);
  });
}

struct CopyDim {
  int64_t size, out_stride, in_stride;  // strides in elements
};

// The dims of size > 1, innermost (smallest output stride) first, merged where an inner dim's
// extent is the next one's stride on both sides. Inline, for copies of up to kMaxDims dims of
// size > 1 (the caller takes another loop beyond).
struct CopyLayout {
  static constexpr int kMaxDims = 16;
  CopyDim dims[kMaxDims];  // innermost first
  int ndim = 0;
};

inline bool fits_copy_layout(IntArrayRef sizes) {
  return std::count_if(sizes.begin(), sizes.end(), [](int64_t s) { return s != 1; }) <= CopyLayout::kMaxDims;
}

inline CopyLayout copy_layout(IntArrayRef sizes, IntArrayRef out_strides, IntArrayRef in_strides) {
  CopyLayout l;
  // Insertion sort by |output stride| (few dims); ties keep the row-major order's inner first.
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    const CopyDim c{sizes[d], out_strides[d], in_strides[d]};
    int i = l.ndim++;
    while (i > 0 && std::abs(l.dims[i - 1].out_stride) > std::abs(c.out_stride)) {
      l.dims[i] = l.dims[i - 1];
      --i;
    }
    l.dims[i] = c;
  }
  // Merge dim k + 1 into dim k where both sides continue.
  int n = 0;
  for (int k = 0; k < l.ndim; ++k) {
    if (n > 0) {
      CopyDim& inner = l.dims[n - 1];
      const CopyDim& outer = l.dims[k];
      if (outer.out_stride == inner.out_stride * inner.size && outer.in_stride == inner.in_stride * inner.size) {
        inner.size *= outer.size;
        continue;
      }
    }
    l.dims[n++] = l.dims[k];
  }
  l.ndim = n;
  return l;
}

namespace detail {

inline constexpr int64_t kTile = 64;

// Offsets of element `index` of the dims [first, ndim) (row-major over them, outermost last).
inline void outer_offsets(const CopyLayout& l, int first, int64_t index, int skip, int64_t& out, int64_t& in) {
  out = 0;
  in = 0;
  for (int k = first; k < l.ndim; ++k) {
    if (k == skip) continue;
    const int64_t i = index % l.dims[k].size;
    index /= l.dims[k].size;
    out += i * l.dims[k].out_stride;
    in += i * l.dims[k].in_stride;
  }
}

inline int64_t outer_count(const CopyLayout& l, int first, int skip) {
  int64_t n = 1;
  for (int k = first; k < l.ndim; ++k)
    if (k != skip) n *= l.dims[k].size;
  return n;
}

}  // namespace detail

// Copies over the layout: out[...] = convert(in[...]). D and S are the element types.
template <typename D, typename S, typename Convert>
void copy_strided(D* out, const S* in, const CopyLayout& l, Convert convert) {
  if (l.ndim == 0) {
    *out = convert(*in);
    return;
  }
  const CopyDim inner = l.dims[0];
  // The source's unit-stride dim, when it is not the output's inner one: a transpose.
  int source_inner = -1;
  if (inner.in_stride != 1) {
    for (int k = 1; k < l.ndim && source_inner < 0; ++k) {
      if (l.dims[k].in_stride == 1) source_inner = k;
    }
  }
  if (source_inner < 0) {
    // Rows along the output's inner dim, in pieces of at most kParallelGrain elements, so that a
    // few long rows (one, for a contiguous tensor converted to another dtype) still spread over
    // the threads.
    const int64_t rows = detail::outer_count(l, 1, -1);
    const int64_t pieces = (inner.size + kParallelGrain - 1) / kParallelGrain;
    const int64_t piece = (inner.size + pieces - 1) / pieces;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(piece, 1));
    parallel_for(0, rows * pieces, grain, [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t r = job / pieces, e0 = (job % pieces) * piece, e1 = std::min(inner.size, e0 + piece);
        int64_t o = 0, i = 0;
        detail::outer_offsets(l, 1, r, -1, o, i);
        const int64_t os = inner.out_stride, is = inner.in_stride;
        D* dst = out + o + e0 * os;
        const S* src = in + i + e0 * is;
        const int64_t n = e1 - e0;
        if (os == 1 && is == 1) {
          if constexpr (std::is_same_v<D, S>) {
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(D));
          } else {
            // Unit strides known to the compiler: the conversion vectorizes.
            for (int64_t e = 0; e < n; ++e) dst[e] = convert(src[e]);
          }
          continue;
        }
        for (int64_t e = 0; e < n; ++e) dst[e * os] = convert(src[e * is]);
      }
    });
    return;
  }
  // Tiles over (inner, source_inner); the other dims outside.
  const CopyDim across = l.dims[source_inner];
  const int64_t tiles_i = (inner.size + detail::kTile - 1) / detail::kTile;
  const int64_t tiles_j = (across.size + detail::kTile - 1) / detail::kTile;
  const int64_t outer = detail::outer_count(l, 1, source_inner);
  const int64_t jobs = outer * tiles_j * tiles_i;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (detail::kTile * detail::kTile));
  parallel_for(0, jobs, grain, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      const int64_t ti = job % tiles_i, tj = (job / tiles_i) % tiles_j, r = job / (tiles_i * tiles_j);
      int64_t o = 0, i = 0;
      detail::outer_offsets(l, 1, r, source_inner, o, i);
      const int64_t i0 = ti * detail::kTile, i1 = std::min(inner.size, i0 + detail::kTile);
      const int64_t j0 = tj * detail::kTile, j1 = std::min(across.size, j0 + detail::kTile);
      // Output rows along `across`, each written along `inner`; the tile's source lines (one per
      // element of `inner`, kTile elements of `across` each) stay in L1 across the rows.
      for (int64_t j = j0; j < j1; ++j) {
        D* dst = out + o + j * across.out_stride;
        const S* src = in + i + j;  // across.in_stride == 1
        for (int64_t e = i0; e < i1; ++e) dst[e * inner.out_stride] = convert(src[e * inner.in_stride]);
      }
    }
  });
}

}  // namespace anatomy::cpu

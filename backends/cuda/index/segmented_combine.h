// Internal to index/: included by the room's own files only (its launcher header is launch.h).
// The segmented combine of the sorted scatter (Note [Sorted scatter on CUDA],
// index_scatter_sorted.cu): entries sorted by their target, equal targets in the CPU's order,
// combined per target without atomics, in levels of fixed shape. Written once for the device
// kernels and for a CPU test that runs every "thread" of every level in a loop
// (tests/core/test_segmented_combine.cpp): plain arrays and ANATOMY_HOST_DEVICE functions,
// nothing that needs CUDA or fmt.
//
// Note [Segmented combine in levels]
//   A level is a sequence of m entries, each a key (a dst element), a value and flags: valid,
//   starts (the first piece of its key's segment) and ends (the last). The valid entries, in
//   order, are the pieces of the segments not yet written, each segment's pieces adjacent.
//   Level 0 is the sorted entries themselves, every segment whole.
//   Thread t of a level walks the kSegmentChunk entries of its chunk in order, skipping invalid
//   ones, and combines the runs it meets with scatter_combine (associative in every mode:
//   Assign keeps the right operand, max and min the first of equal values, NaN the canonical
//   one). A run that both starts and ends inside the chunk is complete: the thread writes
//   dst[key] = scatter_combine(dst[key], total), and no other thread writes that element. A run
//   still open at the chunk's beginning (no start seen) becomes slot 2t of the next level (ends
//   set when its end was seen); the run open at the chunk's end becomes slot 2t + 1 (starts
//   set); a chunk that is one open piece throughout fills slot 2t only. Unused slots are
//   invalid. So the next level, of 2 * ceil(m / kSegmentChunk) slots, again holds each open
//   segment's pieces in order and adjacent, its first piece starting and its last ending.
//   Levels repeat until one has at most kSegmentChunk entries: its one thread sees every
//   remaining segment whole and completes them all. The level sizes follow from the entry count
//   alone, so the host queues every level without reading anything back.
//   The association is fixed (left to right in a chunk, then the chunks' partials left to
//   right), so results do not change from run to run; integers (wrapping), bool, Assign, max
//   and min are the sequential fold's exactly, floating sums and products round differently.
#pragma once

#include <cstdint>

#include "anatomy/core/macros.h"
#include "anatomy/dispatch/ops/scatter_functors.h"

namespace anatomy::cuda {

// Entries walked by one thread of a level.
inline constexpr int64_t kSegmentChunk = 32;

// SegmentPiece::flags.
inline constexpr uint8_t kPieceValid = 1;
inline constexpr uint8_t kPieceStarts = 2;
inline constexpr uint8_t kPieceEnds = 4;

// One entry of a level: a value (or a partial combination of a segment's values) for dst
// element `key`.
template <typename T>
struct SegmentPiece {
  uint64_t key;
  T value;
  uint8_t flags;  // kPiece* bits; 0 for an unused slot
};

// The threads (chunks) of a level of m entries.
ANATOMY_HOST_DEVICE constexpr int64_t segment_chunks(int64_t m) { return (m + kSegmentChunk - 1) / kSegmentChunk; }

// The slots that a level of m entries writes for the next one.
ANATOMY_HOST_DEVICE constexpr int64_t next_level_size(int64_t m) { return 2 * segment_chunks(m); }

// The slots of the two buffers the levels of n entries write into, alternately: level 0 writes
// buffer 0, level 1 buffer 1, level 2 buffer 0 again, ... (a level reads the other one).
struct SegmentBuffers {
  int64_t size[2];
};
constexpr SegmentBuffers segment_buffers(int64_t n) {
  const int64_t first = next_level_size(n);
  return {{first, next_level_size(first)}};
}

// Calls level(l, m) for each level l = 0, 1, ... of a combine over n > 0 sorted entries, m being
// its entry count: n for level 0, next_level_size of the previous one's after; the last has
// m <= kSegmentChunk. Level l writes buffer l % 2 of segment_buffers(n).
template <typename F>
void for_each_segment_level(int64_t n, F&& level) {
  int64_t m = n;
  for (int l = 0;; ++l) {
    level(l, m);
    if (m <= kSegmentChunk) return;
    m = next_level_size(m);
  }
}

// The entries of a later level: the slots the previous level wrote.
template <typename T>
struct PieceEntries {
  const SegmentPiece<T>* pieces;

  ANATOMY_HOST_DEVICE SegmentPiece<T> operator()(int64_t i) const { return pieces[i]; }
};

// One chunk's walk (Note [Segmented combine in levels]): entries are added in order; runs that
// start and end in the chunk go to write(key, total), and finish() leaves the open pieces in
// slots 2 * chunk and 2 * chunk + 1 of the next level.
template <ScatterMode Mode, typename T>
struct ChunkCombiner {
  SegmentPiece<T> left{}, right{};  // invalid unless a piece is left open
  SegmentPiece<T> run{};
  bool open = false;     // a run is being combined
  bool started = false;  // ... and its start is in this chunk

  template <typename Write>
  ANATOMY_HOST_DEVICE void add(const SegmentPiece<T>& e, const Write& write) {
    if ((e.flags & kPieceValid) == 0) return;
    if ((e.flags & kPieceStarts) != 0 || !open) {
      run = e;
      open = true;
      started = (e.flags & kPieceStarts) != 0;
    } else {
      run.value = scatter_combine<Mode, T>(run.value, e.value);
    }
    if ((e.flags & kPieceEnds) != 0) {
      if (started) write(run.key, run.value);
      else left = {run.key, run.value, static_cast<uint8_t>(kPieceValid | kPieceEnds)};
      open = false;
    }
  }

  ANATOMY_HOST_DEVICE void finish(SegmentPiece<T>* next, int64_t chunk) {
    if (open) {
      if (started) right = {run.key, run.value, static_cast<uint8_t>(kPieceValid | kPieceStarts)};
      else left = {run.key, run.value, kPieceValid};  // the whole chunk is inside one segment
    }
    next[2 * chunk] = left;
    next[2 * chunk + 1] = right;
  }
};

// Thread `chunk` of a later level of m entries: completes the runs that start and end in its
// chunk through write(key, total) and writes slots 2 * chunk and 2 * chunk + 1 of `next`.
template <ScatterMode Mode, typename T, typename Entries, typename Write>
ANATOMY_HOST_DEVICE void combine_segment_chunk(const Entries& entries, int64_t m, int64_t chunk, SegmentPiece<T>* next,
                                               const Write& write) {
  const int64_t begin = chunk * kSegmentChunk;
  const int64_t end = begin + kSegmentChunk < m ? begin + kSegmentChunk : m;
  ChunkCombiner<Mode, T> c;
  for (int64_t i = begin; i < end; ++i) c.add(entries(i), write);
  c.finish(next, chunk);
}

// Level 0 reads its chunk in groups of kSortedGroup entries; on the device one group of keys or
// of values is one aligned load of up to 16 bytes (two for 8-byte keys), so that a thread's walk
// moves whole sectors rather than one element per load instruction.
inline constexpr int kSortedGroup = 4;
static_assert(kSegmentChunk % kSortedGroup == 0);

template <typename X>
struct alignas(sizeof(X) * kSortedGroup) SortedGroup {
  X v[kSortedGroup];
};

template <typename X>
ANATOMY_HOST_DEVICE SortedGroup<X> load_sorted_group(const X* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const SortedGroup<X>*>(p);  // p is a chunk's start plus whole groups
#else
  SortedGroup<X> g;  // the host's vectors promise no more than the element's alignment
  for (int j = 0; j < kSortedGroup; ++j) g.v[j] = p[j];
  return g;
#endif
}

// Thread `chunk` of level 0: the m entries are the sorted keys (any unsigned type; equal keys
// adjacent, in the CPU's order) and the values sorted with them; every entry is valid, and its
// start and end flags come from its neighbours' keys. Same contract as combine_segment_chunk.
// `keys` and `values` must be aligned to a group's bytes.
template <ScatterMode Mode, typename T, typename K, typename Write>
ANATOMY_HOST_DEVICE void combine_sorted_chunk(const K* keys, const T* values, int64_t m, int64_t chunk,
                                              SegmentPiece<T>* next, const Write& write) {
  const int64_t begin = chunk * kSegmentChunk;
  const int64_t end = begin + kSegmentChunk < m ? begin + kSegmentChunk : m;
  ChunkCombiner<Mode, T> c;
  // Entry i is added once entry i + 1's key tells whether i ends its segment.
  bool have = false;
  SegmentPiece<T> pending{};
  K pending_key{};
  bool has_prev = begin > 0;
  K prev = has_prev ? keys[begin - 1] : K{};
  const auto take = [&](K key, T value) {
    if (have) {
      if (key != pending_key) pending.flags |= kPieceEnds;
      c.add(pending, write);
    }
    pending = {static_cast<uint64_t>(key), value,
               static_cast<uint8_t>(kPieceValid | (!has_prev || prev != key ? kPieceStarts : 0))};
    pending_key = key;
    have = true;
    prev = key;
    has_prev = true;
  };
  if (end - begin == kSegmentChunk) {
    for (int64_t g = begin; g < end; g += kSortedGroup) {
      const SortedGroup<K> k = load_sorted_group(keys + g);
      const SortedGroup<T> v = load_sorted_group(values + g);
      for (int j = 0; j < kSortedGroup; ++j) take(k.v[j], v.v[j]);
    }
  } else {
    for (int64_t i = begin; i < end; ++i) take(keys[i], values[i]);
  }
  if (have) {
    if (end == m || keys[end] != pending_key) pending.flags |= kPieceEnds;
    c.add(pending, write);
  }
  c.finish(next, chunk);
}

}  // namespace anatomy::cuda

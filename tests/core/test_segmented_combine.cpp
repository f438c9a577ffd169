// The segmented combine of the sorted CUDA scatter (backends/cuda/index/segmented_combine.h,
// Note [Segmented combine in levels]) run on the CPU: every thread of every level is one call
// in a loop, in a shuffled order (the threads of a level are independent on the device), over
// the sorted (key, position) pairs of random entries, and the result is compared with the
// sequential fold the CPU's scatter does (each entry in position order combined into its
// target). Integers and max, min and assignment must match exactly, floating sums and products
// closely; every target that receives values is written exactly once, the others never, and the
// last level leaves nothing open. No GPU is needed: this is the proof of the kernels' logic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "anatomy/backends/cuda/index/segmented_combine.h"

using namespace anatomy;
using namespace anatomy::cuda;

namespace {

constexpr int64_t C = kSegmentChunk;

// The entries of one case: entry e targets keys[e] (in [0, targets)).
struct Case {
  const char* label;
  std::vector<uint64_t> keys;
  int64_t targets = 0;
};

// Segments of the given lengths, laid out in that order once sorted (segment s has key s), the
// entries themselves in a random order (so positions and values are shuffled against keys).
Case segments(const char* label, const std::vector<int64_t>& lengths, std::mt19937_64& rng) {
  Case c{label, {}, static_cast<int64_t>(lengths.size())};
  for (size_t s = 0; s < lengths.size(); ++s) c.keys.insert(c.keys.end(), lengths[s], s);
  std::shuffle(c.keys.begin(), c.keys.end(), rng);
  return c;
}

Case random_keys(const char* label, int64_t n, int64_t targets, std::mt19937_64& rng) {
  Case c{label, std::vector<uint64_t>(n), targets};
  std::uniform_int_distribution<int64_t> pick(0, targets - 1);
  for (uint64_t& k : c.keys) k = pick(rng);
  return c;
}

std::vector<Case> cases() {
  std::mt19937_64 rng(20);
  std::vector<Case> out;
  out.push_back({"no entries", {}, 4});
  for (int64_t n : {int64_t{1}, C - 1, C, C + 1, 2 * C, C * C + 1}) {
    out.push_back(random_keys("few keys", n, 3, rng));
    Case distinct{"all distinct", std::vector<uint64_t>(n), n};
    std::iota(distinct.keys.begin(), distinct.keys.end(), 0);
    std::shuffle(distinct.keys.begin(), distinct.keys.end(), rng);
    out.push_back(distinct);
    out.push_back(segments("one segment", {n}, rng));
  }
  // One long segment: four levels.
  out.push_back(segments("one segment of 100K", {100000}, rng));
  out.push_back(segments("one segment of 100K between two singles", {1, 100000, 1}, rng));
  // Segment lengths around the chunk and the chunk-of-chunks boundaries, starting at every
  // offset into a chunk.
  const std::vector<int64_t> around = {1,         2,     C - 1,     C,     C + 1,     2 * C - 1,     2 * C,
                                       2 * C + 1, C * C, C * C - 1, C * C, C * C + 1, 2 * C * C + 3, 1};
  for (int64_t offset = 0; offset <= C; ++offset) {
    std::vector<int64_t> lengths;
    if (offset > 0) lengths.push_back(offset);
    lengths.insert(lengths.end(), around.begin(), around.end());
    out.push_back(segments("lengths around C and C^2", lengths, rng));
  }
  std::vector<int64_t> mixed(300);
  std::uniform_int_distribution<int64_t> length(1, 3 * C);
  for (int64_t& l : mixed) l = length(rng);
  out.push_back(segments("300 segments of 1 to 3C", mixed, rng));
  out.push_back(random_keys("100K entries into 1000 targets", 100000, 1000, rng));
  out.push_back(random_keys("100K entries into 100K targets", 100000, 100000, rng));
  out.push_back(random_keys("100K entries into 7 targets", 100000, 7, rng));
  return out;
}

template <typename T>
std::vector<T> random_values(size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, int64_t>) {
    // The whole range: sums and products wrap.
    for (T& x : v) x = static_cast<int64_t>(rng());
  } else {
    // Mixed signs and magnitudes, a NaN now and then (max and min propagate it).
    std::normal_distribution<double> normal;
    std::uniform_int_distribution<int> one_in(0, 999);
    for (T& x : v) {
      x = one_in(rng) == 0 ? std::numeric_limits<double>::quiet_NaN() : normal(rng) * std::exp2(normal(rng));
    }
  }
  return v;
}

// Products of many values stay finite when the factors are near 1.
std::vector<double> factors(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> near_one(0.999, 1.001);
  std::vector<double> v(n);
  for (double& x : v) x = near_one(rng);
  return v;
}

// The CPU's scatter: each entry, in position order, combined into its target.
template <ScatterMode Mode, typename T>
std::vector<T> sequential(const Case& c, const std::vector<T>& values, std::vector<T> dst) {
  for (size_t e = 0; e < c.keys.size(); ++e) dst[c.keys[e]] = scatter_combine<Mode, T>(dst[c.keys[e]], values[e]);
  return dst;
}

// The sorted path on the CPU: the entries' stable order by key (what the radix sort gives),
// then every level's threads in a shuffled order. `writes` counts the writes of each target.
template <ScatterMode Mode, typename T, typename K>
std::vector<T> in_levels(const Case& c, const std::vector<T>& values, std::vector<T> dst, std::vector<int>& writes,
                         std::mt19937_64& rng) {
  const int64_t n = static_cast<int64_t>(c.keys.size());
  std::vector<uint32_t> pos(n);
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](uint32_t a, uint32_t b) { return c.keys[a] < c.keys[b]; });
  std::vector<K> keys(n);
  std::vector<T> sorted_values(n);
  for (int64_t i = 0; i < n; ++i) {
    keys[i] = static_cast<K>(c.keys[pos[i]]);
    sorted_values[i] = values[pos[i]];
  }
  writes.assign(dst.size(), 0);
  if (n == 0) return dst;

  const SegmentBuffers sizes = segment_buffers(n);
  // Slots nobody wrote read as valid garbage, so a level that read one would fail.
  const SegmentPiece<T> garbage{~uint64_t{0}, T{}, 0xff};
  std::vector<SegmentPiece<T>> buffers[2] = {std::vector<SegmentPiece<T>>(sizes.size[0], garbage),
                                             std::vector<SegmentPiece<T>>(sizes.size[1], garbage)};
  int64_t bad_keys = 0;
  const auto write = [&](uint64_t key, T total) {
    if (key >= dst.size()) {
      ++bad_keys;
      return;
    }
    ++writes[key];
    dst[key] = scatter_combine<Mode, T>(dst[key], total);
  };
  int last_level = -1;
  int64_t last_m = 0;
  for_each_segment_level(n, [&](int l, int64_t m) {
    REQUIRE(l == last_level + 1);
    REQUIRE(next_level_size(m) <= sizes.size[l % 2]);
    std::vector<int64_t> chunks(segment_chunks(m));
    std::iota(chunks.begin(), chunks.end(), 0);
    std::shuffle(chunks.begin(), chunks.end(), rng);
    SegmentPiece<T>* next = buffers[l % 2].data();
    for (int64_t t : chunks) {
      if (l == 0) {
        combine_sorted_chunk<Mode, T>(keys.data(), sorted_values.data(), m, t, next, write);
      } else {
        combine_segment_chunk<Mode, T>(PieceEntries<T>{buffers[(l + 1) % 2].data()}, m, t, next, write);
      }
    }
    last_level = l;
    last_m = m;
  });
  CHECK(bad_keys == 0);
  REQUIRE(last_m <= C);
  for (int64_t i = 0; i < next_level_size(last_m); ++i) CHECK(buffers[last_level % 2][i].flags == 0);
  return dst;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <ScatterMode Mode, typename T, typename K>
void check_case(const Case& c, const std::vector<T>& values, std::mt19937_64& rng) {
  constexpr bool kProduct = Mode == ScatterMode::Multiply;
  const std::vector<T> init =
      std::is_same_v<T, double> && kProduct ? std::vector<T>(c.targets, T(1)) : random_values<T>(c.targets, rng);
  std::vector<int> writes;
  const std::vector<T> want = sequential<Mode, T>(c, values, init);
  const std::vector<T> got = in_levels<Mode, T, K>(c, values, init, writes, rng);
  // Per target: how many values it receives, and the sum of their magnitudes (with its own).
  std::vector<int64_t> count(c.targets, 0);
  std::vector<double> magnitude(c.targets, 0.0);
  for (int64_t k = 0; k < c.targets; ++k) magnitude[k] = std::abs(static_cast<double>(init[k]));
  for (size_t e = 0; e < c.keys.size(); ++e) {
    ++count[c.keys[e]];
    magnitude[c.keys[e]] += std::abs(static_cast<double>(values[e]));
  }
  const bool exact = std::is_integral_v<T> || (Mode != ScatterMode::Add && !kProduct);
  int64_t wrong = 0, wrong_writes = 0;
  for (int64_t k = 0; k < c.targets; ++k) {
    if (writes[k] != (count[k] > 0 ? 1 : 0)) ++wrong_writes;
    if (exact) {
      wrong += same_bits(got[k], want[k]) ? 0 : 1;
      continue;
    }
    // Another association rounds differently: at most an ulp of the magnitudes per value combined
    // (a value dropped or counted twice is far outside this).
    const double w = static_cast<double>(want[k]), g = static_cast<double>(got[k]);
    const double scale = kProduct ? std::abs(w) : magnitude[k];
    const double tol = 2 * std::numeric_limits<double>::epsilon() * static_cast<double>(count[k] + 1) * scale;
    const bool ok = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= tol;
    wrong += ok ? 0 : 1;
  }
  CHECK(wrong_writes == 0);
  CHECK(wrong == 0);
}

template <ScatterMode Mode, typename T>
void check_all() {
  std::mt19937_64 rng(21);
  for (const Case& c : cases()) {
    CAPTURE(c.label);
    CAPTURE(c.keys.size());
    std::vector<T> values;
    if constexpr (std::is_same_v<T, double> && Mode == ScatterMode::Multiply) values = factors(c.keys.size(), rng);
    else values = random_values<T>(c.keys.size(), rng);
    check_case<Mode, T, uint32_t>(c, values, rng);
    check_case<Mode, T, uint64_t>(c, values, rng);
  }
}

}  // namespace

TEST_CASE("segmented combine: the level sizes of 16M entries, and the buffers they need") {
  std::vector<int64_t> sizes;
  for_each_segment_level(int64_t{1} << 24, [&](int, int64_t m) { sizes.push_back(m); });
  CHECK(sizes == std::vector<int64_t>{1 << 24, 1 << 20, 1 << 16, 1 << 12, 256, 16});
  CHECK(segment_buffers(int64_t{1} << 24).size[0] == 1 << 20);
  CHECK(segment_buffers(int64_t{1} << 24).size[1] == 1 << 16);
  sizes.clear();
  for_each_segment_level(1, [&](int, int64_t m) { sizes.push_back(m); });
  CHECK(sizes == std::vector<int64_t>{1});
  sizes.clear();
  for_each_segment_level(C + 1, [&](int, int64_t m) { sizes.push_back(m); });
  CHECK(sizes == std::vector<int64_t>{C + 1, 4});
}

TEST_CASE("segmented combine: int64 sums, products, max, min and last writes are the sequential fold's exactly") {
  check_all<ScatterMode::Add, int64_t>();
  check_all<ScatterMode::Multiply, int64_t>();
  check_all<ScatterMode::Max, int64_t>();
  check_all<ScatterMode::Min, int64_t>();
  check_all<ScatterMode::Assign, int64_t>();
}

TEST_CASE("segmented combine: double max, min and last writes exactly (NaN included), sums and products closely") {
  check_all<ScatterMode::Max, double>();
  check_all<ScatterMode::Min, double>();
  check_all<ScatterMode::Assign, double>();
  check_all<ScatterMode::Add, double>();
  check_all<ScatterMode::Multiply, double>();
}

TEST_CASE("segmented combine: a chunk's slots for each shape of run it sees") {
  // Level 0 of a hand-made sequence, C entries a chunk: what each chunk leaves open.
  std::vector<uint32_t> keys;
  keys.insert(keys.end(), C / 2, 0);                    // chunk 0: key 0 starts and ...
  keys.insert(keys.end(), 2 * C, 1);                    // ... key 1 runs through chunk 1 into chunk 2,
  keys.insert(keys.end(), C / 2, 2);                    // key 2 completes inside chunk 2
  const int64_t n = static_cast<int64_t>(keys.size());  // 3 C
  const std::vector<int64_t> ones(n, 1);
  std::vector<SegmentPiece<int64_t>> next(next_level_size(n));
  std::vector<int64_t> dst(3, 100);
  const auto write = [&](uint64_t key, int64_t total) { dst[key] += total; };
  for (int64_t t = 0; t < segment_chunks(n); ++t) {
    combine_sorted_chunk<ScatterMode::Add, int64_t>(keys.data(), ones.data(), n, t, next.data(), write);
  }
  // Chunk 0: key 0 complete (C/2 ones), key 1's first C/2 open at the end.
  CHECK(dst[0] == 100 + C / 2);
  CHECK(next[0].flags == 0);
  CHECK(next[1].flags == (kPieceValid | kPieceStarts));
  CHECK(next[1].key == 1);
  CHECK(next[1].value == C / 2);
  // Chunk 1: one piece of key 1 throughout.
  CHECK(next[2].flags == kPieceValid);
  CHECK(next[2].value == C);
  CHECK(next[3].flags == 0);
  // Chunk 2: key 1's last C/2 end it, key 2 complete.
  CHECK(next[4].flags == (kPieceValid | kPieceEnds));
  CHECK(next[4].value == C / 2);
  CHECK(next[5].flags == 0);
  CHECK(dst[2] == 100 + C / 2);
  CHECK(dst[1] == 100);  // written by the next level only
  std::vector<SegmentPiece<int64_t>> last(2);
  combine_segment_chunk<ScatterMode::Add, int64_t>(PieceEntries<int64_t>{next.data()}, next_level_size(n), 0,
                                                   last.data(), write);
  CHECK(last[0].flags == 0);
  CHECK(last[1].flags == 0);
  CHECK(dst[1] == 100 + 2 * C);
}

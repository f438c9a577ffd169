// GPU tests of sort, argsort and topk on CUDA against the CPU, bit for bit (values and
// indices): every dtype with many ties, NaN of both signs, +-0.0, +-inf and the integer extremes;
// both directions; dims not innermost, transposed and sliced inputs; one row (one sort pass) and
// many rows (two passes, Note [CUDA sort paths]), rows longer than a block; zero-size and 0-dim
// tensors; topk with k = 0, 1, n and sorted=false, and few picks from many long rows (one block a
// row); the CPU's errors; and, on the host, the key map.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "anatomy/backends/cuda/sort/sort_keys.cuh"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

// Values drawn mostly from a small pool, so rows hold many ties, with the special values of the
// dtype mixed in: NaN (both signs), +-inf, +-0.0 for floats; the extremes for integers.
Tensor tie_sample(IntArrayRef sizes, DType d, uint64_t seed) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 15);
  if (is_floating(d)) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const std::vector<double> pool = {nan, -nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.25, 3.0, 1e-3};
    std::normal_distribution<double> normal(0.0, 10.0);
    std::vector<double> v(static_cast<size_t>(numel));
    for (double& x : v) {
      const int p = pick(rng);
      x = p < static_cast<int>(pool.size()) ? pool[p] : normal(rng);
    }
    return tensor(v, sizes, TensorOptions().dtype(DType::Float64)).to(d);
  }
  std::vector<int64_t> pool;
  std::uniform_int_distribution<int64_t> small(0, 20);
  int64_t lo = -10;
  switch (d) {
    case DType::Bool:
      pool = {0, 1};
      lo = 0;
      break;
    case DType::UInt8:
      pool = {0, 255, 1, 254};
      lo = 0;
      break;
    case DType::Int8:
      pool = {-128, 127, 0, -1};
      break;
    case DType::Int32:
      pool = {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0, -1};
      break;
    default:
      pool = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0, -1};
      break;
  }
  std::vector<int64_t> v(static_cast<size_t>(numel));
  for (int64_t& x : v) {
    const int p = pick(rng);
    x = p < static_cast<int>(pool.size()) ? pool[p] : (d == DType::Bool ? small(rng) % 2 : lo + small(rng));
  }
  return tensor(v, sizes, TensorOptions().dtype(DType::Int64)).to(d);
}

std::string label(const std::string& what, DType d, int64_t dim, bool flag) {
  return what + " " + std::string(name(d)) + " dim " + std::to_string(dim) + (flag ? " (descending/largest)" : "");
}

// sort and argsort of the CUDA view g against the CPU view x, both directions.
void check_sort(const Tensor& x, const Tensor& g, int64_t dim, const std::string& what) {
  for (bool descending : {false, true}) {
    const std::string where = label(what, x.dtype(), dim, descending);
    const auto [cv, ci] = x.sort(dim, descending);
    const auto [gv, gi] = g.sort(dim, descending);
    CHECK_MESSAGE(gv.is_cuda(), where);
    CHECK_MESSAGE(gv.is_contiguous(), where);
    CHECK_MESSAGE(same_values(gv, cv), "sort values ", where);
    CHECK_MESSAGE(same_values(gi, ci), "sort indices ", where);
    CHECK_MESSAGE(same_values(g.argsort(dim, descending), ci), "argsort ", where);
  }
}

// topk of the CUDA view g against the CPU view x for each k, largest and smallest, sorted or not.
void check_topk(const Tensor& x, const Tensor& g, int64_t dim, const std::vector<int64_t>& ks,
                const std::string& what) {
  for (int64_t k : ks) {
    for (bool largest : {false, true}) {
      for (bool sorted : {true, false}) {
        const std::string where =
            label(what, x.dtype(), dim, largest) + " k " + std::to_string(k) + (sorted ? "" : " unsorted");
        const auto [cv, ci] = x.topk(k, dim, largest, sorted);
        const auto [gv, gi] = g.topk(k, dim, largest, sorted);
        CHECK_MESSAGE(gv.is_cuda(), where);
        CHECK_MESSAGE(same_values(gv, cv), "topk values ", where);
        CHECK_MESSAGE(same_values(gi, ci), "topk indices ", where);
      }
    }
  }
}

// The positions of a 1-d CPU tensor's elements stably sorted by their CUDA keys (sort_keys.cuh),
// computed on the host.
template <typename U>
std::vector<int64_t> order_by_keys(const Tensor& x, bool descending) {
  const Tensor host = x.contiguous();
  const int64_t n = host.numel();
  std::vector<U> keys(static_cast<size_t>(n));
  const cuda::KeyRule rule = cuda::key_rule(x.dtype(), descending);
  for (int64_t i = 0; i < n; ++i) {
    U bits;
    std::memcpy(&bits, static_cast<const char*>(host.data_ptr()) + i * sizeof(U), sizeof(U));
    keys[i] = cuda::order_key<U>(bits, rule);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  return order;
}

std::vector<int64_t> order_by_keys(const Tensor& x, bool descending) {
  switch (x.element_size()) {
    case 1:
      return order_by_keys<uint8_t>(x, descending);
    case 2:
      return order_by_keys<uint16_t>(x, descending);
    case 4:
      return order_by_keys<uint32_t>(x, descending);
    default:
      return order_by_keys<uint64_t>(x, descending);
  }
}

}  // namespace

// The key map alone, on the host (order_key is a host and device function), so it needs no GPU:
// a stable sort by key must be the CPU's sort, ties, NaN, -0.0 and the extremes included.
TEST_CASE("cuda sort keys: a stable sort by key is the CPU's order for every dtype") {
  uint64_t seed = 300;
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor x = tie_sample({2000}, d, seed++);
    for (bool descending : {false, true}) {
      CAPTURE(descending);
      const Tensor want = std::get<1>(x.sort(0, descending));
      const std::vector<int64_t> got = order_by_keys(x, descending);
      CHECK(std::equal(got.begin(), got.end(), static_cast<const int64_t*>(want.data_ptr())));
    }
  }
}

TEST_CASE("cuda sort: every dtype, ties and special values match the CPU in both directions") {
  ANATOMY_REQUIRE_GPU();
  uint64_t seed = 1;
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor x = tie_sample({6, 7, 40}, d, seed++);
    const Tensor g = x.to(kCuda);
    for (int64_t dim : {2, 1, 0, -1}) check_sort(x, g, dim, "3-d");
    check_sort(x.transpose(0, 2), g.transpose(0, 2), 1, "transposed");
    check_sort(x.slice(2, 3, 37, 3).slice(0, 1, 5), g.slice(2, 3, 37, 3).slice(0, 1, 5), 2, "sliced");
    check_sort(x.slice(1, 2, 3), g.slice(1, 2, 3), 1, "rows of one");
    // Stride 0 along the sorted dim and across rows: every row is one repeated value.
    check_sort(x.slice(2, 4, 5).expand({6, 7, 9}), g.slice(2, 4, 5).expand({6, 7, 9}), 2, "expanded");
    check_sort(x.slice(0, 1, 2).expand({4, 7, 40}), g.slice(0, 1, 2).expand({4, 7, 40}), 0, "expanded rows");
    const Tensor scalar = tie_sample({}, d, seed++);
    check_sort(scalar, scalar.to(kCuda), 0, "0-dim");
    check_sort(scalar, scalar.to(kCuda), -1, "0-dim");
    for (const Tensor& e : {tie_sample({0, 5}, d, 0), tie_sample({5, 0}, d, 0)}) {
      check_sort(e, e.to(kCuda), 0, "zero-size");
      check_sort(e, e.to(kCuda), 1, "zero-size");
    }
  }
}

TEST_CASE("cuda sort: long rows, a few long rows and many short rows match the CPU") {
  ANATOMY_REQUIRE_GPU();
  uint64_t seed = 100;
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    // One row: the sort by key alone.
    const Tensor one = tie_sample({100000}, d, seed++);
    check_sort(one, one.to(kCuda), 0, "one row of 100000");
    // A few rows longer than a block, then many short rows: sorted by key, then by row.
    const Tensor few = tie_sample({3, 100000}, d, seed++);
    check_sort(few, few.to(kCuda), 1, "3 rows of 100000");
    const Tensor few_long = tie_sample({200000, 3}, d, seed++);
    check_sort(few_long, few_long.to(kCuda), 0, "3 rows of 200000, not innermost");
    // Many short rows, innermost and not.
    const Tensor many = tie_sample({20000, 3}, d, seed++);
    const Tensor gmany = many.to(kCuda);
    check_sort(many, gmany, 1, "20000 rows of 3");
    check_sort(many.t(), gmany.t(), 1, "20000 rows of 3, transposed");
    const Tensor mid = tie_sample({3000, 300}, d, seed++);
    check_sort(mid, mid.to(kCuda), 1, "3000 rows of 300");
  }
}

TEST_CASE("cuda topk: every dtype, k and order matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  uint64_t seed = 200;
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor x = tie_sample({5, 33, 4}, d, seed++);
    const Tensor g = x.to(kCuda);
    check_topk(x, g, 1, {0, 1, 2, 7, 32, 33}, "rows of 33, dim 1");
    check_topk(x, g, 2, {0, 1, 3, 4}, "rows of 4, last dim");
    check_topk(x, g, 0, {2, 5}, "rows of 5, first dim");
    check_topk(x.transpose(0, 1), g.transpose(0, 1), 0, {1, 10}, "transposed");
    check_topk(x.slice(1, 1, 30, 2), g.slice(1, 1, 30, 2), 1, {3, 15}, "sliced");
    check_topk(x.slice(1, 0, 1).expand({5, 9, 4}), g.slice(1, 0, 1).expand({5, 9, 4}), 1, {4, 9}, "expanded");
    const Tensor scalar = tie_sample({}, d, seed++);
    check_topk(scalar, scalar.to(kCuda), 0, {1}, "0-dim");
    const Tensor e = tie_sample({0, 6}, d, 0);
    check_topk(e, e.to(kCuda), 1, {0, 3, 6}, "zero-size");
    const Tensor zero_rows = tie_sample({4, 0}, d, 0);
    check_topk(zero_rows, zero_rows.to(kCuda), 1, {0}, "empty rows");
    const Tensor big = tie_sample({2, 150000}, d, seed++);
    check_topk(big, big.to(kCuda), 1, {1, 100, 150000}, "long rows");
    const Tensor many = tie_sample({10000, 20}, d, seed++);
    check_topk(many, many.to(kCuda), 1, {1, 5, 20}, "many short rows");
    // Few picks from many long rows: one block a row (topk_small.cu); k = 17 sorts instead.
    const Tensor wide = tie_sample({40, 3000}, d, seed++);
    check_topk(wide, wide.to(kCuda), 1, {1, 5, 16, 17}, "40 rows of 3000");
    const Tensor tall = tie_sample({1500, 3, 40}, d, seed++);
    const Tensor gtall = tall.to(kCuda);
    check_topk(tall, gtall, 0, {2, 16}, "120 rows of 1500, first dim");
    check_topk(tall.slice(0, 7, 1500, 1), gtall.slice(0, 7, 1500, 1), 0, {3}, "120 sliced rows of 1493");
    const Tensor edge = tie_sample({32, 1024}, d, seed++);
    check_topk(edge, edge.to(kCuda), 1, {16}, "32 rows of 1024");
  }
}

TEST_CASE("cuda sort and topk: the CPU's errors") {
  ANATOMY_REQUIRE_GPU();
  const Tensor g = rand({3, 4}).to(kCuda);
  CHECK_THROWS_AS(g.sort(2), IndexError);
  CHECK_THROWS_AS(g.sort(-3), IndexError);
  CHECK_THROWS_AS(g.argsort(5), IndexError);
  CHECK_THROWS_AS(g.topk(1, 2), IndexError);
  CHECK_THROWS_AS(g.topk(5, 1), ValueError);
  CHECK_THROWS_AS(g.topk(-1, 1), ValueError);
  CHECK_THROWS_AS(rand({}).to(kCuda).topk(0), ValueError);
  CHECK_THROWS_AS(rand({}).to(kCuda).topk(2), ValueError);
  // The next call works normally.
  const auto [v, i] = g.topk(2, 1);
  const auto [cv, ci] = g.cpu().topk(2, 1);
  CHECK(same_values(v, cv));
  CHECK(same_values(i, ci));
}

TEST_CASE("cuda sort: results are the same bits run after run") {
  ANATOMY_REQUIRE_GPU();
  const Tensor g = tie_sample({64, 5000}, DType::Float32, 7).to(kCuda);
  const auto [v1, i1] = g.sort(1, true);
  const auto [v2, i2] = g.sort(1, true);
  CHECK(same_values(v1, v2));
  CHECK(same_values(i1, i2));
}

TEST_CASE("cuda sort and topk: NaN last, -0.0 equal to +0.0, ties in input order, written out") {
  ANATOMY_REQUIRE_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor g =
        tensor(std::vector<double>{nan, -0.0, 0.0, -inf, 1.0, nan, 1.0}, {7}, TensorOptions().dtype(DType::Float64))
            .to(d)
            .to(kCuda);
    const auto [av, ai] = g.sort(0, false);
    CHECK(gpu_test::values_of(ai) == std::vector<double>{3, 1, 2, 4, 6, 0, 5});
    CHECK(std::signbit(gpu_test::values_of(av)[1]));  // -0.0 keeps its sign and its place
    const auto [dv, di] = g.sort(0, true);
    CHECK(gpu_test::values_of(di) == std::vector<double>{0, 5, 4, 6, 1, 2, 3});
    const auto [tv, ti] = g.topk(3, 0, true, true);
    CHECK(gpu_test::values_of(ti) == std::vector<double>{0, 5, 4});
    const auto [uv, ui] = g.topk(3, 0, false, false);
    CHECK(gpu_test::values_of(ui) == std::vector<double>{1, 2, 3});  // -inf, -0.0, 0.0 in index order
  }
}

// Every sort and topk kernel on one small shape per key width (1, 2, 4 and 8 bytes): the radix
// passes, the one-block-per-row topk (topk_small.cu) and the sorted topk. The sweeps above repeat
// the same kernels over many shapes, which takes too long under compute-sanitizer racecheck;
// this is the racecheck's view of those kernels.
TEST_CASE("cuda sort and topk: each kernel once per key width") {
  ANATOMY_REQUIRE_GPU();
  uint64_t seed = 900;
  for (DType d : {DType::Int8, DType::Float16, DType::Float32, DType::Int64}) {
    CAPTURE(name(d));
    const Tensor wide = tie_sample({32, 1500}, d, seed++);
    const Tensor gwide = wide.to(kCuda);
    check_topk(wide, gwide, 1, {5, 17}, "32 rows of 1500");  // one block a row; k = 17 sorts
    check_sort(wide, gwide, 1, "32 rows of 1500");
    const Tensor many = tie_sample({500, 20}, d, seed++);
    check_topk(many, many.to(kCuda), 1, {3}, "many short rows");
    check_sort(many.t(), many.to(kCuda).t(), 0, "transposed short rows");
  }
}

// GPU tests of searchsorted and bucketize on CUDA against the CPU's: every dtype they take, both
// sides, out_int32, 1-d and N-d sequences, rows read through transposes, slices, offsets and
// broadcasts, a sorter (plain and strided), Scalar values and mixed dtypes, NaN, long rows and
// many values, a bad sorter entry raised at the next wait, the shared errors at the call, and
// that nothing waits (sync-debug error mode).
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::SyncDebugScope;
using gpu_test::to_cuda_same_layout;
using gpu_test::values_of;

namespace {

std::vector<DType> ordered_dtypes() {
  std::vector<DType> out;
  for (DType d : gpu_test::all_dtypes()) {
    if (d != DType::Bool) out.push_back(d);
  }
  return out;
}

Tensor sorted_rows(IntArrayRef sizes, DType d) { return std::get<0>(sort(gpu_test::sample(sizes, d), -1)); }

// searchsorted of the CPU tensors and of their copies on CUDA (same layouts) agree, both sides,
// both result dtypes.
void check_search(const Tensor& seq, const Tensor& values, const std::optional<Tensor>& sorter = std::nullopt) {
  const Tensor gseq = to_cuda_same_layout(seq), gvalues = to_cuda_same_layout(values);
  std::optional<Tensor> gsorter;
  if (sorter) gsorter = to_cuda_same_layout(*sorter);
  for (bool right : {false, true}) {
    for (bool out_int32 : {false, true}) {
      CAPTURE(right);
      CAPTURE(out_int32);
      const Tensor want = searchsorted(seq, values, out_int32, right, std::nullopt, sorter);
      const Tensor got = searchsorted(gseq, gvalues, out_int32, right, std::nullopt, gsorter);
      CHECK(got.is_cuda());
      CHECK(got.dtype() == want.dtype());
      CHECK(same_values(got, want));
    }
  }
}

}  // namespace

TEST_CASE("cuda searchsorted: every dtype, 1-d and N-d sequences, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : ordered_dtypes()) {
    CAPTURE(name(d));
    check_search(sorted_rows({9}, d), gpu_test::sample({4, 5}, d));           // one row for every value
    check_search(sorted_rows({3, 4, 7}, d), gpu_test::sample({3, 4, 5}, d));  // a row per leading index
    check_search(sorted_rows({8}, d), gpu_test::sample({}, d));               // 0-dim value
    check_search(sorted_rows({5}, d), gpu_test::sample({0, 3}, d));           // no values
    check_search(gpu_test::sample({0}, d), gpu_test::sample({2, 3}, d));      // empty sequence
    check_search(gpu_test::sample({3, 0}, d), gpu_test::sample({3, 4}, d));   // empty rows
    // Repeated boundaries: left and right differ at each of them.
    const Tensor few = randint(0, 4, {2, 12}, DType::Int64).to(d);
    check_search(std::get<0>(sort(few, -1)), randint(0, 5, {2, 6}, DType::Int64).to(d));
  }
}

TEST_CASE("cuda searchsorted: transposed, sliced, offset and broadcast operands") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Int32, DType::Float16, DType::UInt8, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor columns = std::get<0>(sort(gpu_test::sample({7, 3}, d), 0));
    check_search(columns.t(), gpu_test::sample({5, 3}, d).t());  // rows of stride 3
    check_search(sorted_rows({21}, d).slice(0, 1, std::nullopt, 2), gpu_test::sample({6, 8}, d).slice(1, 2));
    check_search(sorted_rows({7}, d), gpu_test::sample({1, 5}, d).expand({4, 5}));
    check_search(sorted_rows({2, 3, 9}, d).permute({1, 0, 2}).contiguous().permute({1, 0, 2}),
                 gpu_test::sample({3, 2, 4}, d).permute({1, 0, 2}));
  }
}

TEST_CASE("cuda searchsorted: a sorter gives the order of unsorted rows") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Int64, DType::BFloat16}) {
    CAPTURE(name(d));
    const Tensor unsorted = gpu_test::sample({10}, d);
    check_search(unsorted, gpu_test::sample({3, 4}, d), argsort(unsorted));
    const Tensor rows = gpu_test::sample({3, 8}, d);
    check_search(rows, gpu_test::sample({3, 5}, d), argsort(rows, -1));
    const Tensor columns = gpu_test::sample({6, 2}, d);
    check_search(columns.t(), gpu_test::sample({2, 3}, d), argsort(columns, 0).t());  // a strided sorter
  }
}

TEST_CASE("cuda searchsorted and bucketize: side, Scalar values, promotion, NaN") {
  ANATOMY_REQUIRE_GPU();
  const Tensor seq = tensor({1.0, 3.0, 5.0, 7.0, 9.0});
  const Tensor values = tensor({{3.0, 6.0, 9.0}, {3.0, 6.0, 9.0}});
  const Tensor gseq = seq.to(kCuda), gvalues = values.to(kCuda);
  CHECK(same_values(searchsorted(gseq, gvalues, false, false, "right"), searchsorted(seq, values, false, true)));
  CHECK(same_values(bucketize(gvalues, gseq), bucketize(values, seq)));
  CHECK(same_values(bucketize(gvalues, gseq, true, true), bucketize(values, seq, true, true)));
  CHECK(same_values(searchsorted(gseq, Scalar(6)), searchsorted(seq, Scalar(6))));
  CHECK(same_values(bucketize(Scalar(4.5), gseq, false, true), bucketize(Scalar(4.5), seq, false, true)));
  // int64 boundaries with fp16 values, fp16 boundaries with a 0-dim fp64 value (weak).
  const Tensor ints = tensor(std::vector<int64_t>{1, 2, 2, 4}, {4});
  const Tensor halves = gpu_test::sample({2, 3}, DType::Float16);
  CHECK(same_values(searchsorted(ints.to(kCuda), halves.to(kCuda)), searchsorted(ints, halves)));
  const Tensor h = tensor({1.0, 2.0}).to(DType::Float16);
  const Tensor close = tensor(std::vector<double>{1.0001}, {}, DType::Float64);
  CHECK(same_values(searchsorted(h.to(kCuda), close.to(kCuda)), searchsorted(h, close)));
  // NaN sorts last, in the sequence and among the values.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Tensor special = tensor({-inf, -1.0, 0.0, 2.0, inf, nan, nan});
  const Tensor probes = tensor({nan, inf, -inf, 0.0, -0.0, 1.5, 3.0});
  check_search(special, probes);
  check_search(special.to(DType::Float16), probes.to(DType::Float16));
}

TEST_CASE("cuda searchsorted: long rows and many values") {
  ANATOMY_REQUIRE_GPU();
  check_search(sorted_rows({1 << 20}, DType::Float32), gpu_test::sample({1000}, DType::Float32));
  check_search(sorted_rows({1000}, DType::Int32), gpu_test::sample({1 << 20}, DType::Int32));
  check_search(sorted_rows({64, 300}, DType::Float64), gpu_test::sample({64, 2000}, DType::Float64));
}

TEST_CASE("cuda searchsorted: a sorter entry out of range raises IndexError at the next wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor seq = tensor({1.0, 3.0, 5.0}).to(kCuda);
  const Tensor values = tensor({2.0, 4.0}).to(kCuda);
  for (int64_t bad : {int64_t{3}, int64_t{-1}}) {
    const Tensor sorter = tensor(std::vector<int64_t>{0, bad, 2}, {3}).to(kCuda);
    Tensor out;
    CHECK_NOTHROW(out = searchsorted(seq, values, false, false, std::nullopt, sorter));  // nothing waits
    CHECK_THROWS_WITH_AS(out.cpu(), doctest::Contains("searchsorted (sorter)"), IndexError);
    // Raised once; the next searches work.
    CHECK(values_of(searchsorted(seq, values)) == std::vector<double>{1, 2});
  }
}

TEST_CASE("cuda searchsorted: errors at the call, no wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor seq = tensor({1.0, 3.0, 5.0}).to(kCuda);
  const Tensor values = rand({2, 3}).to(kCuda);
  CHECK_THROWS_WITH_AS(searchsorted(seq, values, false, true, "left"), doctest::Contains("opposites"), ValueError);
  CHECK_THROWS_WITH_AS(searchsorted(seq, values.cpu()), doctest::Contains("searchsorted"), DeviceError);
  CHECK_THROWS_WITH_AS(searchsorted(rand({3, 4}).to(kCuda), values), doctest::Contains("searchsorted"), ValueError);
  CHECK_THROWS_WITH_AS(bucketize(values, rand({2, 2}).to(kCuda)), doctest::Contains("1-d"), ValueError);
  Tensor a, b;
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    a = searchsorted(seq, values, false, false, std::nullopt, argsort(seq));
    b = bucketize(values, seq, true);
  }
  CHECK(same_values(a, searchsorted(seq.cpu(), values.cpu())));
  CHECK(b.dtype() == DType::Int32);
}

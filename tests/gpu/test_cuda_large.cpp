// GPU tests of tensors past 2^31 elements: the kernels' 64-bit indexing paths (element-wise
// vectorized, strided and transposed-tile; copies; reductions over all, the last and the first
// dim; arg-reductions whose answer is past 2^31). Each tensor is uint8 (2 GiB) and filled with a
// pattern whose results are known in closed form, with distinct values near the end so that an
// index that wrapped at 2^31 reads or writes the wrong element and changes a checked value.
#include <cstdint>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

constexpr int64_t kCols = 8192;
constexpr int64_t kRows = (int64_t{1} << 18) + 1;  // kRows * kCols = 2^31 + 8192
constexpr int64_t kNumel = kRows * kCols;
constexpr int64_t kTail = 3 * kCols;  // the last three rows carry the distinct values

// Enough device memory for the largest test (about 13 GiB live at once), with room to spare.
bool has_room() { return cuda::get_device_properties(0).total_memory >= uint64_t{32} << 30; }

// ones everywhere, then the last kTail elements set to (i % 7) and element `peak` to 200: the
// sum is kNumel - kTail + sum(tail) + (200 - old value at peak).
struct Pattern {
  Tensor device;  // uint8, kNumel elements
  Tensor tail;    // the last kTail elements, on the CPU
  int64_t peak;
  int64_t sum;
};

Pattern make_pattern(const Tensor& storage_view, int64_t peak) {
  Tensor tail = empty({kTail}, DType::UInt8);
  auto* p = tail.data_ptr<uint8_t>();
  for (int64_t i = 0; i < kTail; ++i) p[i] = static_cast<uint8_t>(i % 7);
  p[peak - (kNumel - kTail)] = 200;
  storage_view.fill_(Scalar(1));
  storage_view.slice(0, kNumel - kTail, kNumel).copy_(tail.to(kCuda));
  int64_t sum = kNumel - kTail;
  for (int64_t i = 0; i < kTail; ++i) sum += p[i];
  return {storage_view, tail, peak, sum};
}

// On either device.
int64_t sum_of(const Tensor& t) { return t.sum(DType::Int64).item().to<int64_t>(); }

Tensor tail_of(const Tensor& t) { return t.slice(0, kNumel - kTail, kNumel).cpu(); }

}  // namespace

TEST_CASE("cuda large tensors: element-wise ops past 2^31 elements, contiguous and strided") {
  ANATOMY_REQUIRE_GPU();
  if (!has_room()) {
    std::cout << "[anatomy-skip] the device has under 32 GiB of memory" << std::endl;
    return;
  }
  const Pattern a = make_pattern(empty({kNumel}, TensorOptions().dtype(DType::UInt8).device(kCuda)), kNumel - 5);
  REQUIRE(sum_of(a.device) == a.sum);

  // Contiguous: the vectorized path with 64-bit indices.
  {
    const Tensor c = a.device + a.device;
    CHECK(sum_of(c) == 2 * (kNumel - kTail) + sum_of(a.tail + a.tail));  // 200 + 200 wraps in uint8
    CHECK(same_values(tail_of(c), a.tail + a.tail));
  }
  // Every other element of a 2 * kNumel storage: the strided path, byte offsets past 2^32.
  {
    const Tensor storage = empty({2 * kNumel}, TensorOptions().dtype(DType::UInt8).device(kCuda));
    storage.fill_(Scalar(0));
    const Pattern b = make_pattern(storage.slice(0, 1, std::nullopt, 2), kNumel - kCols - 1);
    CHECK(sum_of(storage) == b.sum);  // nothing written between the strided elements
    const Tensor c = a.device * b.device;
    CHECK(same_values(tail_of(c), a.tail * b.tail));
    const Tensor packed = b.device.contiguous();  // the copy kernel's strided source
    CHECK(sum_of(packed) == b.sum);
    CHECK(same_values(tail_of(packed), b.tail));
    // A cast on the way: uint8 -> int8 through the same strided source (200 wraps to -56).
    const Tensor cast = b.device.to(DType::Int8);
    CHECK(same_values(tail_of(cast), b.tail.to(DType::Int8)));
  }
  // A transposed operand: the tiled path over a (kCols, kRows) view.
  {
    const Tensor rows = a.device.view({kRows, kCols});
    const Tensor columns = rows.t().contiguous();  // (kCols, kRows), the tile kernel's copy
    CHECK(sum_of(columns) == a.sum);
    const Tensor c = columns + rows.t();  // 2 * rows.t(), through the tile kernel
    CHECK(same_values(c.select(1, kRows - 1).cpu(), (a.tail.slice(0, 2 * kCols, kTail) * Scalar(2)).to(DType::UInt8)));
    CHECK(sum_of(c) == 2 * (kNumel - kTail) + sum_of(a.tail + a.tail));
  }
}

TEST_CASE("cuda large tensors: reductions and arg-reductions past 2^31 elements") {
  ANATOMY_REQUIRE_GPU();
  if (!has_room()) {
    std::cout << "[anatomy-skip] the device has under 32 GiB of memory" << std::endl;
    return;
  }
  const int64_t peak = kNumel - 2 * kCols + 17;  // in the second to last row, past 2^31
  const Pattern a = make_pattern(empty({kNumel}, TensorOptions().dtype(DType::UInt8).device(kCuda)), peak);

  // All dims: the sum, the max and where it is.
  CHECK(sum_of(a.device) == a.sum);
  CHECK(a.device.amax().item().to<int64_t>() == 200);
  CHECK(a.device.argmax().item().to<int64_t>() == peak);
  CHECK(a.device.argmin().item().to<int64_t>() == kNumel - kTail);  // the first 0 of the tail

  const Tensor rows = a.device.view({kRows, kCols});
  // Last dim: one sum per row, the last rows' from the tail.
  {
    const Tensor per_row = rows.sum(std::vector<int64_t>{1}, false, DType::Int64).cpu();
    const auto* s = per_row.data_ptr<int64_t>();
    CHECK(s[0] == kCols);
    CHECK(s[kRows - 4] == kCols);
    const Tensor tail_rows = a.tail.view({3, kCols}).sum(std::vector<int64_t>{1}, false, DType::Int64);
    for (int64_t r = 0; r < 3; ++r) CHECK(s[kRows - 3 + r] == tail_rows.data_ptr<int64_t>()[r]);
    CHECK(rows.argmax(1).select(0, kRows - 2).item().to<int64_t>() == 17);
  }
  // First dim: one sum per column over 2^18 + 1 rows.
  {
    const Tensor per_column = rows.sum(std::vector<int64_t>{0}, false, DType::Int64).cpu();
    const Tensor expected =
        a.tail.view({3, kCols}).sum(std::vector<int64_t>{0}, false, DType::Int64) + Scalar(kRows - 3);
    CHECK(same_values(per_column, expected));
    CHECK(rows.argmax(0).select(0, 17).item().to<int64_t>() == kRows - 2);
  }
}

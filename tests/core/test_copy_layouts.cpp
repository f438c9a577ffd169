// copy_ on the CPU between layouts (Note [Strided copies on the CPU]): transposes of sizes that
// are not multiples of the tile, permutations of 3 and 4 dims, channels_last both ways, sliced
// and offset sources, broadcast sources, transposed destinations and dtype conversions, checked
// element by element against the tensors' own strides (not through another copy).
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::vec;

namespace {

// The element at a multi-index, read through the tensor's strides, as a double.
double element_at(const Tensor& t, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * t.stride(static_cast<int64_t>(d));
  return visit_dtype(t.dtype(), "element_at",
                     [&]<typename T>() { return convert<double>(static_cast<const T*>(t.data_ptr())[offset]); });
}

// Every element of dst equals src's (converted to dst's dtype, then compared as doubles).
std::string mismatch(const Tensor& dst, const Tensor& src_broadcast) {
  const std::vector<int64_t> shape(dst.sizes().begin(), dst.sizes().end());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < dst.numel(); ++k) {
    int64_t rest = k;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
      rest /= shape[static_cast<size_t>(d)];
    }
    const double want = element_at(src_broadcast.to(dst.dtype()), index);
    const double got = element_at(dst, index);
    if (!(want == got)) return fmt::format("at [{}]: got {}, want {}", fmt::join(index, ", "), got, want);
  }
  return "";
}

// A source with distinct values (exactly representable in every dtype used here, mod 100).
Tensor distinct(std::vector<int64_t> shape, DType dtype) {
  const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  return remainder(arange(n, TensorOptions().dtype(DType::Int64)), 100).to(dtype).reshape(shape);
}

void check_copy(const Tensor& dst, const Tensor& src) {
  dst.copy_(src);
  const std::string problem = mismatch(dst, src.expand(dst.sizes()));
  CHECK_MESSAGE(problem.empty(), problem);
}

}  // namespace

TEST_CASE("copy_ layouts: transposes of every size class around the tile, both directions") {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 200}, {200, 1}, {64, 64}, {67, 130}, {130, 67}, {3, 5}, {129, 65}, {300, 257}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    const Tensor src = distinct({cols, rows}, DType::Float32).t();  // (rows, cols), transposed
    check_copy(empty({rows, cols}), src);
    // A transposed destination from a contiguous source.
    check_copy(empty({cols, rows}).t(), distinct({rows, cols}, DType::Float32));
  }
}

TEST_CASE("copy_ layouts: every permutation of a 4-D tensor, and channels_last both ways") {
  const std::vector<int64_t> base{5, 67, 3, 70};
  std::vector<int64_t> perm{0, 1, 2, 3};
  do {
    CAPTURE(perm);
    const Tensor src = distinct(base, DType::Int32).permute(perm);
    check_copy(empty(src.sizes(), TensorOptions().dtype(DType::Int32)), src);
  } while (std::next_permutation(perm.begin(), perm.end()));
  const Tensor nchw = distinct({2, 70, 9, 5}, DType::Float32);
  check_copy(empty({2, 70, 9, 5}, TensorOptions(), MemoryFormat::ChannelsLast), nchw);
  check_copy(empty({2, 70, 9, 5}), nchw.contiguous(MemoryFormat::ChannelsLast));
}

TEST_CASE("copy_ layouts: sliced, offset and broadcast sources, and conversions, in transposed layouts") {
  const Tensor big = distinct({150, 260}, DType::Float64);
  for (const Tensor& src :
       {big.slice(1, 3, 253, 2).slice(0, 7, 137),  // strided columns, offset
        big.slice(0, 1, 141, 2).slice(1, 5, 75).t(), big.slice(0, 5, 135).slice(1, 0, 140, 2).t()}) {
    CAPTURE(vec(src.sizes()));
    check_copy(empty(src.sizes()), src);
    check_copy(empty({src.size(1), src.size(0)}).t(), src);
  }
  // A broadcast row into a transposed destination.
  check_copy(empty({90, 70}).t(), distinct({90}, DType::Float32).unsqueeze(0).expand({70, 90}));
  // Conversions through the tiled path: every element lands converted.
  for (DType from : {DType::Float32, DType::Int64, DType::Bool, DType::Float16}) {
    for (DType to : {DType::Float64, DType::Int32, DType::BFloat16, DType::UInt8}) {
      CAPTURE(name(from));
      CAPTURE(name(to));
      const Tensor src = distinct({97, 66}, from).t();
      check_copy(empty({66, 97}, TensorOptions().dtype(to)), src);
    }
  }
}

TEST_CASE("copy_ layouts: a large transpose over the engine's threads") {
  const int saved = get_num_threads();
  set_num_threads(4);
  const Tensor src = distinct({1030, 1100}, DType::Float32).t();
  check_copy(empty({1100, 1030}), src);
  const Tensor src3 = distinct({3, 500, 700}, DType::Int32).permute({0, 2, 1});
  check_copy(empty({3, 700, 500}, TensorOptions().dtype(DType::Int32)), src3);
  set_num_threads(saved);
}

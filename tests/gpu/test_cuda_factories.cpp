// GPU tests of factories on CUDA: empty, empty_strided, zeros, ones, full and the _like forms.
// The random factories (rand, randn, randint) are tested with their kernels in
// test_cuda_random.cpp.
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::values_of;

TEST_CASE("cuda factories: empty has the requested metadata") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    Tensor t = empty({2, 3, 4}, TensorOptions().dtype(d).device(kCuda));
    CHECK(t.is_cuda());
    CHECK(t.device() == kCuda);
    CHECK(t.dtype() == d);
    CHECK(t.sizes() == IntArrayRef({2, 3, 4}));
    CHECK(t.is_contiguous());
    CHECK(t.data_ptr() != nullptr);
  }
  Tensor cl = empty({2, 3, 4, 5}, kCuda, MemoryFormat::ChannelsLast);
  CHECK(cl.is_contiguous(MemoryFormat::ChannelsLast));
  Tensor s = empty_strided({2, 3}, {1, 2}, kCuda);
  CHECK(s.strides() == IntArrayRef({1, 2}));
  Tensor none = empty({0, 5}, kCuda);
  CHECK(none.numel() == 0);
  CHECK(none.is_cuda());
}

TEST_CASE("cuda factories: zeros, ones and full for every dtype") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    TensorOptions o = TensorOptions().dtype(d).device(kCuda);
    CHECK(values_of(zeros({2, 3}, o)) == std::vector<double>(6, 0.0));
    CHECK(values_of(ones({5}, o)) == std::vector<double>(5, 1.0));
    double v = d == DType::Bool ? 1.0 : 7.0;
    CHECK(values_of(full({3, 1}, d == DType::Bool ? Scalar(true) : Scalar(7), o)) == std::vector<double>(3, v));
    // The same bits as the CPU factories make.
    CHECK(gpu_test::same_values(full({4}, 7, o), full({4}, 7, d)));
  }
  CHECK(values_of(full({2}, 2.5, kCuda)) == std::vector<double>{2.5, 2.5});
  CHECK(full({2}, 3, kCuda).dtype() == DType::Int64);
  CHECK(values_of(eye(3, std::nullopt, kCuda)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("cuda factories: _like forms keep the layout and the device") {
  ANATOMY_REQUIRE_GPU();
  Tensor base = zeros({3, 4}, kCuda).t();
  Tensor like = ones_like(base);
  CHECK(like.is_cuda());
  CHECK(like.strides() == base.strides());
  CHECK(values_of(like) == std::vector<double>(12, 1.0));
  Tensor moved = zeros_like(zeros({2, 2}), TensorOptions().device(kCuda));
  CHECK(moved.is_cuda());
  CHECK(values_of(full_like(moved, 4)) == std::vector<double>(4, 4.0));
}

TEST_CASE("cuda factories: a fill value that does not fit is a ValueError") {
  ANATOMY_REQUIRE_GPU();
  CHECK_THROWS_AS(full({2}, 300, TensorOptions().dtype(DType::UInt8).device(kCuda)), ValueError);
  CHECK_THROWS_AS(full({2}, 1e300, TensorOptions().dtype(DType::Float32).device(kCuda)), ValueError);
}

// GPU tests of factories on CUDA: empty, empty_strided, zeros, ones, full, arange, linspace and the
// _like forms.
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

TEST_CASE("cuda factories: arange and linspace give the CPU's values, bit for bit") {
  ANATOMY_REQUIRE_GPU();
  struct Range {
    Scalar start, end, step;
  };
  const std::vector<Range> ranges = {
      {0, 10, 1},       {5, -7, -3},     {0.5, 7.25, 0.75},
      {-1.0, 1.0, 0.1}, {0, 100000, 7},  {int64_t{1} << 40, (int64_t{1} << 40) + 50000, 3},
      {0, 0, 1},        {3, 3.5, 0.125},
  };
  for (const Range& r : ranges) {
    CAPTURE(r.start.to_double());
    CAPTURE(r.step.to_double());
    const Tensor cpu = arange(r.start, r.end, r.step);
    const Tensor dev = arange(r.start, r.end, r.step, kCuda);
    CHECK(dev.is_cuda());
    CHECK(dev.dtype() == cpu.dtype());
    CHECK(gpu_test::same_values(dev, cpu));
    for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
      CAPTURE(name(d));
      CHECK(gpu_test::same_values(arange(r.start, r.end, r.step, TensorOptions().dtype(d).device(kCuda)),
                                  arange(r.start, r.end, r.step, d)));
    }
  }
  for (int64_t steps : {0, 1, 2, 7, 1000, 100001}) {
    CAPTURE(steps);
    for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64}) {
      CAPTURE(name(d));
      CHECK(gpu_test::same_values(linspace(-3.5, 11.0, steps, TensorOptions().dtype(d).device(kCuda)),
                                  linspace(-3.5, 11.0, steps, d)));
    }
  }
  // The device it names, and the CPU's errors.
  CHECK(arange(4, TensorOptions().device(Device(DeviceType::CUDA, 0))).device() == Device(DeviceType::CUDA, 0));
  CHECK_THROWS_AS(arange(0, 10, 0, kCuda), ValueError);
  CHECK_THROWS_AS(linspace(0, 1, -1, kCuda), ValueError);
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

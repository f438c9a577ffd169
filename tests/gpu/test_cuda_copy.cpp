// GPU tests of copy_ with CUDA on either side: round trips for every dtype, strided sources and
// destinations, broadcasting, dtype conversions, overlap, zero-size tensors, and the errors.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>
#include <string>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::sample;

namespace {

// The views the strided cases use, each of a {6, 8} base (or of a bigger one for the offset).
struct NamedView {
  const char* name;
  Tensor (*apply)(const Tensor&);
};
const NamedView kViews[] = {
    {"whole", [](const Tensor& t) { return t; }},
    {"transposed", [](const Tensor& t) { return t.t(); }},
    {"sliced with step", [](const Tensor& t) { return t.slice(1, 1, 8, 3); }},
    {"offset block", [](const Tensor& t) { return t.slice(0, 2, 5).slice(1, 3, 7); }},
    {"row", [](const Tensor& t) { return t.select(0, 4); }},
    {"column", [](const Tensor& t) { return t.select(1, 5); }},
    {"diagonal", [](const Tensor& t) { return t.diagonal(); }},
    {"permuted 3-d",
     [](const Tensor& t) {
       return t.view({6, 2, 4}).permute({2, 0, 1});
     }},
};

// A strided tensor (every other element of a wider one) with the values of x, on x's device.
Tensor strided_copy_of(const Tensor& x) {
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  sizes.back() *= 2;
  Tensor strided = empty(sizes, x.options()).slice(x.dim() - 1, 0, std::nullopt, 2);
  strided.copy_(x);
  return strided;
}

}  // namespace

TEST_CASE("cuda copy_: CPU -> CUDA -> CPU round trips for every dtype") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    Tensor cpu = sample({33, 17}, d);
    Tensor gpu = cpu.to(kCuda);
    CHECK(gpu.is_cuda());
    CHECK(gpu.dtype() == d);
    Tensor back = gpu.cpu();
    CHECK(back.is_cpu());
    CHECK(same_values(back, cpu));
    // copy_ into existing tensors, both directions, and device to device.
    Tensor dst = empty({33, 17}, TensorOptions().dtype(d).device(kCuda));
    uint32_t v = dst.version();
    dst.copy_(cpu);
    CHECK(dst.version() == v + 1);
    Tensor dst2 = empty_like(dst);
    dst2.copy_(dst);
    Tensor host = empty({33, 17}, d);
    host.copy_(dst2);
    CHECK(same_values(host, cpu));
    CHECK(same_values(gpu.clone(), cpu));
    // 0-dim tensors.
    Tensor scalar = sample({}, d);
    CHECK(same_values(scalar.to(kCuda).cpu(), scalar));
  }
}

TEST_CASE("cuda copy_: non-contiguous sources") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Bool, DType::Int8, DType::Float16, DType::Float32, DType::Int64}) {
    Tensor cpu = sample({6, 8}, d);
    Tensor gpu = cpu.to(kCuda);
    for (const NamedView& view : kViews) {
      CAPTURE(name(d));
      CAPTURE(view.name);
      Tensor expected = view.apply(cpu).contiguous();
      CHECK(same_values(view.apply(gpu).cpu(), expected));         // device -> host
      CHECK(same_values(view.apply(gpu).contiguous(), expected));  // device -> device (gather)
      CHECK(same_values(view.apply(cpu).to(kCuda), expected));     // host -> device
      Tensor host = empty(expected.sizes(), d);
      host.copy_(view.apply(gpu));  // into an existing host tensor
      CHECK(same_values(host, expected));
    }
  }
  // A source at an offset into a larger storage.
  Tensor cpu = sample({100}, DType::Float32);
  Tensor gpu = cpu.to(kCuda);
  CHECK(same_values(gpu.slice(0, 37, 61).cpu(), cpu.slice(0, 37, 61)));
  CHECK(same_values(gpu.slice(0, 37, 61).view({4, 6}).t().cpu(), cpu.slice(0, 37, 61).view({4, 6}).t()));
}

TEST_CASE("cuda copy_: non-contiguous destinations") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::UInt8, DType::BFloat16, DType::Int32, DType::Float64}) {
    for (const NamedView& view : kViews) {
      CAPTURE(name(d));
      CAPTURE(view.name);
      Tensor base_cpu = sample({6, 8}, d);
      Tensor base_gpu = base_cpu.to(kCuda);
      Tensor src_cpu = sample(view.apply(base_cpu).sizes(), d);
      view.apply(base_cpu).copy_(src_cpu);
      // host -> strided device
      Tensor a = base_gpu.clone();
      view.apply(a).copy_(src_cpu);
      CHECK(same_values(a, base_cpu));
      // device -> strided device, from a contiguous and from a strided source
      Tensor b = base_gpu.clone();
      view.apply(b).copy_(src_cpu.to(kCuda));
      CHECK(same_values(b, base_cpu));
      Tensor c = base_gpu.clone();
      view.apply(c).copy_(strided_copy_of(src_cpu.to(kCuda)));
      CHECK(same_values(c, base_cpu));
      // strided device -> strided host
      Tensor h = sample({6, 8}, d);
      Tensor h_expected = h.clone();
      view.apply(h_expected).copy_(view.apply(base_cpu));
      view.apply(h).copy_(view.apply(base_cpu.to(kCuda)));
      CHECK(same_values(h, h_expected));
    }
  }
  // A destination that is dense but permuted, from a source with the same permutation.
  Tensor src = sample({4, 5}, DType::Float32).to(kCuda).t();
  Tensor dst = empty({5, 4}, kCuda);
  Tensor dst_t = empty({4, 5}, kCuda).t();
  dst.copy_(src);
  dst_t.copy_(src);
  CHECK(same_values(dst, src));
  CHECK(same_values(dst_t, src));
}

TEST_CASE("cuda copy_: broadcast sources") {
  ANATOMY_REQUIRE_GPU();
  Tensor row_cpu = sample({1, 5}, DType::Float32);
  Tensor expected = row_cpu.expand({4, 5}).contiguous();
  Tensor from_gpu_row = empty({4, 5}, kCuda);
  from_gpu_row.copy_(row_cpu.to(kCuda));
  CHECK(same_values(from_gpu_row, expected));
  Tensor from_cpu_row = empty({4, 5}, kCuda);
  from_cpu_row.copy_(row_cpu);
  CHECK(same_values(from_cpu_row, expected));
  Tensor to_cpu = empty({4, 5});
  to_cpu.copy_(row_cpu.to(kCuda));
  CHECK(same_values(to_cpu, expected));
  Tensor strided_dst = empty({5, 4}, kCuda).t();
  strided_dst.copy_(row_cpu.to(kCuda).squeeze());
  CHECK(same_values(strided_dst, expected));
  // A 0-dim source fills everything; a source that does not broadcast is a ValueError.
  Tensor filled = empty({3, 3}, TensorOptions().dtype(DType::Int64).device(kCuda));
  filled.copy_(full({}, 9, kCuda));
  CHECK(gpu_test::values_of(filled) == std::vector<double>(9, 9.0));
  CHECK_THROWS_AS(filled.copy_(zeros({2}, kCuda)), ValueError);
  CHECK_THROWS_AS(filled.copy_(zeros({2})), ValueError);
}

TEST_CASE("cuda copy_: dtype conversions match the CPU's") {
  ANATOMY_REQUIRE_GPU();
  for (DType from : gpu_test::all_dtypes()) {
    // 0, 2.75, 5.5, ... 93.5: fractions to truncate and round, and a zero for bool.
    std::vector<double> ramp(35);
    for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = 2.75 * static_cast<double>(i);
    Tensor cpu = tensor(ramp, {5, 7}).to(from);
    Tensor gpu = cpu.to(kCuda);
    for (DType to : gpu_test::all_dtypes()) {
      CAPTURE(name(from));
      CAPTURE(name(to));
      Tensor expected = cpu.to(to);
      CHECK(same_values(gpu.to(to), expected));         // device -> device
      CHECK(same_values(gpu.to(kCPU, to), expected));   // device -> host
      CHECK(same_values(cpu.to(kCuda, to), expected));  // host -> device
      Tensor strided = empty({7, 5}, TensorOptions().dtype(to).device(kCuda)).t();
      strided.copy_(gpu.t().contiguous().t());
      CHECK(same_values(strided, expected));
    }
  }
  // Random fractional values through the conversions that round.
  Tensor r = rand({64}, DType::Float64);
  for (DType to : {DType::Float16, DType::BFloat16, DType::Float32}) {
    CHECK(same_values(r.to(kCuda).to(to), r.to(to)));
  }
}

TEST_CASE("cuda copy_: NaN, infinities and out-of-range values convert as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  // Values whose integer conversion C++ leaves undefined: Note [CUDA casts match the CPU's]
  // (backends/cuda/elementwise/cast.cu) says what the CPU gives and why the kernel spells it out.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {nan,   inf,   -inf, 1e10,         -1e10,         300.7,  -300.7,  -1.5,
                                      255.9, 3e9,   -3e9, 2147483648.0, -2147483649.0, 9.3e18, -9.3e18, 65504,
                                      70000, 1e-40, -0.0, 0.5};
  const Tensor source = tensor(values, {static_cast<int64_t>(values.size())}, DType::Float64);
  for (DType from : gpu_test::all_dtypes()) {
    const Tensor cpu = source.to(from);
    const Tensor gpu = cpu.to(kCuda);
    for (DType to : gpu_test::all_dtypes()) {
      CAPTURE(name(from));
      CAPTURE(name(to));
      // Integer and bool results bit for bit; floating ones with NaN matching NaN.
      const Tensor expected = cpu.to(to);
      CHECK(gpu_test::same_numbers(gpu.to(to), expected));
      // The strided kernel path: every other element of a wider destination.
      Tensor strided = empty({2 * cpu.numel()}, TensorOptions().dtype(to).device(kCuda)).slice(0, 0, std::nullopt, 2);
      strided.copy_(gpu);
      CHECK(gpu_test::same_numbers(strided, expected));
    }
  }
}

TEST_CASE("cuda copy_: a conversion between CUDA tensors stays on the device") {
  ANATOMY_REQUIRE_GPU();
  const Tensor gpu = sample({64, 3}, DType::Float32).to(kCuda);
  dispatch::TraceCapture capture;
  Tensor half = gpu.to(DType::Float16);
  Tensor from_broadcast = empty({4, 64, 3}, TensorOptions().dtype(DType::BFloat16).device(kCuda));
  from_broadcast.copy_(gpu);
  for (const std::string& line : capture.lines()) CHECK_MESSAGE(line.find("copy_cpu") == std::string::npos, line);
  CHECK(same_values(half, gpu.cpu().to(DType::Float16)));
  CHECK(same_values(from_broadcast, gpu.cpu().to(DType::BFloat16).expand({4, 64, 3}).contiguous()));
}

TEST_CASE("cuda copy_: overlapping source and destination") {
  ANATOMY_REQUIRE_GPU();
  Tensor cpu = sample({64}, DType::Int32);
  Tensor gpu = cpu.to(kCuda);
  cpu.slice(0, 1, 64).copy_(cpu.slice(0, 0, 63));
  gpu.slice(0, 1, 64).copy_(gpu.slice(0, 0, 63));
  CHECK(same_values(gpu, cpu));
  Tensor sq_cpu = sample({8, 8}, DType::Float32);
  Tensor sq_gpu = sq_cpu.to(kCuda);
  sq_cpu.copy_(sq_cpu.t());
  sq_gpu.copy_(sq_gpu.t());
  CHECK(same_values(sq_gpu, sq_cpu));
  uint32_t v = sq_gpu.version();
  sq_gpu.copy_(sq_gpu);
  CHECK(sq_gpu.version() == v + 1);
}

TEST_CASE("cuda copy_: zero-size tensors") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Bool, DType::Float16, DType::Int64}) {
    Tensor cpu = empty({0, 4}, d);
    Tensor gpu = cpu.to(kCuda);
    CHECK(gpu.is_cuda());
    CHECK(gpu.numel() == 0);
    CHECK(gpu.sizes() == IntArrayRef({0, 4}));
    CHECK(gpu.cpu().sizes() == IntArrayRef({0, 4}));
    CHECK(gpu.to(DType::Float32).numel() == 0);
    empty({4, 0}, TensorOptions().dtype(d).device(kCuda)).t().copy_(cpu);
  }
}

TEST_CASE("cuda copy_: from pinned host memory, a blocking copy has read it all on return") {
  ANATOMY_REQUIRE_GPU();
  // 64 MB: a copy still running when to() returned would see the overwrite below.
  const int64_t n = int64_t{1} << 24;
  float* pinned = nullptr;
  REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * sizeof(float)) == cudaSuccess);
  for (int64_t i = 0; i < n; ++i) pinned[i] = static_cast<float>(i % 1000);
  Tensor host = from_blob(pinned, {n}, DType::Float32, [](void* p) { cudaFreeHost(p); });
  Tensor expected = host.clone();
  Tensor gpu = host.to(kCuda);
  std::fill(pinned, pinned + n, -1.0f);
  CHECK(same_values(gpu, expected));
}

TEST_CASE("cuda copy_: between devices") {
  ANATOMY_REQUIRE_GPU();
  if (cuda::device_count() < 2) {
    Tensor a = sample({3, 4}, DType::Float32).to(kCuda);
    CHECK(same_values(a.to(Device("cuda:0"), DType::Float32, false, true), a));
    return;
  }
  Device other(DeviceType::CUDA, 1);
  Tensor cpu = sample({16, 9}, DType::Float32);
  Tensor a = cpu.to(kCuda);
  Tensor b = a.to(other);
  CHECK(b.device() == other);
  CHECK(same_values(b, cpu));
  Tensor c = empty({9, 16}, other).t();
  c.copy_(a.t().contiguous().t());
  CHECK(same_values(c, cpu));
}

TEST_CASE("cuda copy_: meta tensors do not mix with CUDA data") {
  ANATOMY_REQUIRE_GPU();
  Tensor m = empty({2}, kMeta);
  Tensor g = zeros({2}, kCuda);
  CHECK_THROWS_AS(g.copy_(m), DeviceError);
}

// GPU tests of CPU scalars in CUDA element-wise ops (Note [CPU scalars in device plans]): a
// Scalar or a 0-dim CPU tensor next to CUDA tensors is passed to the kernel by value, on the
// flat (vectorized) and the strided kernel paths, with no copy to the device.
#include <string>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::sample;

namespace {

// A 0-dim CPU tensor of dtype d holding a small value (true for bool).
Tensor cpu_scalar_tensor(DType d) { return d == DType::Bool ? full({}, true, d) : full({}, 3, d); }

}  // namespace

TEST_CASE("cuda scalars: t + 2, 2 * t and t.add_(cpu 0-dim) give the CPU's values") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float16, DType::Int64, DType::Bool}) {
    CAPTURE(name(d));
    const Tensor cpu = sample({33, 17}, d);
    const Tensor gpu = cpu.to(kCuda);
    Tensor sum = gpu + 2;
    CHECK(sum.is_cuda());
    CHECK(same_values(sum, cpu + 2));
    CHECK(same_values(2 * gpu, 2 * cpu));
    CHECK(same_values(gpu * 2.5, cpu * 2.5));  // a float scalar with integer tensors gives fp32
    CHECK(same_values(gpu + cpu_scalar_tensor(d), cpu + cpu_scalar_tensor(d)));
    CHECK(same_values(cpu_scalar_tensor(d) * gpu, cpu_scalar_tensor(d) * cpu));
    // The strided kernel: a transposed and a stepped view.
    CHECK(same_values(gpu.t() + 2, cpu.t() + 2));
    CHECK(same_values(gpu.slice(1, 0, std::nullopt, 2) * 2, cpu.slice(1, 0, std::nullopt, 2) * 2));
    // A 0-dim CUDA tensor with a CPU scalar: a one-element flat plan.
    CHECK(same_values(gpu.select(0, 3).select(0, 5) + 2, cpu.select(0, 3).select(0, 5) + 2));
    // In place, with a 0-dim CPU tensor of the same dtype.
    Tensor inplace = gpu.clone();
    const uint32_t version = inplace.version();
    inplace.add_(cpu_scalar_tensor(d));
    CHECK(inplace.version() == version + 1);
    CHECK(same_values(inplace, cpu + cpu_scalar_tensor(d)));
  }
}

TEST_CASE("cuda scalars: the scalar is not copied to the device") {
  ANATOMY_REQUIRE_GPU();
  const Tensor gpu = sample({1000}, DType::Float16).to(kCuda);
  Tensor target = gpu.clone();
  dispatch::TraceCapture capture;
  Tensor a = gpu + 2;
  Tensor b = gpu.mul(full({}, 0.5));
  target.add_(full({}, 1, DType::Int64));
  // A copy to the device would dispatch copy_ with the CUDA key; the casts of the scalars to
  // fp16 are copies on the CPU.
  for (const std::string& line : capture.lines()) {
    CHECK_MESSAGE(!(line.find("copy_") != std::string::npos && line.find("CUDA") != std::string::npos), line);
  }
  std::string text = capture.text();
  CHECK(text.find("aten::add.Tensor") != std::string::npos);
}

TEST_CASE("cuda scalars: a CPU tensor with dims next to CUDA tensors is a DeviceError") {
  ANATOMY_REQUIRE_GPU();
  const Tensor gpu = sample({4, 3}, DType::Float32).to(kCuda);
  CHECK_THROWS_AS(gpu + zeros({4, 3}), DeviceError);
  CHECK_THROWS_AS(gpu + zeros({1}), DeviceError);
  // A CPU 0-dim output cannot take a CUDA result.
  CHECK_THROWS_AS(add_out(full({}, 0.0), gpu.select(0, 0).select(0, 0), full({}, 1.0)), DeviceError);
}

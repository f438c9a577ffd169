// GPU tests of the multi-tensor norm and scale (_foreach_norm, _foreach_mul_) and of the
// clip_grad_norm_ built on them, against the single-tensor operators on the CPU: lists longer than
// one launch's table, a tensor of more than one launch's 320 chunks, more tensors than one finish
// launch takes (512), empty, transposed (the operators' path) and offset (unaligned: scalar loads)
// tensors, every floating dtype and norm order, NaN, the same bits on a second run, the scale read
// on the device (no wait), and a fixed number of operators for clip_grad_norm_ whatever the number
// of gradients.
#include <vector>

#include "anatomy/profiler/profiler.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

// 70 small tensors (more than a table of 64), one of more than 320 chunks (fp32 only: the
// others' big one is 3 chunks), an empty one, a transposed one and one whose data begins one
// element past an aligned address.
std::vector<Tensor> sample_list(DType dtype) {
  std::vector<Tensor> list;
  for (int i = 0; i < 70; ++i) list.push_back(randn({1 + (i * 37) % 300, 1 + (i * 11) % 40}).to(dtype));
  list.push_back(randn({dtype == DType::Float32 ? 330 * 65536 + 7 : 2 * 65536 + 3}).to(dtype));
  list.push_back(zeros({0, 5}, dtype));
  list.push_back(randn({33, 17}).to(dtype).t());
  list.push_back(randn({4097}).to(dtype).narrow(0, 1, 4096));
  return list;
}

// The same tensors on CUDA, in the same layouts: a transposed tensor transposed, an offset view at
// the same offset.
std::vector<Tensor> to_cuda(const std::vector<Tensor>& list) {
  std::vector<Tensor> out;
  for (const Tensor& t : list) {
    if (!t.is_contiguous()) {
      out.push_back(t.t().to(kCuda).t());
    } else if (t.storage_offset() != 0) {
      Tensor padded = empty({t.numel() + t.storage_offset()}, TensorOptions().dtype(t.dtype()).device(kCuda));
      out.push_back(padded.narrow(0, t.storage_offset(), t.numel()).copy_(t));
    } else {
      out.push_back(t.to(kCuda));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("cuda _foreach_norm: every dtype and order against norm of each tensor on the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(41);
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : gpu_test::kFloatingDtypes) {
    const std::vector<Tensor> cpu = sample_list(dtype);
    const std::vector<Tensor> gpu = to_cuda(cpu);
    CHECK_FALSE(gpu[gpu.size() - 2].is_contiguous());
    CHECK(gpu.back().storage_offset() == 1);
    for (double ord : {2.0, 1.0, inf, 0.0, 3.0}) {
      CAPTURE(name(dtype));
      CAPTURE(ord);
      const std::vector<Tensor> norms = _foreach_norm(gpu, ord);
      REQUIRE(norms.size() == cpu.size());
      for (size_t i = 0; i < cpu.size(); ++i) {
        CAPTURE(i);
        CHECK(norms[i].device() == kCuda);
        CHECK(norms[i].dtype() == dtype);
        CHECK(norms[i].dim() == 0);
        const Tensor want = cpu[i].numel() == 0 ? zeros({}, DType::Float64) : norm(cpu[i].to(DType::Float64), ord);
        CHECK(gpu_test::close_values(norms[i], want.to(dtype), gpu_test::float_rtol(dtype, 2e-5, 1e-12)) == "");
      }
    }
    // -inf: the smallest |x| (the empty tensor left out: it has none).
    std::vector<Tensor> nonempty;
    for (const Tensor& t : gpu)
      if (t.numel() > 0) nonempty.push_back(t);
    const std::vector<Tensor> mins = _foreach_norm(nonempty, -inf);
    for (size_t i = 0; i < nonempty.size(); ++i) CHECK(gpu_test::same_values(mins[i], nonempty[i].abs().amin()));
  }
}

TEST_CASE("cuda _foreach_norm: 600 tensors, NaN, and the same bits every time") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(42);
  std::vector<Tensor> cpu, gpu;
  for (int i = 0; i < 600; ++i) {  // more than one finish launch's 512 tensors
    cpu.push_back(randn({1 + i % 97, 3}));
    gpu.push_back(cpu.back().to(kCuda));
  }
  const std::vector<Tensor> first = _foreach_norm(gpu, 2.0), second = _foreach_norm(gpu, 2.0);
  for (size_t i = 0; i < cpu.size(); ++i) {
    CHECK(gpu_test::close_values(first[i], norm(cpu[i]), 2e-6) == "");
    CHECK(gpu_test::same_values(first[i], second[i]));
  }
  const Tensor big = randn({5 * 65536 + 1}, kCuda);
  CHECK(gpu_test::same_values(_foreach_norm({big}, 2.0)[0], _foreach_norm({big}, 2.0)[0]));
  big.narrow(0, 4 * 65536 + 9, 1).fill_(NAN);
  CHECK(std::isnan(_foreach_norm({big}, 2.0)[0].item<double>()));
  CHECK(std::isnan(_foreach_norm({big}, INFINITY)[0].item<double>()));
  CHECK(std::isnan(_foreach_norm({big}, 1.0)[0].item<double>()));
}

TEST_CASE("cuda _foreach_mul_: every dtype, as mul_ by the 0-dim tensor, the scale read on the device") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(43);
  for (DType dtype : gpu_test::kFloatingDtypes) {
    CAPTURE(name(dtype));
    const std::vector<Tensor> cpu = sample_list(dtype);
    for (const Tensor& scale : {scalar_tensor(0.37, TensorOptions().device(kCuda)),
                                scalar_tensor(-1.25, TensorOptions().dtype(DType::Float64).device(kCuda)),
                                scalar_tensor(3.5)}) {  // a CPU scalar
      CAPTURE(scale.device().str());
      std::vector<Tensor> gpu = to_cuda(cpu);
      {
        gpu_test::SyncDebugScope no_waits(cuda::SyncDebugMode::Error);
        if (scale.device().is_cuda()) _foreach_mul_(gpu, scale);
      }
      if (!scale.device().is_cuda()) _foreach_mul_(gpu, scale);  // its copy to the device
      for (size_t i = 0; i < cpu.size(); ++i) {
        CAPTURE(i);
        const Tensor want = cpu[i].clone().mul_(scale.cpu());
        CHECK(gpu_test::same_numbers(gpu[i].cpu(), want));
      }
    }
  }
  // A scale that is an element of a tensor it scales: every element sees its value before.
  const Tensor x = arange(6, TensorOptions().dtype(DType::Float32).device(kCuda)).add_(1.0);
  const Tensor y = arange(4, TensorOptions().dtype(DType::Float32).device(kCuda));
  _foreach_mul_({x, y}, x.select(0, 2));
  CHECK(gpu_test::values_of(x) == std::vector<double>{3, 6, 9, 12, 15, 18});
  CHECK(gpu_test::values_of(y) == std::vector<double>{0, 3, 6, 9});
  // Tensors that share memory (one tensor and a view of it, one tensor twice) are scaled one after
  // the other: each shared element gets every factor, as on the CPU.
  const Tensor z = arange(4, TensorOptions().dtype(DType::Float32).device(kCuda)).add_(1.0);
  _foreach_mul_({z, z.narrow(0, 0, 2), z}, scalar_tensor(2.0, TensorOptions().device(kCuda)));
  CHECK(gpu_test::values_of(z) == std::vector<double>{8, 16, 12, 16});
}

TEST_CASE("cuda _foreach_norm and _foreach_mul_: errors change nothing") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = ones({3}, kCuda);
  CHECK_THROWS_AS(_foreach_norm({x, ones({3})}, 2.0), DeviceError);
  CHECK_THROWS_AS(_foreach_norm({x, ones({3}, TensorOptions().dtype(DType::Int32).device(kCuda))}, 2.0), TypeError);
  CHECK_THROWS_AS(_foreach_mul_({x, ones({3})}, scalar_tensor(2.0)), DeviceError);
  CHECK_THROWS_AS(_foreach_mul_({x}, ones({2}, kCuda)), ValueError);
  CHECK(gpu_test::values_of(x) == std::vector<double>{1, 1, 1});
}

TEST_CASE("cuda clip_grad_norm_: 100 gradients match the CPU's, in as many operators as 3, without a wait") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(44);
  auto make = [](int count, Device device, std::vector<Tensor>& out, const std::vector<Tensor>* like) {
    for (int i = 0; i < count; ++i) {
      const Tensor init = like ? (*like)[i].detach().cpu() : randn({1 + (i * 37) % 300, 1 + (i * 11) % 40});
      Tensor p = init.to(device).requires_grad_();
      p.set_grad(like ? (*like)[i].grad().to(device) : randn(init.sizes()).to(device));
      out.push_back(p);
    }
  };
  std::vector<Tensor> cpu, gpu;
  make(100, Device("cpu"), cpu, nullptr);
  make(100, kCuda, gpu, &cpu);
  const Tensor want = optim::clip_grad_norm_(cpu, 1.0);
  Tensor got;
  {
    gpu_test::SyncDebugScope no_waits(cuda::SyncDebugMode::Error);
    got = optim::clip_grad_norm_(gpu, 1.0);
  }
  CHECK(gpu_test::close_values(got, want, 2e-6) == "");
  for (size_t i = 0; i < cpu.size(); ++i) CHECK(gpu_test::close_values(gpu[i].grad(), cpu[i].grad(), 2e-6) == "");

  // The operators clip_grad_norm_ calls (depth 0 of a profile) are the same for 3 gradients as for
  // 100: one _foreach_norm and one _foreach_mul_ each.
  auto top_level_ops = [](const std::vector<Tensor>& ps) {
    cuda::synchronize();
    profiler::Profile prof;
    optim::clip_grad_norm_(ps, 1.0);
    prof.stop();
    std::vector<std::string> names;
    for (const profiler::Event& e : prof.events()) {
      if (!e.is_range && e.depth == 0) names.push_back(e.name);
    }
    return names;
  };
  const std::vector<Tensor> three(gpu.begin(), gpu.begin() + 3);
  const std::vector<std::string> many = top_level_ops(gpu), few = top_level_ops(three);
  CHECK(many == few);
  CHECK(std::count(many.begin(), many.end(), "aten::_foreach_norm.Scalar") == 1);
  CHECK(std::count(many.begin(), many.end(), "aten::_foreach_mul_.Tensor") == 1);
  CHECK(many.size() < 12);
}

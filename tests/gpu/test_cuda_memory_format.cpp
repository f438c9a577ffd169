// GPU tests of memory formats on CUDA: channels_last and channels_last_3d factories, to(memory_format)
// and across devices, and the layout element-wise results take (the plan is shared with the CPU,
// so the strides must match the CPU's, and the values too).
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

const std::vector<int64_t> kNhwc{60, 1, 15, 3};
const std::vector<int64_t> kNchw{60, 20, 5, 1};

std::vector<int64_t> strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

}  // namespace

TEST_CASE("cuda memory format: empty, contiguous and to(memory_format)") {
  ANATOMY_REQUIRE_GPU();
  Tensor cl3 = empty({2, 3, 4, 5, 6}, kCuda, MemoryFormat::ChannelsLast3d);
  CHECK(cl3.is_contiguous(MemoryFormat::ChannelsLast3d));
  CHECK(strides_of(cl3) == std::vector<int64_t>{360, 1, 90, 18, 3});
  Tensor x = gpu_test::sample({2, 3, 4, 5}, DType::Float32);
  Tensor g = x.to(kCuda);
  Tensor cl = g.to(MemoryFormat::ChannelsLast);
  CHECK(cl.is_cuda());
  CHECK(strides_of(cl) == kNhwc);
  CHECK(gpu_test::same_values(cl, x));
  CHECK(cl.to(MemoryFormat::ChannelsLast).is_same(cl));
  CHECK(strides_of(g.contiguous(MemoryFormat::ChannelsLast)) == kNhwc);
  // Across devices a dense layout is kept both ways.
  Tensor host_cl = x.contiguous(MemoryFormat::ChannelsLast);
  CHECK(strides_of(host_cl.to(kCuda)) == kNhwc);
  CHECK(strides_of(cl.cpu()) == kNhwc);
  CHECK(gpu_test::same_values(cl.cpu(), x));
  CHECK(strides_of(host_cl.to(kCuda, DType::Float16)) == kNhwc);
  CHECK(strides_of(host_cl.to(kCuda, DType::Float32, false, false, MemoryFormat::Contiguous)) == kNchw);
}

TEST_CASE("cuda memory format: element-wise results take the CPU's layout") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = gpu_test::sample({2, 3, 4, 5}, DType::Float32);
  Tensor bias = gpu_test::sample({3, 1, 1}, DType::Float32);
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  Tensor gcl = cl.to(kCuda), gx = x.to(kCuda), gbias = bias.to(kCuda);
  struct Case {
    const char* name;
    Tensor cpu, cuda;
  };
  for (const Case& c : {Case{"cl + x", cl + x, gcl + gx}, Case{"x + cl", x + cl, gx + gcl},
                        Case{"bias + cl", bias + cl, gbias + gcl}, Case{"cl * 2", cl * Scalar(2), gcl * Scalar(2)},
                        Case{"relu", relu(cl), relu(gcl)}, Case{"gelu", gelu(cl), gelu(gcl)},
                        Case{"where", where(gt(cl, Scalar(0.5)), cl, x), where(gt(gcl, Scalar(0.5)), gcl, gx)},
                        Case{"addcmul", addcmul(cl, x, x), addcmul(gcl, gx, gx)},
                        Case{"sliced exp", exp(cl.slice(3, 0, 4)), exp(gcl.slice(3, 0, 4))},
                        Case{"to half", cl.to(DType::Float16), gcl.to(DType::Float16)}}) {
    CAPTURE(c.name);
    CHECK(strides_of(c.cuda) == strides_of(c.cpu));
    CHECK(gpu_test::close_values(c.cuda, c.cpu, 1e-5) == "");
  }
  CHECK(strides_of(gcl + gx) == kNhwc);
  CHECK(strides_of(gx + gcl) == kNchw);
}

TEST_CASE("cuda memory format: the gradient of a channels_last leaf is channels_last") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = gpu_test::sample({2, 3, 4, 5}, DType::Float32).to(kCuda).contiguous(MemoryFormat::ChannelsLast);
  x.requires_grad_();
  (x * x).relu().sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(strides_of(x.grad()) == kNhwc);
  CHECK(gpu_test::close_values(x.grad(), x.detach() * Scalar(2), 1e-6) == "");
}

TEST_CASE("cuda memory format: copy_ between host and device in every pair of layouts") {
  ANATOMY_REQUIRE_GPU();
  // Same layout on both sides crosses as one memcpy; the others are staged or scattered. Every
  // pair must give the same values.
  Tensor x = gpu_test::sample({2, 3, 4, 5}, DType::Float32);
  const MemoryFormat formats[] = {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast};
  for (MemoryFormat from : formats) {
    for (MemoryFormat to : formats) {
      CAPTURE(to_string(from));
      CAPTURE(to_string(to));
      Tensor src = x.contiguous(from);
      Tensor device_dst = empty({2, 3, 4, 5}, kCuda, to);
      device_dst.copy_(src);
      CHECK(strides_of(device_dst) == (to == MemoryFormat::ChannelsLast ? kNhwc : kNchw));
      CHECK(gpu_test::same_values(device_dst, x));
      Tensor host_dst = empty({2, 3, 4, 5}, {}, from);
      host_dst.copy_(device_dst);
      CHECK(gpu_test::same_values(host_dst, x));
      // With a cast on the way.
      Tensor half_dst = empty({2, 3, 4, 5}, TensorOptions().dtype(DType::Float16).device(kCuda), to);
      half_dst.copy_(src);
      CHECK(gpu_test::same_values(half_dst.cpu(), x.to(DType::Float16)));
    }
  }
  // A destination that is not dense: a slice of a channels_last tensor.
  Tensor big = zeros({2, 3, 4, 6}, kCuda).contiguous(MemoryFormat::ChannelsLast);
  Tensor slice = big.slice(3, 0, 5);
  slice.copy_(x.contiguous(MemoryFormat::ChannelsLast));
  CHECK(gpu_test::same_values(slice, x));
  CHECK(gpu_test::values_of(big.slice(3, 5, 6)) == std::vector<double>(24, 0.0));
}

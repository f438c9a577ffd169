// A whole backend defined inside this test, on the PrivateUse1 slot, without touching anatomy:
// a device name, an allocator, and five kernels (empty, empty_strided, fill_, copy_,
// _local_scalar_dense). Everything else a user needs on it comes from the composites and view
// kernels every backend shares. This is the proof that adding a backend never edits the core.
//
// The "device" is host memory, so its kernels can compute by wrapping a tensor's bytes in a CPU
// tensor (from_blob) and calling the CPU kernels; a real backend would launch its own code.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/backend.h"

using namespace anatomy;
using namespace anatomy::dispatch;

namespace {

// ---- the allocator: host memory that counts its allocations ----
class NpuTestAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* p = nbytes == 0 ? nullptr : std::malloc(nbytes);
    ANATOMY_CHECK(nbytes == 0 || p != nullptr, OutOfMemoryError, "npu_test: cannot allocate {} bytes", nbytes);
    ++allocations;
    live_bytes += static_cast<int64_t>(nbytes);
    return DataPtr(p, new Block{p, nbytes}, &release, Device(DeviceType::PrivateUse1, 0));
  }

  static inline int64_t allocations = 0, frees = 0, live_bytes = 0;

 private:
  struct Block {
    void* ptr;
    size_t nbytes;
  };
  static void release(void* ctx) {
    auto* b = static_cast<Block*>(ctx);
    std::free(b->ptr);
    ++frees;
    live_bytes -= static_cast<int64_t>(b->nbytes);
    delete b;
  }
};

NpuTestAllocator g_allocator;

// The device name and the allocator, installed when the test program loads.
const bool g_backend_registered = [] {
  register_privateuse1_backend("npu_test");
  set_allocator(DeviceType::PrivateUse1, &g_allocator);
  return true;
}();

// The device, by name. Naming is global and other tests name PrivateUse1 too (any name may be
// registered again), so each test names it before it parses "npu_test".
Device npu_device() {
  register_privateuse1_backend("npu_test");
  return Device("npu_test");
}

// How many times each kernel ran.
struct Counts {
  int empty = 0, empty_strided = 0, fill = 0, copy = 0, item = 0;
};
Counts g_counts;

// A CPU tensor over the same bytes (this device's memory is host memory).
Tensor host_view(const Tensor& t) {
  if (t.is_cpu()) return t;
  ANATOMY_CHECK(t.device().type() == DeviceType::PrivateUse1, DeviceError,
                "npu_test: cannot exchange data with a {} tensor", t.device().str());
  return from_blob(t.data_ptr(), t.sizes(), t.strides(), TensorOptions().dtype(t.dtype()));
}

// ---- the kernels ----
Tensor empty_npu(IntArrayRef size, std::optional<DType> dtype, std::optional<Device>,
                 std::optional<MemoryFormat> format) {
  ++g_counts.empty;
  return make_empty_tensor(size, dtype.value_or(kDefaultFloat), &g_allocator, format.value_or(MemoryFormat::Contiguous),
                           "empty");
}

Tensor empty_strided_npu(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<Device>) {
  ++g_counts.empty_strided;
  return make_empty_tensor(size, stride, dtype.value_or(kDefaultFloat), &g_allocator, "empty_strided");
}

Tensor fill_npu(const Tensor& self, const Scalar& value) {
  ++g_counts.fill;
  if (self.numel() > 0) fill_(host_view(self), value);
  self.impl()->bump_version();
  return self;
}

// Called for npu <- npu, npu <- cpu and cpu <- npu: the highest backend key of the two
// tensors' key sets wins, and PrivateUse1 is above CPU.
Tensor copy_npu(const Tensor& self, const Tensor& src, bool non_blocking) {
  ++g_counts.copy;
  if (self.numel() > 0) copy_(host_view(self), host_view(src), non_blocking);
  self.impl()->bump_version();
  return self;
}

Scalar local_scalar_dense_npu(const Tensor& self) {
  ++g_counts.item;
  return _local_scalar_dense(host_view(self));
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", ANATOMY_KERNEL(empty_npu));
  m.impl("empty_strided", ANATOMY_KERNEL(empty_strided_npu));
  m.impl("fill_.Scalar", ANATOMY_KERNEL(fill_npu));
  m.impl("copy_", ANATOMY_KERNEL(copy_npu));
  m.impl("_local_scalar_dense", ANATOMY_KERNEL(local_scalar_dense_npu));
}

namespace {
std::vector<float> values_of(const Tensor& cpu) {
  REQUIRE(cpu.is_cpu());
  Tensor c = cpu.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}
}  // namespace

TEST_CASE("custom backend: the device name parses and prints") {
  const Device kNpu = npu_device();
  CHECK(kNpu.type() == DeviceType::PrivateUse1);
  CHECK(Device("npu_test:1").index() == 1);
  CHECK(Device("npu_test:1").str() == "npu_test:1");
  CHECK(device_type_name(DeviceType::PrivateUse1) == "npu_test");
  CHECK(get_allocator(DeviceType::PrivateUse1) == &g_allocator);
}

TEST_CASE("custom backend: zeros dispatches to its empty and fill_ kernels and allocates from its allocator") {
  const Device kNpu = npu_device();
  g_counts = {};
  int64_t allocations = NpuTestAllocator::allocations, frees = NpuTestAllocator::frees;
  {
    TraceCapture capture;
    Tensor z = zeros({2, 3}, kNpu);
    CHECK(capture.text() ==
          "[dispatch] aten::zeros [BackendSelect] -> BackendSelect (backend_select)\n"
          "[dispatch]   redispatch aten::zeros [PrivateUse1] -> PrivateUse1 (zeros_composite "
          "[CompositeExplicitAutograd])\n"
          "[dispatch]     aten::empty.memory_format [BackendSelect] -> BackendSelect (backend_select)\n"
          "[dispatch]       redispatch aten::empty.memory_format [PrivateUse1] -> PrivateUse1 (empty_npu)\n"
          "[dispatch]     aten::fill_.Scalar [AutogradPrivateUse1, PrivateUse1] -> AutogradPrivateUse1 "
          "(FillBackward0 [Autograd])\n"
          "[dispatch]       redispatch aten::fill_.Scalar [PrivateUse1] -> PrivateUse1 (fill_npu)\n"
          "[dispatch]         aten::fill_.Scalar [AutogradCPU, CPU] -> AutogradCPU (FillBackward0 [Autograd])\n"
          "[dispatch]           redispatch aten::fill_.Scalar [CPU] -> CPU (fill_cpu)\n");
    CHECK(g_counts.empty == 1);
    CHECK(g_counts.fill == 1);
    CHECK(NpuTestAllocator::allocations == allocations + 1);
    CHECK(NpuTestAllocator::live_bytes >= 24);
    CHECK(z.device().type() == DeviceType::PrivateUse1);
    CHECK(z.device().str() == "npu_test:0");
    CHECK(z.key_set() == DispatchKeySet{DispatchKey::PrivateUse1, DispatchKey::AutogradPrivateUse1});
    CHECK(z.sizes() == IntArrayRef{2, 3});
    CHECK(z.dtype() == DType::Float32);
  }
  CHECK(NpuTestAllocator::frees == frees + 1);  // the storage went back to the allocator

  // The other composite factories work too: they are built from empty and fill_.
  Tensor f = full({3}, 2.5, kNpu);
  CHECK(values_of(f.cpu()) == std::vector<float>{2.5f, 2.5f, 2.5f});
  Tensor o = ones_like(f);
  CHECK(o.device() == f.device());
  CHECK(values_of(o.cpu()) == std::vector<float>{1.f, 1.f, 1.f});
  Tensor e = empty_strided({2, 2}, {1, 2}, kNpu);
  CHECK(e.strides() == IntArrayRef{1, 2});
  CHECK(g_counts.empty_strided >= 1);
}

TEST_CASE("custom backend: .to() round-trips values, with and without a dtype change") {
  const Device kNpu = npu_device();
  g_counts = {};
  Tensor cpu = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor npu = cpu.to(kNpu);
  CHECK(npu.device().type() == DeviceType::PrivateUse1);
  CHECK(npu.data_ptr() != cpu.data_ptr());
  CHECK(g_counts.copy == 1);  // cpu -> npu ran copy_npu
  Tensor back = npu.to(kCPU);
  CHECK(g_counts.copy == 2);  // npu -> cpu too: PrivateUse1 is the highest backend of the pair
  CHECK(back.is_cpu());
  CHECK(values_of(back) == std::vector<float>{1, 2, 3, 4, 5, 6});

  Tensor npu64 = cpu.to(kNpu, DType::Float64);
  CHECK(npu64.dtype() == DType::Float64);
  CHECK(values_of(npu64.to(kCPU, DType::Float32)) == std::vector<float>{1, 2, 3, 4, 5, 6});
  // npu -> npu, and copy_ into an existing tensor.
  Tensor other = empty({2, 3}, kNpu);
  other.copy_(npu);
  CHECK(values_of(other.cpu()) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(npu.clone().device() == npu.device());

  // item() reads one element through its _local_scalar_dense kernel.
  CHECK(npu[1][2].item<double>() == 6.0);
  CHECK(g_counts.item == 1);
  // Data the backend cannot take: a meta source.
  CHECK_THROWS_AS(other.copy_(empty({2, 3}, kMeta)), DeviceError);
}

TEST_CASE("custom backend: views work through the CompositeExplicitAutograd kernels every backend shares") {
  const Device kNpu = npu_device();
  Tensor npu = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).to(kNpu);
  Tensor t = npu.t();
  CHECK(t.device() == npu.device());
  CHECK(t.is_alias_of(npu));
  CHECK(t.sizes() == IntArrayRef{3, 2});
  CHECK(t.strides() == IntArrayRef{1, 3});
  CHECK(values_of(t.cpu()) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(values_of(npu.select(0, 1).cpu()) == std::vector<float>{4, 5, 6});
  CHECK(values_of(npu.view({3, 2})[2].cpu()) == std::vector<float>{5, 6});
  CHECK(values_of(npu.reshape({6}).slice(0, 1, 6, 2).cpu()) == std::vector<float>{2, 4, 6});

  Tensor c = t.contiguous();
  CHECK_FALSE(c.is_alias_of(npu));
  CHECK(c.is_contiguous());
  CHECK(c.device() == npu.device());
  CHECK(values_of(c.cpu()) == std::vector<float>{1, 4, 2, 5, 3, 6});

  // Writing through a view writes the base.
  npu.select(1, 0).fill_(9);
  CHECK(values_of(npu.cpu()) == std::vector<float>{9, 2, 3, 9, 5, 6});

  // The table shows where each kernel comes from.
  std::string d = dump("aten::view");
  CHECK(d.find("  PrivateUse1                views::view [CompositeExplicitAutograd]\n") != std::string::npos);
  d = dump("aten::empty.memory_format");
  CHECK(d.find("  PrivateUse1                empty_npu\n") != std::string::npos);
}

TEST_CASE("custom backend: printing names the device") {
  const Device kNpu = npu_device();
  CHECK(to_string(zeros({2, 3}, kNpu)) ==
        "tensor([[0., 0., 0.],\n"
        "        [0., 0., 0.]], device='npu_test:0')");
  CHECK(to_string(arange(3, TensorOptions().dtype(DType::Int64)).to(kNpu)) == "tensor([0, 1, 2], device='npu_test:0')");
}

TEST_CASE("custom backend: an op without a kernel raises NotImplementedError naming PrivateUse1") {
  const Device kNpu = npu_device();
  Tensor npu = zeros({2}, kNpu);
  CHECK_THROWS_WITH_AS(npu.uniform_(), doctest::Contains("aten::uniform_: no kernel for PrivateUse1"),
                       NotImplementedError);
  CHECK_THROWS_WITH_AS(rand({2}, kNpu), doctest::Contains("no kernel for PrivateUse1"), NotImplementedError);
  CHECK_THROWS_WITH_AS(arange(3, kNpu), doctest::Contains("aten::arange.start_step: no kernel for PrivateUse1"),
                       NotImplementedError);
  // The message lists where kernels exist, so the user can see what is there.
  CHECK_THROWS_WITH_AS(npu.normal_(), doctest::Contains("kernels exist for: CPU"), NotImplementedError);
}

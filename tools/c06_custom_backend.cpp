// gpu-anatomy c06 custom-backend: a device added to the engine from outside it, in this file. The
// "demo" device takes the PrivateUse1 slot with a name, an allocator (host memory that counts its
// blocks) and five kernels (empty, empty_strided, fill_, copy_, _local_scalar_dense); everything
// else it runs comes from what every backend shares: views, composites, .to(). The run shows the
// dispatch trace of zeros on it (its own kernels answering), values going there and back, a view,
// item(), and the error for an operator it has no kernel for, which lists the keys that have one.
// docs/dispatcher.md explains the slot; tests/dispatch/test_custom_backend.cpp tests the same.
//
// The device's memory is host memory, so its kernels compute by reading the bytes through a CPU
// tensor (from_blob) and calling the CPU's kernels; a real backend would launch its own code.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "anatomy/backend.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"

namespace anatomy::tools {
namespace {

constexpr const char* kName = "demo";

struct KernelCalls {
  int empty = 0, empty_strided = 0, fill = 0, copy = 0, item = 0;
} g_calls;

class DemoAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* p = nbytes == 0 ? nullptr : std::malloc(nbytes);
    ANATOMY_CHECK(nbytes == 0 || p != nullptr, OutOfMemoryError, "{}: cannot allocate {} bytes", kName, nbytes);
    ++blocks;
    return DataPtr(p, p, &std::free, Device(DeviceType::PrivateUse1, 0));
  }
  int blocks = 0;
} g_allocator;

// The demo device's bytes seen as a CPU tensor (a CPU tensor as it is).
Tensor on_host(const Tensor& t) {
  if (t.is_cpu()) return t;
  ANATOMY_CHECK(t.device().type() == DeviceType::PrivateUse1, DeviceError, "{}: cannot exchange data with {}", kName,
                t.device().str());
  return from_blob(t.data_ptr(), t.sizes(), t.strides(), TensorOptions().dtype(t.dtype()));
}

Tensor demo_empty(IntArrayRef size, std::optional<DType> dtype, std::optional<Device>,
                  std::optional<MemoryFormat> format) {
  ++g_calls.empty;
  return make_empty_tensor(size, dtype.value_or(kDefaultFloat), &g_allocator, format.value_or(MemoryFormat::Contiguous),
                           "empty");
}
Tensor demo_empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<Device>) {
  ++g_calls.empty_strided;
  return make_empty_tensor(size, stride, dtype.value_or(kDefaultFloat), &g_allocator, "empty_strided");
}
Tensor demo_fill(const Tensor& self, const Scalar& value) {
  ++g_calls.fill;
  if (self.numel() > 0) fill_(on_host(self), value);
  self.impl()->bump_version();
  return self;
}
// demo <- demo, demo <- cpu and cpu <- demo all come here: PrivateUse1 is above CPU.
Tensor demo_copy(const Tensor& self, const Tensor& src, bool non_blocking) {
  ++g_calls.copy;
  if (self.numel() > 0) copy_(on_host(self), on_host(src), non_blocking);
  self.impl()->bump_version();
  return self;
}
Scalar demo_item(const Tensor& self) {
  ++g_calls.item;
  return _local_scalar_dense(on_host(self));
}

}  // namespace
}  // namespace anatomy::tools

ANATOMY_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace anatomy::tools;
  m.impl("empty.memory_format", ANATOMY_KERNEL(demo_empty));
  m.impl("empty_strided", ANATOMY_KERNEL(demo_empty_strided));
  m.impl("fill_.Scalar", ANATOMY_KERNEL(demo_fill));
  m.impl("copy_", ANATOMY_KERNEL(demo_copy));
  m.impl("_local_scalar_dense", ANATOMY_KERNEL(demo_item));
}

namespace anatomy::tools {
namespace {

void run(const CommonOptions& o) {
  register_privateuse1_backend(kName);
  set_allocator(DeviceType::PrivateUse1, &g_allocator);
  const Device demo(kName);
  Report report("c06", "custom-backend", o, Device("cpu"));
  fmt::print(
      "A device named '{}' on the PrivateUse1 slot: an allocator and five kernels, registered from this "
      "file\n\n=== zeros({{2, 3}}, {}) ===\n",
      kName, kName);
  Tensor z;
  {
    dispatch::TraceCapture capture(dispatch::TraceDetail::KernelFiles);
    z = zeros({2, 3}, TensorOptions().device(demo));
    fmt::print("{}\n", capture.text());
    report.results()["zeros_trace"] = capture.lines();
  }
  const Tensor host = arange(6, TensorOptions().dtype(DType::Float32)).view({2, 3});
  const Tensor there = host.to(demo), back = there.t().contiguous().to(kCPU);
  const bool round_trip = back.equal(host.t().contiguous());
  const double item = there.select(0, 1).select(0, 2).item<double>();
  fmt::print("=== What it runs through the kernels every backend shares ===\n");
  const DispatchKeySet keys = z.key_set();
  fmt::print("{:<44}{}, keys {} then {}\n", "z.device(), its dispatch keys", z.device().str(),
             anatomy::to_string(keys.highest()), anatomy::to_string(keys.highest_backend()));
  fmt::print("{:<44}{}\n", "arange(6).view(2, 3).to(demo).t().to(cpu)",
             round_trip ? "matches (a view on demo, then a copy)" : "DIFFERS");
  fmt::print("{:<44}{}\n", "there[1][2].item()", item);
  std::string missing;
  try {
    (void)there.add(there);
  } catch (const NotImplementedError& e) {
    missing = e.what();
  }
  fmt::print("{:<44}NotImplementedError: {}\n", "there + there (no add kernel on demo)", missing);
  fmt::print(
      "\n=== Kernel calls on demo ===\nempty {}, empty_strided {}, fill_ {}, copy_ {}, _local_scalar_dense {}; "
      "{} blocks from its allocator\n",
      g_calls.empty, g_calls.empty_strided, g_calls.fill, g_calls.copy, g_calls.item, g_allocator.blocks);
  report.results()["kernel_calls"] = {{"empty", g_calls.empty},
                                      {"empty_strided", g_calls.empty_strided},
                                      {"fill_", g_calls.fill},
                                      {"copy_", g_calls.copy},
                                      {"_local_scalar_dense", g_calls.item}};
  report.results()["missing_kernel_error"] = missing;
  report.add_note(
      "a backend is a name, an allocator and kernels registered with ANATOMY_LIBRARY_IMPL(aten, "
      "PrivateUse1, m): nothing in the engine was edited for it");
  report.add_note(
      "views, .to() and factories such as zeros run on it through the kernels every backend shares; an "
      "operator it lacks raises NotImplementedError naming the keys that have a kernel");
  report.print_notes();
  report.write_json();
  if (!round_trip || item != 5.0 || missing.empty()) {
    throw ExperimentFailed("c06 custom-backend: the demo device did not behave as the engine promises");
  }
}

}  // namespace

void add_c06_custom_backend(CLI::App& chapter) {
  CLI::App* cmd =
      chapter.add_subcommand("custom-backend", "A device added from outside the engine, and what runs on it");
  auto o = std::make_shared<CommonOptions>();
  cmd->add_option("--json", o->json, "write the report as JSON here (schema: docs/gpu-anatomy.schema.json)");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools

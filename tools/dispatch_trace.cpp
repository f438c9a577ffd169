// gpu-anatomy dispatch-trace: runs a small tensor program with the dispatch trace on and prints
// each dispatcher step (operator, key set, winning key, kernel; with --files, the source file
// that registered the kernel), then the kernel table of aten::copy_, where CPU and CUDA meet.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"

namespace anatomy::tools {
namespace {

std::string default_device() { return cuda::is_available() ? "cuda:0" : "cpu"; }

void run(const std::string& device_text, bool files) {
  Device device(device_text);
  // The program, as printed and as run (keep the two in step).
  const char* program[] = {
      "a = zeros({2, 3}, device)", "b = ones({3, 2}, device)", "c = b.t().contiguous()", "d = a.clone()",
      "h = c.to(cpu, fp64)",
  };
  Tensor h;
  std::vector<std::string> lines;
  {
    dispatch::TraceCapture capture(files ? dispatch::TraceDetail::KernelFiles : dispatch::TraceDetail::Kernels);
    Tensor a = zeros({2, 3}, device);
    Tensor b = ones({3, 2}, device);
    Tensor c = b.t().contiguous();
    Tensor d = a.clone();
    h = c.to(kCPU, DType::Float64);
    lines = capture.lines();
  }
  fmt::print("program (device = {}):\n", device.str());
  for (const char* line : program) fmt::print("  {}\n", line);
  fmt::print("\ndispatch trace:\n");
  for (const std::string& line : lines) fmt::print("{}\n", line);
  fmt::print("\nh = {}\n\n{}", to_string(h), dispatch::dump("aten::copy_"));
}

}  // namespace

void add_dispatch_trace(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("dispatch-trace", "Run a small program with the dispatch trace on");
  auto device = std::make_shared<std::string>(default_device());
  cmd->add_option("--device", *device, "cpu or cuda:N (default: cuda:0 when a GPU is present, else cpu)")
      ->capture_default_str();
  auto files = std::make_shared<bool>(false);
  cmd->add_flag("--files", *files, "after each kernel, the source file that registered it");
  cmd->callback([device, files] { run(*device, *files); });
}

}  // namespace anatomy::tools

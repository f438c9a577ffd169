// gpu-anatomy c03 lifecycle: seed 003's "allocated against reserved" through the life of a few
// tensors, and empty_cache. Each step makes or drops a tensor (x, the result of x * 2, a tensor of
// a few hundred bytes, then a tensor of x's size after x is gone) and the caching allocator's two
// figures are read after it: memory_allocated (the blocks handed out) and memory_reserved (what is
// held from the device). The run shows a freed block staying reserved, the next request of its
// size served from it without a new reservation, a small tensor taking a 2 MiB segment of the
// small pool, and empty_cache giving the cached segments back.
//
// On a CUDA device the tensors are real and the figures the CUDA allocator's (cuda::memory_*); on
// the CPU the steps run on the simulated device (testing/simulated_memory.h), whose allocator is
// the CUDA allocator's policy over host memory: the same figures for the same requests.
#include <fmt/format.h>

#include <map>
#include <memory>

#include "anatomy/cuda.h"
#include "anatomy/testing/simulated_memory.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  int64_t mib = 256;
};

// What the steps need from a device: named blocks made and dropped, and the allocator's figures.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual void make(const std::string& name, int64_t bytes) = 0;
  // The result of an element-wise op on `from` (x * 2): a new block of the same size.
  virtual void derive(const std::string& name, const std::string& from) = 0;
  virtual void drop(const std::string& name) = 0;
  virtual void empty_cache() = 0;
  virtual int64_t allocated() const = 0;
  virtual int64_t reserved() const = 0;
};

class CudaMemory final : public Memory {
 public:
  explicit CudaMemory(Device device) : device_(device) {}
  void make(const std::string& name, int64_t bytes) override {
    tensors_[name] = zeros({bytes / 4}, TensorOptions().dtype(DType::Float32).device(device_));
  }
  void derive(const std::string& name, const std::string& from) override { tensors_[name] = tensors_.at(from) * 2; }
  void drop(const std::string& name) override { tensors_.erase(name); }
  void empty_cache() override { cuda::empty_cache(); }
  int64_t allocated() const override { return cuda::memory_allocated(device_.index()); }
  int64_t reserved() const override { return cuda::memory_reserved(device_.index()); }

 private:
  Device device_;
  std::map<std::string, Tensor> tensors_;
};

class SimulatedMemory final : public Memory {
 public:
  explicit SimulatedMemory(int64_t capacity_mib) : device_(capacity_mib) {}
  ~SimulatedMemory() override {
    for (auto& [name, b] : blocks_) device_.free(b.first);
  }
  void make(const std::string& name, int64_t bytes) override { blocks_[name] = {device_.alloc(bytes), bytes}; }
  void derive(const std::string& name, const std::string& from) override { make(name, blocks_.at(from).second); }
  void drop(const std::string& name) override {
    device_.free(blocks_.at(name).first);
    blocks_.erase(name);
  }
  void empty_cache() override { device_.empty_cache(); }
  int64_t allocated() const override { return device_.allocated(); }
  int64_t reserved() const override { return device_.reserved(); }

 private:
  testing::SimulatedDevice device_;
  std::map<std::string, std::pair<void*, int64_t>> blocks_;
};

struct Step {
  std::string what;
  int64_t allocated, reserved;
};

void run(const Options& o) {
  check_positive("--mib", o.mib);
  if (o.mib > (int64_t{1} << 20)) throw UsageError(fmt::format("--mib: at most 1048576 (1 TiB), got {}", o.mib));
  const Device device = resolve_device(o.common.device, o.common.quiet);
  Report report("c03", "lifecycle", o.common, device);
  report.set_option("mib", o.mib);
  const int64_t bytes = o.mib << 20, small = 1000;
  std::unique_ptr<Memory> memory;
  if (device.is_cuda()) memory = std::make_unique<CudaMemory>(device);
  // The simulated device: room for the three large tensors and the small pool's segment.
  else memory = std::make_unique<SimulatedMemory>(4 * o.mib + 64);

  std::vector<Step> steps;
  const auto record = [&](const std::string& what) {
    steps.push_back({what, memory->allocated(), memory->reserved()});
  };
  record("start");
  memory->make("x", bytes);
  record(fmt::format("x = zeros({}) (fp32)", bytes_string(bytes)));
  memory->derive("y", "x");
  record("y = x * 2");
  memory->make("s", small);
  record(fmt::format("s = a tensor of {} B", small));
  memory->drop("x");
  record("del x");
  memory->make("x2", bytes);
  record(fmt::format("x2 = zeros({}) again", bytes_string(bytes)));
  memory->drop("x2");
  memory->drop("y");
  memory->drop("s");
  record("del x2, y, s");
  memory->empty_cache();
  record("empty_cache()");

  fmt::print("=== allocated against reserved through a tensor's life on {} ===\n",
             device.is_cuda() ? device.str() : "the simulated device (the CUDA allocator's policy)");
  fmt::print("{:<32} {:>14} {:>14} {:>14} {:>14}\n", "step", "allocated", "reserved", "change alloc.", "change res.");
  nlohmann::json rows = nlohmann::json::array();
  const auto delta = [](int64_t d) {
    return d == 0 ? std::string("0") : (d > 0 ? "+" : "-") + bytes_string(std::abs(d));
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const Step& before = steps[i == 0 ? 0 : i - 1];
    fmt::print("{:<32} {:>14} {:>14} {:>14} {:>14}\n", s.what, bytes_string(s.allocated), bytes_string(s.reserved),
               delta(s.allocated - before.allocated), delta(s.reserved - before.reserved));
    rows.push_back({{"step", s.what}, {"allocated_bytes", s.allocated}, {"reserved_bytes", s.reserved}});
    if (s.reserved < s.allocated) {
      throw ExperimentFailed(fmt::format("c03 lifecycle: after '{}' reserved ({}) is below allocated ({})", s.what,
                                         s.reserved, s.allocated));
    }
  }
  report.results()["steps"] = rows;

  // Notes from this run's figures (steps: 0 start, 1 x, 2 y, 3 s, 4 del x, 5 x2, 6 del all, 7 empty_cache).
  const auto change = [&](size_t i, bool reserved) {
    return reserved ? steps[i].reserved - steps[i - 1].reserved : steps[i].allocated - steps[i - 1].allocated;
  };
  report.add_note(fmt::format(
      "x: allocated grew by {}, reserved by {}{}", bytes_string(change(1, false)), bytes_string(change(1, true)),
      change(1, true) > change(1, false)
          ? fmt::format(" (a request of 1-10 MiB takes a 20 MiB segment){}",
                        change(2, true) == 0 ? "; y = x * 2 was carved from the rest of it" : "")
          : ": a large request reserves a segment of its own size (rounded to 2 MiB)"));
  report.add_note(fmt::format(
      "del x: allocated fell by {}, reserved by {}: the freed block stays in the cache for the next request",
      bytes_string(-change(4, false)), bytes_string(-change(4, true))));
  report.add_note(change(5, true) == 0 ? fmt::format("x2 ({}) was served from x's cached block: reserved did not grow",
                                                     bytes_string(bytes))
                                       : fmt::format("x2 ({}) needed {} more from the device: x's block was not reused",
                                                     bytes_string(bytes), bytes_string(change(5, true))));
  report.add_note(
      fmt::format("a tensor of {} B took {} of allocated and {} of reserved (the small pool's "
                  "blocks are rounded to 512 B and carved from 2 MiB segments)",
                  small, bytes_string(change(3, false)), bytes_string(change(3, true))));
  report.add_note(fmt::format("with nothing alive, {} stayed reserved until empty_cache() gave back {}",
                              bytes_string(steps[6].reserved - steps[0].reserved),
                              bytes_string(steps[6].reserved - steps[7].reserved)));
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c03_lifecycle(CLI::App& chapter) {
  CLI::App* cmd =
      chapter.add_subcommand("lifecycle", "allocated against reserved through a tensor's life; empty_cache");
  auto o = std::make_shared<Options>();
  add_common_options(cmd, o->common, CommonDefaults{});
  cmd->add_option("--mib", o->mib, "the large tensors' size in MiB")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools

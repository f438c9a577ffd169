// gpu-anatomy c00 device-info: what this build of anatomy is, the CPU it runs on and the CUDA
// devices it sees, as text and (--json FILE) in the report schema of every experiment, the facts
// under "results" (scripts/gpu-check.sh keeps the file).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools {
namespace {

using nlohmann::json;

#if ANATOMY_WITH_CUDA
constexpr bool kWithCuda = true;
#else
constexpr bool kWithCuda = false;
#endif

// 13000 -> "13.0", as CUDA encodes versions.
std::string cuda_version_string(int v) { return v == 0 ? "none" : fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

// The CPU's model name as /proc/cpuinfo gives it ("unknown" elsewhere).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      return line.substr(line.find(':') + 2);
    }
  }
  return "unknown";
}

// Everything the command reports, gathered once; the text form is written from it.
json collect() {
  json j;
  j["cpu"] = {{"model", cpu_model()},
              {"logical_cores", std::thread::hardware_concurrency()},
              {"intra_op_threads", get_num_threads()}};
  j["anatomy_version"] = ANATOMY_VERSION;
  j["build"] = {{"cuda", kWithCuda}, {"cuda_architectures", ANATOMY_CUDA_ARCHITECTURES}};
  // --peer torch: the libtorch this build was linked against, or null.
  const std::string peer = peer_available();
  j["build"]["peer"] = peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(peer);
  j["devices"] = json::array();
  j["device"] = "cpu";
  if (!kWithCuda) return j;
  int n = cuda::device_count();
  j["cuda"] = {
      {"driver_version", cuda::driver_version()}, {"runtime_version", cuda::runtime_version()}, {"device_count", n}};
  if (n == 0) j["cuda"]["unavailable_reason"] = cuda::unavailable_reason();
  for (int i = 0; i < n; ++i) {
    cuda::DeviceProperties p = cuda::get_device_properties(i);
    j["devices"].push_back({{"index", p.index},
                            {"name", p.name},
                            {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
                            {"multiprocessor_count", p.multiprocessor_count},
                            {"total_memory_bytes", p.total_memory},
                            {"l2_cache_bytes", p.l2_cache_size},
                            {"memory_clock_khz", p.memory_clock_khz},
                            {"memory_bus_width_bits", p.memory_bus_width},
                            {"clock_khz", p.clock_khz}});
  }
  if (n > 0) j["device"] = "cuda:0";
  return j;
}

void print_text(const json& j) {
  std::string archs = j["build"]["cuda_architectures"];
  fmt::print("anatomy {}\n", j["anatomy_version"].get<std::string>());
  fmt::print("build: CUDA {}; --peer torch {}\n", kWithCuda ? fmt::format("on (architectures: {})", archs) : "off",
             j["build"]["peer"].is_null() ? "off (built without libtorch, or its module is not beside the tool)"
                                          : "on (" + j["build"]["peer"].get<std::string>() + ")");
  fmt::print("cpu: {}, {} logical cores, {} intra-op threads\n", j["cpu"]["model"].get<std::string>(),
             j["cpu"]["logical_cores"].get<unsigned>(), j["cpu"]["intra_op_threads"].get<int>());
  if (!j.contains("cuda")) {
    fmt::print("no CUDA device: running on cpu (built without the CUDA backend)\n");
    return;
  }
  const json& c = j["cuda"];
  fmt::print("CUDA runtime {}, driver {}\n", cuda_version_string(c["runtime_version"]),
             cuda_version_string(c["driver_version"]));
  if (c["device_count"] == 0) {
    fmt::print("no CUDA device: running on cpu ({})\n", c["unavailable_reason"].get<std::string>());
    return;
  }
  for (const json& d : j["devices"]) {
    double gib = d["total_memory_bytes"].get<double>() / (1024.0 * 1024.0 * 1024.0);
    // Peak DRAM bandwidth: two transfers a clock (DDR) over the bus.
    double peak_gbs =
        2.0 * d["memory_clock_khz"].get<double>() * 1e3 * d["memory_bus_width_bits"].get<double>() / 8 / 1e9;
    fmt::print("cuda:{}  {}\n", d["index"].get<int>(), d["name"].get<std::string>());
    fmt::print("  compute capability : {}\n", d["compute_capability"].get<std::string>());
    fmt::print("  multiprocessors    : {}\n", d["multiprocessor_count"].get<int>());
    fmt::print("  SM clock           : {} MHz\n", d["clock_khz"].get<int>() / 1000);
    fmt::print("  memory             : {:.1f} GiB, {}-bit bus at {} MHz (peak {:.0f} GB/s)\n", gib,
               d["memory_bus_width_bits"].get<int>(), d["memory_clock_khz"].get<int>() / 1000, peak_gbs);
    fmt::print("  L2 cache           : {:.1f} MiB\n", d["l2_cache_bytes"].get<double>() / (1024.0 * 1024.0));
  }
}

}  // namespace

void add_device_info(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("device-info", "The build, the CPU, the CUDA devices and their properties");
  auto o = std::make_shared<CommonOptions>();
  cmd->add_option("--json", o->json, "write the report as JSON here (schema: docs/gpu-anatomy.schema.json)");
  cmd->callback([o] {
    const json j = collect();
    print_text(j);
    Report report("c00", "device-info", *o, Device(j["device"].get<std::string>()));
    for (const auto& [key, value] : j.items()) report.results()[key] = value;
    report.write_json();
  });
}

}  // namespace anatomy::tools

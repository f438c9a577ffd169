// The common options, device and dtype resolution, and the report of gpu-anatomy's experiments.
#include "anatomy/tools/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "anatomy/cuda.h"

namespace anatomy::tools {

void add_common_options(CLI::App* cmd, CommonOptions& o, const CommonDefaults& d) {
  cmd->add_option("--device", o.device, "cpu, cuda or cuda:N (default: cuda:0 when a GPU is present, else cpu)");
  if (d.dtype) {
    o.dtype = *d.dtype;
    cmd->add_option("--dtype", o.dtype, "the tensors' dtype")->check(CLI::IsMember(d.dtypes))->capture_default_str();
  }
  if (d.iters) {
    o.iters = *d.iters;
    o.warmup = d.warmup;
    cmd->add_option("--iters", o.iters, "timed iterations (the median is reported)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--warmup", o.warmup, "untimed iterations first")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
  }
  cmd->add_option("--json", o.json, "write the results as JSON here (schema: docs/gpu-anatomy.schema.json)");
  cmd->add_flag("--quiet", o.quiet, "no progress line and no notes on stderr");
  if (d.peer) {
    cmd->add_option("--peer", o.peer,
                    "torch: PyTorch's figure beside each of ours, in this process on the same tensors (a build "
                    "against libtorch)");
  }
}

namespace {
std::string list_devices() {
  std::string s;
  for (int i = 0; i < cuda::device_count(); ++i) {
    s += fmt::format("{}cuda:{} ({})", i ? ", " : "", i, cuda::get_device_properties(i).name);
  }
  return s;
}
}  // namespace

Device resolve_device(const std::string& text, bool quiet) {
  if (text.empty()) {
    if (cuda::is_available()) return Device("cuda:0");
    if (!quiet) std::cerr << "gpu-anatomy: no CUDA device (" << cuda::unavailable_reason() << "): running on cpu\n";
    return Device("cpu");
  }
  if (text == "cpu") return Device("cpu");
  int index = -1;
  if (text == "cuda") {
    index = 0;
  } else if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 9 &&
             std::all_of(text.begin() + 5, text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    index = std::stoi(text.substr(5));
  } else {
    throw UsageError(fmt::format("--device: '{}' is not a device (cpu, cuda or cuda:N)", text));
  }
  if (!cuda::is_available()) {
    throw UsageError(fmt::format("--device {}: no CUDA device is available ({})", text, cuda::unavailable_reason()));
  }
  if (index >= cuda::device_count()) {
    throw UsageError(fmt::format("--device {}: this machine has {} CUDA device{}: {}", text, cuda::device_count(),
                                 cuda::device_count() == 1 ? "" : "s", list_devices()));
  }
  return Device(fmt::format("cuda:{}", index));
}

DType resolve_dtype(const std::string& text) {
  if (text == "fp32") return DType::Float32;
  if (text == "fp16") return DType::Float16;
  if (text == "bf16") return DType::BFloat16;
  if (text == "fp64") return DType::Float64;
  if (text == "int8") return DType::Int8;
  throw UsageError(fmt::format("--dtype: '{}' is not one of fp32, fp16, bf16, fp64, int8", text));
}

std::string long_dtype_name(DType t) {
  switch (t) {
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    default:
      return std::string(name(t));
  }
}

std::string shape_tuple(IntArrayRef v) {
  return v.size() == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v, ", "));
}

std::string bytes_string(int64_t bytes) {
  constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
  if (bytes < kKiB) return fmt::format("{} B", bytes);
  const int64_t unit = bytes < kMiB ? kKiB : kMiB;
  const char* name = bytes < kMiB ? "KiB" : "MiB";
  if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, name);
  return fmt::format("{:.1f} {}", static_cast<double>(bytes) / static_cast<double>(unit), name);
}

void check_positive(const char* option, int64_t value) {
  if (value < 1) throw UsageError(fmt::format("{}: the size must be at least 1, got {}", option, value));
}

std::vector<int64_t> parse_sizes(const char* option, const std::string& text) {
  std::vector<int64_t> v;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    size_t used = 0;
    int64_t n = 0;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) {
      throw UsageError(fmt::format("{}: '{}' is not a list of sizes (e.g. 64,256,1024)", option, text));
    }
    check_positive(option, n);
    v.push_back(n);
    start = end + 1;
  }
  return v;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

Report::Report(std::string chapter, std::string experiment, const CommonOptions& o, Device device)
    : json_path_(o.json) {
  doc_["schema"] = "gpu-anatomy/1";
  doc_["chapter"] = std::move(chapter);
  doc_["experiment"] = std::move(experiment);
  doc_["anatomy_version"] = ANATOMY_VERSION;
  doc_["device"] = device.str();
  doc_["device_name"] = device.is_cuda() ? cuda::get_device_properties(device.index()).name : std::string("cpu");
  doc_["options"] = nlohmann::json::object();
  if (!o.dtype.empty()) doc_["options"]["dtype"] = o.dtype;
  if (o.iters > 0) {
    doc_["options"]["iters"] = o.iters;
    doc_["options"]["warmup"] = o.warmup;
  }
  if (!o.peer.empty()) doc_["options"]["peer"] = o.peer;
  doc_["measurements"] = nlohmann::json::array();
  doc_["results"] = nlohmann::json::object();
  doc_["notes"] = nlohmann::json::array();
}

void Report::add_measurement(const std::string& group, const std::string& name, std::vector<double> samples_ms) {
  doc_["measurements"].push_back({{"group", group},
                                  {"name", name},
                                  {"unit", "ms"},
                                  {"median", median(samples_ms)},
                                  {"p10", quantile(samples_ms, 0.1)},
                                  {"p90", quantile(samples_ms, 0.9)},
                                  {"iters", samples_ms.size()}});
}

void Report::add_measurement(const std::string& group, const std::string& name, std::vector<double> samples_ms,
                             const std::string& peer_engine, const std::vector<double>& peer_samples_ms) {
  add_measurement(group, name, std::move(samples_ms));
  doc_["measurements"].back()["peer"] = {{"engine", peer_engine},
                                         {"median", median(peer_samples_ms)},
                                         {"p10", quantile(peer_samples_ms, 0.1)},
                                         {"p90", quantile(peer_samples_ms, 0.9)},
                                         {"iters", peer_samples_ms.size()}};
}

std::string peer_cell(double ours_ms, double peer_ms) {
  if (peer_ms < 0) return "-";
  return ours_ms > 0 ? fmt::format("{:.4f} ({:.2f}x)", peer_ms, peer_ms / ours_ms) : fmt::format("{:.4f}", peer_ms);
}

void Report::add_note(const std::string& note) { doc_["notes"].push_back(note); }

void Report::print_notes(bool blank_first) const {
  fmt::print("{}Notes:\n", blank_first ? "\n" : "");
  for (const auto& n : doc_["notes"]) fmt::print("  - {}\n", n.get<std::string>());
}

void write_file_atomically(const std::string& path, const std::string& text, const char* option) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.good()) throw UsageError(fmt::format("{}: cannot write '{}'", option, path));
    out << text;
    if (!out.good()) {
      std::remove(tmp.c_str());
      throw UsageError(fmt::format("{}: writing '{}' failed", option, path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw UsageError(fmt::format("{}: cannot write '{}' ({})", option, path, ec.message()));
  }
}

void Report::write_document(const nlohmann::json& doc, const std::string& path, const char* option) {
  write_file_atomically(path, doc.dump(2) + "\n", option);
}

void Report::write_json() const {
  if (!json_path_.empty()) write_document(doc_, json_path_);
}

}  // namespace anatomy::tools

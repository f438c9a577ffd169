// What every experiment of gpu-anatomy shares: the common options (--device, --dtype, --iters,
// --warmup, --json, --quiet), the device and dtype they name (checked, with one-line errors),
// and the report an experiment fills: its text goes to stdout as it runs, its measurements and
// tables into one JSON document of the schema in docs/gpu-anatomy.schema.json (docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::tools {

// A bad argument found after parsing (a device that does not exist, a size of zero): printed as
// one line, exit status 2, as CLI11's own parse errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An experiment that ran but found something wrong (a result that differs from its reference):
// its message is printed, exit status 1.
class ExperimentFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The options every experiment takes; each experiment states which of them apply and its defaults.
struct CommonOptions {
  std::string device;  // empty: cuda:0 when a GPU is present, else cpu (with a note on stderr)
  std::string dtype;
  int iters = 0;
  int warmup = 0;
  std::string json;  // write the report here
  bool quiet = false;
  std::string peer;  // --peer torch: PyTorch's figure beside each one (tools/peer.h); empty: none
};

struct CommonDefaults {
  std::optional<std::string> dtype;  // nullopt: the experiment takes no --dtype
  std::vector<std::string> dtypes = {"fp32", "fp16", "bf16", "fp64", "int8"};
  std::optional<int> iters;  // nullopt: no --iters / --warmup
  int warmup = 3;
  bool peer = false;  // the experiment takes --peer
};

// Adds the common options to an experiment's subcommand.
void add_common_options(CLI::App* cmd, CommonOptions& o, const CommonDefaults& d);

// The device --device names: "cpu", "cuda" (cuda:0) or "cuda:N". UsageError for anything else,
// for a CUDA device when none is present (with the reason), or for an index this machine lacks
// (listing the devices it has). Empty: the default, with a note on stderr when that is the CPU.
Device resolve_device(const std::string& text, bool quiet);
// fp32, fp16, bf16, fp64, int8 (UsageError otherwise, listing them).
DType resolve_dtype(const std::string& text);
// The dtype as PyTorch spells it after "torch.": float16, bfloat16, float32, float64, int8.
std::string long_dtype_name(DType t);
// Sizes and strides as Python prints a tuple: (2048, 1), (5,).
std::string shape_tuple(IntArrayRef v);
// Bytes for people: "512 B", "4 KiB", "144.5 KiB", "256 MiB", "4580.1 MiB" (whole numbers when
// exact, one decimal otherwise; MiB from 1 MiB up, so large figures stay comparable).
std::string bytes_string(int64_t bytes);

// A size option that must be at least 1 (UsageError naming the option otherwise).
void check_positive(const char* option, int64_t value);
// A comma-separated list of sizes ("64,256,1024"), each at least 1.
std::vector<int64_t> parse_sizes(const char* option, const std::string& text);

// An experiment's results: printed text goes to stdout as the experiment runs (through print),
// the same figures go into the JSON document.
class Report {
 public:
  Report(std::string chapter, std::string experiment, const CommonOptions& o, Device device);

  // One timed figure: the median of the samples with p10 and p90, in milliseconds.
  struct Measurement {
    std::string group, name;
    std::vector<double> samples_ms;
  };
  void add_measurement(const std::string& group, const std::string& name, std::vector<double> samples_ms);
  // The same with the peer engine's samples for the same workload (--peer): under "peer".
  void add_measurement(const std::string& group, const std::string& name, std::vector<double> samples_ms,
                       const std::string& peer_engine, const std::vector<double>& peer_samples_ms);
  // Any other value the experiment reports (counts, byte sizes, ratios), under results[key].
  nlohmann::json& results() { return doc_["results"]; }
  void set_option(const std::string& key, nlohmann::json value) { doc_["options"][key] = std::move(value); }
  void add_note(const std::string& note);
  // Prints "Notes:" and each note as a "  - " line (after a blank line when `blank_first`).
  void print_notes(bool blank_first = true) const;
  const nlohmann::json& document() const { return doc_; }
  // Writes the document to the --json file, if one was given (write_document).
  void write_json() const;
  // Writes a JSON document to `path`: to path + ".partial" first, renamed over the target when
  // complete, so a failed run leaves no half-written file (UsageError naming `option` when the
  // file cannot be written).
  static void write_document(const nlohmann::json& doc, const std::string& path, const char* option = "--json");

 private:
  nlohmann::json doc_;
  std::string json_path_;
};

// A table cell for the peer's median beside ours: "1.2345 (0.87x)", the ratio being the peer's
// time over ours (above 1: anatomy is faster); "-" when there is no peer figure (peer_ms < 0).
std::string peer_cell(double ours_ms, double peer_ms);

// Writes `text` to `path` through path + ".partial", as write_document.
void write_file_atomically(const std::string& path, const std::string& text, const char* option);

double median(std::vector<double> v);
// The q-quantile (0..1) of the samples, linearly interpolated.
double quantile(std::vector<double> v, double q);

}  // namespace anatomy::tools

// gpu-anatomy suite [--quick], and c01 all [--quick] (chapter 01's experiments alone): every
// experiment that writes a report, one after another with its defaults (--quick: small sizes,
// under a minute on a GPU, seconds on the CPU), each in its own
// process (this program, run again with the experiment's arguments), so one experiment's failure
// or memory does not reach the next. Their outputs go to stdout as they run; their reports are
// gathered into one JSON document (docs/gpu-anatomy.schema.json, "suite"). Exit status: 1 when
// an experiment failed (the others still run), 2 and 3 as every experiment. --peer torch is passed
// to every experiment that takes it.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  bool quick = false;
};

struct Step {
  std::string chapter, experiment;
  std::vector<std::string> args;  // after the device
};

// The experiments with the arguments of a quick run (sizes for the CPU or for a GPU) or of a full
// one (the seed's defaults).
std::vector<Step> plan(bool quick, bool gpu) {
  const std::string size = gpu ? "1024" : "256";
  std::vector<Step> steps = {{"c00", "device-info", {}}, {"c01", "layout", {}}};
  if (quick) {
    steps.push_back({"c01", "contiguity-bench", {"--m", size, "--n", size, "--k", size, "--iters", "10"}});
    steps.push_back({"c01", "sync-points", {"--size", size, "--iters", "10"}});
    steps.push_back({"c01", "autograd-inspect", {"--batch", "1", "--seq", "32", "--dmodel", "128", "--nhead", "4"}});
    steps.push_back({"c02", "precision", {"--sizes", gpu ? "1024,2048" : "64,128", "--iters", "10"}});
    steps.push_back({"c03", "lifecycle", {"--mib", "64"}});
    steps.push_back({"c03", "fragmentation", {}});
    steps.push_back({"c03", "oom", {}});
    steps.push_back({"c04", "transfers", {"--sizes", gpu ? "4096,1048576,16777216" : "4096,1048576", "--iters", "5"}});
    steps.push_back({"c05", "streams", {"--size", gpu ? "1024" : "128", "--iters", "5"}});
    steps.push_back({"c06", "overhead", {"--iters", "10"}});
    steps.push_back({"c06", "custom-backend", {}});
    steps.push_back({"c07", "cpu-vs-gpu", {"--sizes", gpu ? "64,256,1024,2048" : "64,128,256", "--iters", "5"}});
    steps.push_back({"c08", "dlpack", {"--quick"}});
    steps.push_back({"c09", "graphs", {"--iters", "10", "--warmup", "2"}});
    steps.push_back({"c10", "profile", {"--quick", "--iters", "3"}});
    steps.push_back({"c11", "memory-format", {"--quick", "--iters", "3", "--warmup", "1"}});
  } else {
    steps.push_back({"c01", "contiguity-bench", {}});
    steps.push_back({"c01", "sync-points", {}});
    steps.push_back({"c01", "autograd-inspect", {}});
    steps.push_back({"c02", "precision", {}});
    steps.push_back({"c03", "lifecycle", {}});
    steps.push_back({"c03", "fragmentation", {}});
    steps.push_back({"c03", "oom", {}});
    steps.push_back({"c04", "transfers", {}});
    steps.push_back({"c05", "streams", {}});
    steps.push_back({"c06", "overhead", {}});
    steps.push_back({"c06", "custom-backend", {}});
    steps.push_back({"c07", "cpu-vs-gpu", {}});
    steps.push_back({"c08", "dlpack", {}});
    steps.push_back({"c09", "graphs", {}});
    steps.push_back({"c10", "profile", {}});
    steps.push_back({"c11", "memory-format", {}});
  }
  return steps;
}

// Whether the step's experiment has a --peer option (tools/peer.h), as its command line says.
bool takes_peer(const CLI::App& root, const Step& s) {
  const CLI::App* experiment = root.get_subcommand(s.chapter)->get_subcommand(s.experiment);
  return experiment->get_option_no_throw("--peer") != nullptr;
}

// Runs this program again with `args`; returns its exit status (127 when it could not start).
int run_self(const std::vector<std::string>& args) {
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) return 127;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return 1;
  return WEXITSTATUS(status);
}

// Runs the steps whose chapter is `only` (every step when empty); `what` names the run in errors.
void run(const Options& o, const std::string& only, const std::string& what, const CLI::App& root) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  check_peer(o.common.peer);  // a build without the peer fails here, before any experiment
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("gpu-anatomy-suite-{}", static_cast<long>(getpid()));
  std::filesystem::create_directories(dir);
  struct RemoveDir {
    std::filesystem::path p;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  } cleanup{dir};
  nlohmann::json doc;
  doc["schema"] = "gpu-anatomy-suite/1";
  doc["anatomy_version"] = ANATOMY_VERSION;
  doc["device"] = device.str();
  doc["quick"] = o.quick;
  doc["reports"] = nlohmann::json::array();
  doc["failed"] = nlohmann::json::array();
  int worst = 0;
  for (const Step& s : plan(o.quick, device.is_cuda())) {
    if (!only.empty() && s.chapter != only) continue;
    const std::string file = (dir / fmt::format("{}-{}.json", s.chapter, s.experiment)).string();
    std::vector<std::string> args = {"gpu-anatomy", s.chapter, s.experiment};
    // device-info reports every device, custom-backend's device is its own, and c03's policy
    // experiments run on the simulated device.
    const bool takes_device = (s.chapter != "c03" || s.experiment == "lifecycle") && s.experiment != "device-info" &&
                              s.experiment != "custom-backend";
    if (takes_device) args.insert(args.end(), {"--device", device.str()});
    args.insert(args.end(), s.args.begin(), s.args.end());
    fmt::print("\n##### gpu-anatomy {}\n", fmt::join(args.begin() + 1, args.end(), " "));
    args.insert(args.end(), {"--json", file});
    if (o.common.quiet && takes_device) args.push_back("--quiet");
    if (!o.common.peer.empty() && takes_peer(root, s)) args.insert(args.end(), {"--peer", o.common.peer});
    const int rc = run_self(args);
    if (rc != 0) {
      doc["failed"].push_back({{"chapter", s.chapter}, {"experiment", s.experiment}, {"exit_status", rc}});
      worst = std::max(worst, rc == 2 || rc == 3 ? rc : 1);
      continue;
    }
    std::ifstream in(file);
    doc["reports"].push_back(nlohmann::json::parse(in));
  }
  if (!o.common.json.empty()) {
    Report::write_document(doc, o.common.json);
    fmt::print("\nwrote {} ({} reports)\n", o.common.json, doc["reports"].size());
  }
  if (worst == 1) throw ExperimentFailed(fmt::format("{}: {} experiment(s) failed", what, doc["failed"].size()));
  if (worst != 0) throw UsageError(fmt::format("{}: {} experiment(s) failed", what, doc["failed"].size()));
}

}  // namespace

// A command that runs the plan's steps (of chapter `only`, or all): its options and its callback.
void add_runner(CLI::App* cmd, const std::string& only, const std::string& what) {
  auto o = std::make_shared<Options>();
  cmd->add_option("--device", o->common.device,
                  "cpu, cuda or cuda:N (default: cuda:0 when a GPU is present, else cpu)");
  cmd->add_flag("--quick", o->quick, "small sizes: under a minute on a GPU, seconds on the CPU");
  cmd->add_option("--json", o->common.json, "write every report here, in one document");
  cmd->add_flag("--quiet", o->common.quiet, "no progress lines and no notes on stderr");
  cmd->add_option("--peer", o->common.peer, "torch: passed to every experiment that takes --peer");
  cmd->callback([o, only, what, cmd] {
    const CLI::App* root = cmd;
    while (root->get_parent() != nullptr) root = root->get_parent();
    run(*o, only, what, *root);
  });
}

void add_suite(CLI::App& app) {
  add_runner(app.add_subcommand("suite", "Every experiment with its defaults, one JSON file for all"), "", "suite");
}

void add_c01_all(CLI::App& chapter) {
  add_runner(chapter.add_subcommand("all", "The chapter's four experiments with their defaults"), "c01", "c01 all");
}

}  // namespace anatomy::tools

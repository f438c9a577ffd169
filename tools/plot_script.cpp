// Finding and running the plotting scripts (plot_script.h), through run_program (no shell).
#include "anatomy/tools/plot_script.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "anatomy/tools/experiment.h"
#include "anatomy/tools/run_program.h"

namespace anatomy::tools {

PlotScript find_plot_script(const std::string& name, const std::string& who, const std::string& skip) {
  const std::filesystem::path source = ANATOMY_SOURCE_DIR;
  PlotScript s;
  s.script = (source / "scripts" / name).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.script, ec)) {
    throw UsageError(
        fmt::format("{}: the picture is drawn by {}, which is not there (the source tree the tool was "
                    "built from); {} writes no picture",
                    who, s.script, skip));
  }
  const std::filesystem::path venv = source / ".venv" / "bin" / "python";
  const char* chosen = std::getenv("ANATOMY_PLOT_PYTHON");
  if (chosen != nullptr && *chosen != '\0') {
    s.python = chosen;
  } else if (std::filesystem::exists(venv, ec)) {
    s.python = venv.string();
  } else {
    s.python = "python3";
  }
  std::string error;
  const int rc = run_program({s.python, "-c", "import matplotlib"}, /*quiet=*/true, error);
  if (rc == 127 && !error.empty()) {
    throw UsageError(
        fmt::format("{}: cannot run the interpreter {} for the picture ({}); ANATOMY_PLOT_PYTHON names "
                    "another one, {} writes no picture",
                    who, s.python, error, skip));
  }
  if (rc != 0) {
    throw UsageError(
        fmt::format("{}: the picture needs matplotlib, which {} does not import (scripts/setup.sh "
                    "installs it into .venv; ANATOMY_PLOT_PYTHON names another interpreter; {} writes no "
                    "picture)",
                    who, s.python, skip));
  }
  return s;
}

void run_plot_script(const PlotScript& s, const std::vector<std::string>& args, const std::string& who) {
  std::vector<std::string> argv = {s.python, s.script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::fflush(nullptr);  // what the tool printed comes before what the script prints
  std::string error;
  const int rc = run_program(argv, /*quiet=*/false, error);
  if (rc != 0) {
    throw ExperimentFailed(fmt::format("{}: {} {} exited with status {}{}", who, s.python, s.script, rc,
                                       error.empty() ? "" : fmt::format(" ({})", error)));
  }
}

}  // namespace anatomy::tools

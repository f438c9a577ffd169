// Finding and running the plotting scripts (plot_script.h): posix_spawn with the arguments as
// they are (no shell), so paths with spaces or quotes pass unchanged.
#include "anatomy/tools/plot_script.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "anatomy/tools/experiment.h"

extern char** environ;

namespace anatomy::tools {
namespace {

// The exit status of `argv` (127 when it could not be started, with errno's text in `error`),
// its standard output and error sent to /dev/null when `quiet`.
int spawn_and_wait(const std::vector<std::string>& args, bool quiet, std::string& error) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  // posix_spawnp: a bare name (python3) is looked up on PATH, a path is used as it is.
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = std::strerror(rc);
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      error = std::strerror(errno);
      return 127;
    }
  }
  if (WIFSIGNALED(status)) {
    error = fmt::format("killed by signal {}", WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

}  // namespace

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
  const int rc = spawn_and_wait({s.python, "-c", "import matplotlib"}, /*quiet=*/true, error);
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
  const int rc = spawn_and_wait(argv, /*quiet=*/false, error);
  if (rc != 0) {
    throw ExperimentFailed(fmt::format("{}: {} {} exited with status {}{}", who, s.python, s.script, rc,
                                       error.empty() ? "" : fmt::format(" ({})", error)));
  }
}

}  // namespace anatomy::tools

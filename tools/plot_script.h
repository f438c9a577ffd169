// The pictures gpu-anatomy draws from the files an experiment writes: a script of the source
// tree's scripts/ run by the project's virtual environment (.venv, whose matplotlib
// scripts/python-requirements.txt pins and scripts/setup.sh installs).
#pragma once

#include <string>
#include <vector>

namespace anatomy::tools {

// The interpreter and the script that draw a picture.
struct PlotScript {
  std::string python;  // $ANATOMY_PLOT_PYTHON, else .venv/bin/python of the source tree, else python3 on PATH
  std::string script;  // scripts/NAME of the source tree the tool was built from
};

// Finds the script and an interpreter that imports matplotlib, before the experiment runs, so that
// a machine without them fails in a second rather than after the measurements: UsageError naming
// `who` ("c10 profile"), what is missing and how to get it, and `skip` (the option that does
// without the picture).
PlotScript find_plot_script(const std::string& name, const std::string& who, const std::string& skip);

// Runs `python script args...` (its output is the tool's); ExperimentFailed naming `who` and the
// exit status when it fails.
void run_plot_script(const PlotScript& s, const std::vector<std::string>& args, const std::string& who);

}  // namespace anatomy::tools

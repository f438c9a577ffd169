// Running another program from the tool (Graphviz's dot, the plotting scripts' Python): posix_spawn
// with the arguments as they are (no shell), so paths with spaces or quotes pass unchanged.
#pragma once

#include <string>
#include <vector>

namespace anatomy::tools {

// The exit status of args[0] run with `args` (a bare name is looked up on PATH), its standard
// output and error sent to /dev/null when `quiet`; 127 with errno's text in `error` when it could
// not be started, 128 + N with the signal in `error` when signal N ended it.
int run_program(const std::vector<std::string>& args, bool quiet, std::string& error);

}  // namespace anatomy::tools

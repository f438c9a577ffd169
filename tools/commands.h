// The subcommands of gpu-anatomy, one file each. Each adds itself (options and the code it
// runs) to the application; main.cpp calls them in the order --help lists them.
#pragma once

#include <CLI/CLI.hpp>

namespace anatomy::tools {

// device-info [--json]: the build, the CUDA devices and their properties.
void add_device_info(CLI::App& app);
// dispatch-trace [--device cpu|cuda:N]: a small program with the dispatch trace on.
void add_dispatch_trace(CLI::App& app);
// memory-snapshot [--simulated] [--html F] [--json F] [--svg F]: the caching allocator's summary
// and snapshot after a small workload.
void add_memory_snapshot(CLI::App& app);

}  // namespace anatomy::tools

// gpu-anatomy: the command-line tool of anatomy. Subcommands live in their own files
// (tools/commands.h); an anatomy error ends the command with its message and exit status 1.
#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"gpu-anatomy: look inside the anatomy tensor engine"};
  app.require_subcommand(1);
  anatomy::tools::add_device_info(app);
  anatomy::tools::add_dispatch_trace(app);
  anatomy::tools::add_memory_snapshot(app);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const anatomy::Error& e) {
    std::cerr << "gpu-anatomy: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

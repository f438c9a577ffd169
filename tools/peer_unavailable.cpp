// --peer in a build without libtorch (tools/peer.h): the peer cannot be opened, and the error says
// how to build a tool that has it.
#include <fmt/format.h>

#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools {

std::unique_ptr<Peer> make_torch_peer() {
  throw UsageError(
      "--peer torch: this gpu-anatomy was built without libtorch; configure with torch's CMake package on "
      "CMAKE_PREFIX_PATH (docs/cli.md, \"Beside PyTorch\")");
}

std::string peer_available() { return {}; }

}  // namespace anatomy::tools

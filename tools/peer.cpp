// Opening the peer --peer names, and its workloads checked and timed as the experiments' own
// (tools/peer.h).
#include <fmt/format.h>

#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {

void check_peer(const std::string& name) {
  if (name.empty()) return;
  if (name != "torch") throw UsageError(fmt::format("--peer: '{}' is not a peer (torch)", name));
  if (peer_available().empty()) (void)make_torch_peer();  // throws why there is none
}

std::unique_ptr<Peer> open_peer(const std::string& name) {
  check_peer(name);
  return name.empty() ? nullptr : make_torch_peer();
}

std::vector<double> time_peer(const std::string& group, const std::string& name, PeerCall& call, const Peer& peer,
                              const CommonOptions& o, Device device, const std::function<double(const Tensor&)>& error,
                              double tolerance) {
  const double err = error(call.result());
  if (!(err <= tolerance)) {
    throw ExperimentFailed(fmt::format("{} {}: {}'s result differs from the reference (relative {:.3g})", group, name,
                                       peer.engine(), err));
  }
  return time_iterations(device, o.warmup, o.iters, [&] { call.run(); });
}

}  // namespace anatomy::tools

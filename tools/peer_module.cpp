// --peer torch in a build against libtorch (tools/peer.h): PyTorch's side is the module
// gpu-anatomy-peer-torch.so (peer_torch.cpp), loaded here with dlopen only in a run that asks for
// the peer, and kept until the process ends. RTLD_LOCAL keeps libtorch's symbols out of the
// global scope: the engine's oneDNN and C++ runtime resolve as they do without the peer (Note
// [oneDNN beside another oneDNN]), and a process that does not ask never loads libtorch.
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools {
namespace {

// Where the module may be: beside the tool (the build tree), then the installed tool's
// lib/anatomy/ (its path relative to bin/, from the configure step).
std::vector<std::filesystem::path> module_candidates() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path dir = exe.parent_path();
  return {dir / ANATOMY_PEER_MODULE, dir / ANATOMY_PEER_INSTALLED_DIR / ANATOMY_PEER_MODULE};
}

std::filesystem::path find_module() {
  for (const std::filesystem::path& p : module_candidates()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace

std::unique_ptr<Peer> make_torch_peer() {
  const std::filesystem::path path = find_module();
  if (path.empty()) {
    std::string looked;
    for (const std::filesystem::path& p : module_candidates()) looked += (looked.empty() ? "" : ", ") + p.string();
    throw UsageError(fmt::format("--peer torch: the peer module {} is not there (looked at {})", ANATOMY_PEER_MODULE,
                                 looked.empty() ? "nothing: /proc/self/exe unreadable" : looked));
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    throw UsageError(fmt::format("--peer torch: {} did not load: {}", path.string(), dlerror()));
  }
  using Factory = Peer* (*)();
  const auto factory = reinterpret_cast<Factory>(dlsym(handle, "anatomy_tools_make_torch_peer"));
  if (factory == nullptr) {
    throw UsageError(fmt::format("--peer torch: {} has no anatomy_tools_make_torch_peer", path.string()));
  }
  return std::unique_ptr<Peer>(factory());
}

std::string peer_available() { return find_module().empty() ? "" : std::string("torch ") + ANATOMY_TORCH_VERSION; }

}  // namespace anatomy::tools

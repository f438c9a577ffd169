// Installs the AutogradMeta factory into core when the library loads.
#include "anatomy/autograd/autograd_meta.h"

namespace anatomy::autograd {
namespace {

std::unique_ptr<AutogradMetaInterface> make_autograd_meta() { return std::make_unique<AutogradMeta>(); }

const bool registered = [] {
  set_autograd_meta_factory(&make_autograd_meta);
  return true;
}();

}  // namespace
}  // namespace anatomy::autograd

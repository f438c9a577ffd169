// anatomy.safetensors (anatomy/safetensors.py wraps these in safetensors.torch's spellings): the
// engine's safetensors writer and reader (nn/safetensors.h, docs/nn.md "Checkpoints"), so that
// files move between anatomy, PyTorch and anything else that reads the format.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <map>
#include <string>
#include <utility>

#include "anatomy/nn/safetensors.h"
#include "bindings.h"
#include "convert.h"

namespace anatomy::python {

void bind_safetensors(nb::module_& m) {
  m.def(
      "_safetensors_save",
      [](const std::map<std::string, Tensor>& tensors, const std::string& path,
         const std::map<std::string, std::string>& metadata) {
        nb::gil_scoped_release release;
        nn::save(path, tensors, metadata);
      },
      nb::arg("tensors"), nb::arg("path"), nb::arg("metadata"));
  m.def(
      "_safetensors_load",
      [](const std::string& path, nb::handle device) {
        const Device d = device.is_none() ? kCPU : to_device(device);
        nn::Loaded loaded;
        {
          nb::gil_scoped_release release;
          loaded = nn::load(path, d);
        }
        return std::make_pair(std::move(loaded.tensors), std::move(loaded.metadata));
      },
      nb::arg("path"), nb::arg("device").none());
}

}  // namespace anatomy::python

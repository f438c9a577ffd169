// anatomy.cuda's CUDA graphs (anatomy/cuda.py adds the `graph` context manager): CUDAGraph and
// graph_pool_handle, as torch.cuda's, over <anatomy/cuda.h>'s Graph and GraphPool
// (docs/cuda-graphs.md). Without a device every call that needs one raises the engine's error.
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "bindings.h"
#include "cuda_device.h"

namespace anatomy::python {

namespace cuda = anatomy::cuda;

namespace {

cuda::CaptureMode capture_mode(const std::string& name) {
  if (name == "global") return cuda::CaptureMode::Global;
  if (name == "thread_local") return cuda::CaptureMode::ThreadLocal;
  if (name == "relaxed") return cuda::CaptureMode::Relaxed;
  ANATOMY_THROW(ValueError,
                "anatomy.cuda.CUDAGraph.capture_begin: capture_error_mode must be 'global', 'thread_local' or "
                "'relaxed', got '{}'",
                name);
}

}  // namespace

void bind_cuda_graphs(nb::module_& m) {
  nb::class_<cuda::GraphPool>(m, "GraphPool",
                              "A private pool of the device allocator shared by CUDA graphs (graph_pool_handle()).")
      .def_prop_ro("id", &cuda::GraphPool::id)
      .def_prop_ro("device_index", &cuda::GraphPool::device_index)
      .def("__repr__", [](const cuda::GraphPool& p) {
        return p.is_none() ? std::string("anatomy.cuda.GraphPool(none)")
                           : fmt::format("anatomy.cuda.GraphPool(id={}, device=cuda:{})", p.id(), p.device_index());
      });

  nb::class_<cuda::Graph>(m, "CUDAGraph",
                          "A CUDA graph: captured once, replayed with one launch (torch.cuda.CUDAGraph).")
      .def(nb::init<>())
      .def(
          "capture_begin",
          [](cuda::Graph& g, const cuda::GraphPool* pool, const std::string& mode) {
            g.capture_begin(pool != nullptr ? *pool : cuda::GraphPool(), capture_mode(mode));
          },
          nb::arg("pool").none() = nb::none(), nb::arg("capture_error_mode") = "global",
          "Begins capturing the current stream (not the default stream).")
      .def("capture_end", &cuda::Graph::capture_end, "Ends the capture and instantiates the graph.")
      .def("replay", &cuda::Graph::replay, "Launches the graph on the current stream.")
      .def("reset", &cuda::Graph::reset, "Destroys the graph and gives up its pool.")
      .def("pool", &cuda::Graph::pool, "The graph's private pool, to share with graphs captured after it.")
      .def_prop_ro("is_capturing", &cuda::Graph::is_capturing)
      .def_prop_ro("has_graph", &cuda::Graph::has_graph);

  m.def(
      "_cuda_graph_pool_handle", [](nb::handle device) { return cuda::graph_pool_handle(cuda_device_index(device)); },
      nb::arg("device").none());
  m.def(
      "_cuda_graph_capture_stream",
      [](nb::handle device) { return cuda::graph_capture_stream(cuda_device_index(device)); },
      nb::arg("device").none());
  m.def("_cuda_is_current_stream_capturing", &cuda::is_current_stream_capturing);
}

}  // namespace anatomy::python

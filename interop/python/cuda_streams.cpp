// anatomy.cuda's devices, streams and events (anatomy/cuda.py wraps them in torch.cuda's
// spellings): thin bindings of <anatomy/cuda.h>. In a build or on a machine without CUDA the
// device-less answers (is_available() False, device_count() 0) come from the engine, and every
// call that needs a device raises its error (NotImplementedError without CUDA in the build).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include <memory>

#include "anatomy/cuda.h"
#include "bindings.h"
#include "convert.h"
#include "cuda_device.h"

namespace anatomy::python {

namespace cuda = anatomy::cuda;

int cuda_device_index(nb::handle h) {
  if (h.is_none()) return -1;
  Device d = to_device(h);
  ANATOMY_CHECK(d.type() == DeviceType::CUDA, ValueError, "anatomy.cuda: expected a CUDA device, got '{}'", d.str());
  return d.has_index() ? d.index() : -1;
}

namespace {

// `with anatomy.cuda.stream(s):` makes s (and its device) current until the block ends, through
// the engine's StreamGuard.
struct StreamContext {
  explicit StreamContext(cuda::Stream s) : stream(s) {}
  cuda::Stream stream;
  std::unique_ptr<cuda::StreamGuard> guard;
};

uintptr_t handle_value(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

void bind_cuda_streams(nb::module_& m) {
  m.def("_cuda_is_available", &cuda::is_available);
  m.def("_cuda_device_count", &cuda::device_count);
  m.def("_cuda_unavailable_reason", &cuda::unavailable_reason);
  m.def("_cuda_current_device", &cuda::current_device);
  m.def(
      "_cuda_set_device", [](nb::handle device) { cuda::set_device(cuda_device_index(device)); }, nb::arg("device"));
  m.def(
      "_cuda_synchronize", [](nb::handle device) { cuda::synchronize(cuda_device_index(device)); },
      nb::arg("device").none());
  m.def(
      "_cuda_get_device_name",
      [](nb::handle device) {
        int index = cuda_device_index(device);
        return cuda::get_device_properties(index < 0 ? cuda::current_device() : index).name;
      },
      nb::arg("device").none());
  m.def(
      "_cuda_get_device_capability",
      [](nb::handle device) {
        int index = cuda_device_index(device);
        cuda::DeviceProperties p = cuda::get_device_properties(index < 0 ? cuda::current_device() : index);
        return nb::make_tuple(p.major, p.minor);
      },
      nb::arg("device").none());

  nb::class_<cuda::Stream>(m, "Stream", "A CUDA stream: a queue of device work, as torch.cuda.Stream.")
      .def(
          "__init__",
          [](cuda::Stream* self, nb::handle device, int priority) {
            new (self) cuda::Stream(cuda::get_stream_from_pool(priority < 0, cuda_device_index(device)));
          },
          nb::arg("device") = nb::none(), nb::arg("priority") = 0,
          "A stream from the device's pool; a negative priority picks a high-priority one.")
      .def_prop_ro("cuda_stream", [](const cuda::Stream& s) { return handle_value(s.handle()); })
      .def_prop_ro("device", &cuda::Stream::device)
      .def_prop_ro("device_index", &cuda::Stream::device_index)
      .def_prop_ro("priority", &cuda::Stream::priority)
      .def("synchronize", &cuda::Stream::synchronize)
      .def("query", &cuda::Stream::query)
      .def("wait_event", &cuda::Stream::wait, nb::arg("event"))
      .def("wait_stream", &cuda::Stream::wait_stream, nb::arg("stream"))
      .def(
          "record_event",
          [](const cuda::Stream& s, nb::handle event) -> nb::object {
            nb::object e = event.is_none() ? nb::cast(cuda::Event()) : nb::borrow(event);
            nb::cast<cuda::Event&>(e).record(s);
            return e;
          },
          nb::arg("event").none() = nb::none(), "Records `event` (a new one when None) on the stream; returns it.")
      .def("__eq__", [](const cuda::Stream& a, const cuda::Stream& b) { return a == b; })
      .def("__hash__", [](const cuda::Stream& s) { return std::hash<uintptr_t>()(handle_value(s.handle())); })
      .def("__repr__", [](const cuda::Stream& s) {
        return fmt::format("<anatomy.cuda.Stream device=cuda:{} cuda_stream={:#x}>", s.device_index(),
                           handle_value(s.handle()));
      });

  nb::class_<cuda::Event>(m, "Event", "A marker in a stream's queue, to wait on and to time with, as torch.cuda.Event.")
      .def(nb::init<bool, bool>(), nb::arg("enable_timing") = false, nb::arg("blocking") = false)
      .def(
          "record", [](cuda::Event& e, std::optional<cuda::Stream> s) { s ? e.record(*s) : e.record(); },
          nb::arg("stream") = nb::none())
      .def(
          "wait",
          [](const cuda::Event& e, std::optional<cuda::Stream> s) { e.block(s ? *s : cuda::current_stream(-1)); },
          nb::arg("stream") = nb::none())
      .def("query", &cuda::Event::query)
      .def("synchronize", &cuda::Event::synchronize)
      .def("elapsed_time", &cuda::Event::elapsed_time, nb::arg("end_event"))
      .def_prop_ro("enable_timing", &cuda::Event::enable_timing)
      .def_prop_ro("cuda_event", [](const cuda::Event& e) { return handle_value(e.handle()); })
      .def("__repr__", [](const cuda::Event& e) {
        return fmt::format("<anatomy.cuda.Event cuda_event={:#x}>", handle_value(e.handle()));
      });

  m.def(
      "_cuda_current_stream", [](nb::handle device) { return cuda::current_stream(cuda_device_index(device)); },
      nb::arg("device") = nb::none());
  m.def(
      "_cuda_default_stream", [](nb::handle device) { return cuda::default_stream(cuda_device_index(device)); },
      nb::arg("device") = nb::none());
  m.def("_cuda_set_stream", &cuda::set_current_stream, nb::arg("stream"));

  nb::class_<StreamContext>(m, "StreamContext", "with anatomy.cuda.stream(s): s is the current stream inside.")
      .def(nb::init<cuda::Stream>(), nb::arg("stream"))
      .def_prop_ro("stream", [](const StreamContext& c) { return c.stream; })
      .def("__enter__",
           [](StreamContext& c) {
             ANATOMY_CHECK(!c.guard, ValueError, "anatomy.cuda.stream: this context is already entered");
             c.guard = std::make_unique<cuda::StreamGuard>(c.stream);
             return c.stream;
           })
      .def("__exit__", [](StreamContext& c, nb::args) { c.guard.reset(); });
}

}  // namespace anatomy::python

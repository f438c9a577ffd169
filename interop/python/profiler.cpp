// anatomy.profiler (anatomy/profiler.py wraps these in torch.profiler's spellings): the engine's
// Profile and Range (profiler/profiler.h, docs/profiler.md).
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <memory>
#include <string>

#include "anatomy/profiler/profiler.h"
#include "bindings.h"

namespace anatomy::python {

namespace {

profiler::SortBy sort_by(const std::string& name) {
  if (name == "cpu_total" || name == "cpu_time_total") return profiler::SortBy::CpuTotal;
  if (name == "cuda_total" || name == "cuda_time_total") return profiler::SortBy::CudaTotal;
  if (name == "count") return profiler::SortBy::Count;
  ANATOMY_THROW(ValueError, "anatomy.profiler: sort_by must be 'cpu_total', 'cuda_total' or 'count', got '{}'", name);
}

// A Range held by Python between __enter__ and __exit__.
struct RangeScope {
  std::string name;
  std::unique_ptr<profiler::Range> range;
};

}  // namespace

void bind_profiler(nb::module_& m) {
  nb::class_<profiler::Profile>(m, "_Profile")
      .def(
          "__init__",
          [](profiler::Profile* self, bool record_shapes, bool profile_memory, bool cuda) {
            new (self) profiler::Profile({record_shapes, profile_memory, cuda});
          },
          nb::arg("record_shapes") = true, nb::arg("profile_memory") = false, nb::arg("cuda") = true)
      .def("start", &profiler::Profile::start)
      .def("stop", &profiler::Profile::stop)
      .def_prop_ro("active", &profiler::Profile::active)
      .def(
          "table",
          [](const profiler::Profile& p, const std::string& sort, bool group_by_shape, int row_limit) {
            return p.table(sort_by(sort), group_by_shape, row_limit);
          },
          nb::arg("sort_by") = "cpu_total", nb::arg("group_by_shape") = false, nb::arg("row_limit") = -1)
      .def("chrome_trace", &profiler::Profile::chrome_trace)
      .def("export_chrome_trace", &profiler::Profile::export_chrome_trace, nb::arg("path"))
      .def("to_json", &profiler::Profile::to_json);

  nb::class_<RangeScope>(m, "_Range")
      .def(nb::init<std::string>(), nb::arg("name"))
      .def("__enter__",
           [](RangeScope& r) {
             r.range = std::make_unique<profiler::Range>(r.name);
             return nb::none();
           })
      .def("__exit__", [](RangeScope& r, nb::args) { r.range.reset(); });
}

}  // namespace anatomy::python

// anatomy.set_num_threads and get_num_threads: the engine's CPU thread count (core/parallel.h),
// which every CPU kernel, the products and oneDNN's convolutions follow, as torch's do.
#include <nanobind/nanobind.h>

#include "anatomy/anatomy.h"
#include "bindings.h"

namespace anatomy::python {

void bind_threads(nb::module_& m) {
  m.def("get_num_threads", &get_num_threads, "The number of threads the engine's CPU kernels use.");
  m.def("set_num_threads", &set_num_threads, nb::arg("n"),
        "Sets the number of threads the engine's CPU kernels use (at least 1; ANATOMY_NUM_THREADS sets the first).");
}

}  // namespace anatomy::python

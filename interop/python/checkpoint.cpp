// anatomy.utils.checkpoint's engine side: autograd::checkpoint (autograd/checkpoint.h) over a
// Python function of tensors. The function runs in forward under no_grad and again in backward,
// from inside loss.backward(), which keeps the GIL; the GIL is taken anyway, for a backward run
// from a thread that released it.
#include <nanobind/stl/vector.h>

#include <memory>
#include <vector>

#include "anatomy/anatomy.h"
#include "bindings.h"

namespace anatomy::python {

namespace {

// The function's result as tensors: one Tensor, or a tuple or list of them.
std::vector<Tensor> tensors_of(nb::handle out) {
  if (nb::isinstance<Tensor>(out)) return {nb::cast<Tensor>(out)};
  if (nb::isinstance<nb::tuple>(out) || nb::isinstance<nb::list>(out)) {
    std::vector<Tensor> tensors;
    for (nb::handle item : out) {
      ANATOMY_CHECK(nb::isinstance<Tensor>(item), TypeError,
                    "checkpoint: the function must return a Tensor or a tuple of Tensors, got an item of type {}",
                    nb::type_name(item.type()).c_str());
      tensors.push_back(nb::cast<Tensor>(item));
    }
    return tensors;
  }
  ANATOMY_THROW(TypeError, "checkpoint: the function must return a Tensor or a tuple of Tensors, got {}",
                nb::type_name(out.type()).c_str());
}

nb::object checkpoint(nb::callable fn, const std::vector<Tensor>& inputs) {
  // The backward node keeps the function; it may be dropped where the GIL is not held.
  std::shared_ptr<nb::object> held(new nb::object(std::move(fn)), [](nb::object* o) {
    nb::gil_scoped_acquire gil;
    delete o;
  });
  auto single = std::make_shared<bool>(false);
  autograd::CheckpointFn run = [held, single](const std::vector<Tensor>& in) {
    nb::gil_scoped_acquire gil;
    nb::list args;
    for (const Tensor& t : in) args.append(nb::cast(t));
    nb::object out = (*held)(*args);
    *single = nb::isinstance<Tensor>(out);
    return tensors_of(out);
  };
  std::vector<Tensor> outputs = autograd::checkpoint(run, inputs);
  if (*single) return nb::cast(outputs.at(0));
  nb::list out;
  for (const Tensor& t : outputs) out.append(nb::cast(t));
  return nb::tuple(out);
}

}  // namespace

void bind_checkpoint(nb::module_& m) { m.def("_checkpoint", &checkpoint, nb::arg("function"), nb::arg("inputs")); }

}  // namespace anatomy::python

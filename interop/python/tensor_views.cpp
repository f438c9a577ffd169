// Shape methods of anatomy.Tensor that make views (view, reshape, transpose, permute, squeeze,
// unsqueeze, expand, flatten, narrow, select, unbind, split, chunk, ...), and the copies that
// change a layout (repeat, flip, roll, tril, triu). Sizes are taken as varargs or one sequence,
// as PyTorch takes them: x.view(2, 3) and x.view((2, 3)).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {
using T = const Tensor&;
}  // namespace

void bind_tensor_views(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  cls.def("view", [](T t, const nb::args& size) { return t.view(sizes_from_args(size)); });
  cls.def("reshape", [](T t, const nb::args& shape) { return t.reshape(sizes_from_args(shape, "shape")); });
  m.def(
      "reshape", [](T t, nb::handle shape) { return t.reshape(to_int_list(shape, "shape")); }, nb::arg("input"),
      nb::arg("shape"));
  cls.def("expand", [](T t, const nb::args& size) { return t.expand(sizes_from_args(size)); });
  cls.def("permute", [](T t, const nb::args& dims) { return t.permute(sizes_from_args(dims, "dims")); });
  m.def(
      "permute", [](T t, nb::handle dims) { return t.permute(to_int_list(dims, "dims")); }, nb::arg("input"),
      nb::arg("dims"));
  cls.def("repeat", [](T t, const nb::args& repeats) { return t.repeat(sizes_from_args(repeats, "repeats")); });
  cls.def("tile", [](T t, const nb::args& dims) { return t.tile(sizes_from_args(dims, "dims")); });
  cls.def("flip", [](T t, const nb::args& dims) { return t.flip(sizes_from_args(dims, "dims")); });
  m.def(
      "flip", [](T t, nb::handle dims) { return t.flip(to_int_list(dims, "dims")); }, nb::arg("input"),
      nb::arg("dims"));
  cls.def("view_as", &Tensor::view_as, nb::arg("other"));
  cls.def("reshape_as", &Tensor::reshape_as, nb::arg("other"));
  cls.def("expand_as", &Tensor::expand_as, nb::arg("other"));
  def_method_and_function(
      cls, m, "broadcast_to", [](T t, nb::handle size) { return t.broadcast_to(to_int_list(size)); }, nb::arg("size"));

  def_method_and_function(cls, m, "t", [](T t) { return t.t(); });
  cls.def_prop_ro("T", &Tensor::T);
  cls.def_prop_ro("mT", &Tensor::mT);
  for (const char* name : {"transpose", "swapaxes", "swapdims"}) {
    def_method_and_function(
        cls, m, name, [](T t, int64_t a, int64_t b) { return t.transpose(a, b); }, nb::arg("dim0"), nb::arg("dim1"));
  }
  def_method_and_function(
      cls, m, "squeeze",
      [](T t, nb::handle dim) {
        if (dim.is_none()) return t.squeeze();
        Tensor out = t;
        std::vector<int64_t> dims = to_int_list(dim, "dim");
        for (int64_t& d : dims) d = wrap_dim(d, t.dim(), "squeeze");
        // Highest dim first, so that the lower ones keep their positions.
        std::sort(dims.rbegin(), dims.rend());
        for (int64_t d : dims) out = out.squeeze(d);
        return out;
      },
      nb::arg("dim") = nb::none());
  def_method_and_function(
      cls, m, "unsqueeze", [](T t, int64_t dim) { return t.unsqueeze(dim); }, nb::arg("dim"));
  def_method_and_function(
      cls, m, "flatten", [](T t, int64_t start, int64_t end) { return t.flatten(start, end); },
      nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  def_method_and_function(
      cls, m, "unflatten", [](T t, int64_t dim, nb::handle sizes) { return t.unflatten(dim, to_int_list(sizes)); },
      nb::arg("dim"), nb::arg("sizes"));
  def_method_and_function(
      cls, m, "narrow", [](T t, int64_t dim, int64_t start, int64_t length) { return t.narrow(dim, start, length); },
      nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  def_method_and_function(
      cls, m, "select", [](T t, int64_t dim, int64_t index) { return t.select(dim, index); }, nb::arg("dim"),
      nb::arg("index"));
  def_method_and_function(
      cls, m, "unbind", [](T t, int64_t dim) { return nb::tuple(nb::cast(t.unbind(dim))); }, nb::arg("dim") = 0);
  def_method_and_function(
      cls, m, "split",
      [](T t, nb::handle split_size, int64_t dim) {
        if (PyLong_Check(split_size.ptr())) return nb::tuple(nb::cast(t.split(to_int(split_size, "split_size"), dim)));
        return nb::tuple(nb::cast(t.split_with_sizes(to_int_list(split_size, "split_size"), dim)));
      },
      nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  def_method_and_function(
      cls, m, "chunk", [](T t, int64_t chunks, int64_t dim) { return nb::tuple(nb::cast(t.chunk(chunks, dim))); },
      nb::arg("chunks"), nb::arg("dim") = 0);
  def_method_and_function(
      cls, m, "movedim",
      [](T t, nb::handle source, nb::handle destination) {
        return t.movedim(to_int_list(source, "source"), to_int_list(destination, "destination"));
      },
      nb::arg("source"), nb::arg("destination"));
  def_method_and_function(
      cls, m, "diagonal", [](T t, int64_t offset, int64_t d1, int64_t d2) { return t.diagonal(offset, d1, d2); },
      nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  def_method_and_function(
      cls, m, "roll",
      [](T t, nb::handle shifts, nb::handle dims) {
        return t.roll(to_int_list(shifts, "shifts"),
                      dims.is_none() ? std::vector<int64_t>{} : to_int_list(dims, "dims"));
      },
      nb::arg("shifts"), nb::arg("dims") = nb::none());
  def_method_and_function(
      cls, m, "tril", [](T t, int64_t k) { return t.tril(k); }, nb::arg("diagonal") = 0);
  def_method_and_function(
      cls, m, "triu", [](T t, int64_t k) { return t.triu(k); }, nb::arg("diagonal") = 0);
  def_in_place(
      cls, "tril_", [](T t, int64_t k) -> InPlace { return t.tril_(k); }, nb::arg("diagonal") = 0);
  def_in_place(
      cls, "triu_", [](T t, int64_t k) -> InPlace { return t.triu_(k); }, nb::arg("diagonal") = 0);
}

}  // namespace anatomy::python

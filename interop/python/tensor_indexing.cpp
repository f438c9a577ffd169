// Python's indexing on anatomy.Tensor: x[1], x[-1], x[1:, ::2], x[..., None], x[mask],
// x[idx_tensor], x[[0, 2]] and their combinations, and x[...] = value. Each Python index becomes
// one anatomy::indexing::TensorIndex (dispatch/ops/tensor_index.h), which does the work: basic
// indices make views, a tensor or a list makes it advanced indexing (a copy).
#include <fmt/format.h>

#include <vector>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using indexing::TensorIndex;

std::optional<int64_t> slice_bound(PyObject* bound, const char* what) {
  if (bound == Py_None) return std::nullopt;
  return to_int(nb::handle(bound), what);
}

// PyTorch reports an index tensor of a floating dtype as a bad index (IndexError), not as a bad
// dtype.
Tensor index_tensor(Tensor t) {
  if (is_floating(t.dtype())) {
    throw IndexError(
        fmt::format("tensors used as indices must be long, int, byte or bool tensors, got {}", name(t.dtype())));
  }
  return t;
}

TensorIndex to_index(nb::handle h, const Tensor& self) {
  PyObject* o = h.ptr();
  if (o == Py_None) return TensorIndex(indexing::None);
  if (o == Py_Ellipsis) return TensorIndex(indexing::Ellipsis);
  if (PyBool_Check(o)) return TensorIndex(o == Py_True);
  if (PyLong_Check(o)) return TensorIndex(to_int(h, "index"));
  if (PySlice_Check(o)) {
    auto* s = reinterpret_cast<PySliceObject*>(o);
    return TensorIndex(indexing::Slice(slice_bound(s->start, "slice start"), slice_bound(s->stop, "slice stop"),
                                       slice_bound(s->step, "slice step")));
  }
  if (nb::isinstance<Tensor>(h)) return TensorIndex(index_tensor(nb::cast<Tensor>(h)));
  // NumPy integers and other objects with __index__.
  if (PyIndex_Check(o) && !PySequence_Check(o)) return TensorIndex(to_int(h, "index"));
  // A list or an array of indices or booleans: an index tensor, on the indexed tensor's device.
  if (PySequence_Check(o) || PyObject_CheckBuffer(o)) {
    return TensorIndex(index_tensor(tensor_from_data(h, nb::none(), nb::cast(self.device()))));
  }
  throw TypeError(
      fmt::format("only integers, slices (`:`), ellipsis (`...`), None and long, int or bool tensors are "
                  "valid indices, got {}",
                  nb::type_name(h.type()).c_str()));
}

// A tuple is one index per entry; anything else is one index (a list is a list of indices into
// one dim, as in PyTorch and NumPy).
std::vector<TensorIndex> to_indices(nb::handle key, const Tensor& self) {
  std::vector<TensorIndex> out;
  if (PyTuple_Check(key.ptr())) {
    const Py_ssize_t n = PyTuple_GET_SIZE(key.ptr());
    out.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) out.push_back(to_index(PyTuple_GET_ITEM(key.ptr(), i), self));
  } else {
    out.push_back(to_index(key, self));
  }
  return out;
}

Tensor get_item(const Tensor& self, nb::handle key) {
  if (PyLong_Check(key.ptr()) && !PyBool_Check(key.ptr())) {
    // x[i], the commonest form: select without building an index list.
    if (self.dim() == 0) throw IndexError("invalid index of a 0-dim tensor");
    return self.select(0, to_int(key, "index"));
  }
  const std::vector<TensorIndex> indices = to_indices(key, self);
  return indexing::get_item(self, indices);
}

void set_item(const Tensor& self, nb::handle key, nb::handle value) {
  const std::vector<TensorIndex> indices = to_indices(key, self);
  if (nb::isinstance<Tensor>(value)) {
    const Tensor& v = nb::cast<const Tensor&>(value);
    // The value takes the destination's dtype and device first, as PyTorch's setitem does.
    indexing::set_item(
        self, indices,
        v.dtype() == self.dtype() && v.device() == self.device() ? v : v.to(self.device(), self.dtype()));
  } else if (is_scalar(value) || (PyNumber_Check(value.ptr()) && !PySequence_Check(value.ptr()))) {
    indexing::set_item(self, indices, to_scalar(value, "value"));
  } else {
    indexing::set_item(self, indices, tensor_from_data(value, nb::cast(self.dtype()), nb::cast(self.device())));
  }
}

}  // namespace

void bind_tensor_indexing(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  cls.def("__getitem__", &get_item, nb::arg("indices").none());
  cls.def("__setitem__", &set_item, nb::arg("indices").none(), nb::arg("value").none());
}

}  // namespace anatomy::python

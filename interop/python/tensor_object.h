// anatomy.Tensor objects read and made without nanobind's per-call type lookup (a hash of the C++
// type_info for each conversion): the type object is cached when bind_tensor registers the class,
// an argument of exactly that type is read in place, and a result object is allocated from it
// directly. A subclass instance, or an object not yet constructed, takes nanobind's general path,
// so the outcome is the same either way. anatomy.ops' argument binding and results use these.
#pragma once

#include <nanobind/nanobind.h>

#include <new>
#include <utility>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

namespace detail {
inline PyTypeObject* tensor_type = nullptr;  // anatomy.Tensor, set once by bind_tensor
}  // namespace detail

inline void set_tensor_type(nb::handle cls) { detail::tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr()); }

// The Tensor inside `h` when h is a constructed object of exactly anatomy.Tensor, else nullptr.
inline const Tensor* exact_tensor(nb::handle h) {
  if (Py_TYPE(h.ptr()) != detail::tensor_type || !nb::inst_ready(h)) return nullptr;
  return nb::inst_ptr<Tensor>(h);
}

inline bool is_tensor(nb::handle h) { return Py_TYPE(h.ptr()) == detail::tensor_type || nb::isinstance<Tensor>(h); }

// The Tensor held by `h` (a new handle to it); cast_error when h is no anatomy.Tensor.
inline Tensor to_tensor(nb::handle h) {
  if (const Tensor* t = exact_tensor(h)) return *t;
  return nb::cast<Tensor>(h);
}

// A new anatomy.Tensor object holding `t`, as nb::cast(t) makes one.
inline nb::object tensor_object(Tensor t) {
  nb::object obj = nb::inst_alloc(reinterpret_cast<PyObject*>(detail::tensor_type));
  new (nb::inst_ptr<Tensor>(obj)) Tensor(std::move(t));
  nb::inst_mark_ready(obj);
  return obj;
}

}  // namespace anatomy::python

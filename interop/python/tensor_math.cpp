// Methods and functions of anatomy.Tensor beyond the element-wise rows and the reductions: matrix
// products, softmax, where, clamp, lerp, comparisons of whole tensors, gathers and scatters by
// index, and cat / stack over a sequence of tensors.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <string_view>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using T = const Tensor&;
using S = const Scalar&;
using Dtype = std::optional<DType>;

void bind_products(TensorClass& cls, nb::module_& m) {
  def_method_and_function(
      cls, m, "matmul", [](T a, T b) { return a.matmul(b); }, nb::arg("other"));
  def_method_and_function(
      cls, m, "mm", [](T a, T b) { return a.mm(b); }, nb::arg("mat2"));
  def_method_and_function(
      cls, m, "bmm", [](T a, T b) { return a.bmm(b); }, nb::arg("mat2"));
  def_method_and_function(
      cls, m, "dot", [](T a, T b) { return a.dot(b); }, nb::arg("other"));
  def_method_and_function(
      cls, m, "outer", [](T a, T b) { return a.outer(b); }, nb::arg("vec2"));
  def_method_and_function(
      cls, m, "mv", [](T a, T b) { return a.mv(b); }, nb::arg("vec"));
  def_method_and_function(
      cls, m, "kron", [](T a, T b) { return a.kron(b); }, nb::arg("other"));
  def_method_and_function(
      cls, m, "diag", [](T a, int64_t k) { return a.diag(k); }, nb::arg("diagonal") = 0);
  def_method_and_function(cls, m, "trace", [](T a) { return a.trace(); });
  m.def("einsum", [](std::string_view equation, const nb::args& operands) {
    std::vector<Tensor> tensors;
    // einsum("ij,jk", a, b) and einsum("ij,jk", [a, b]).
    if (operands.size() == 1 && !nb::isinstance<Tensor>(operands[0])) {
      tensors = nb::cast<std::vector<Tensor>>(operands[0]);
    } else {
      for (nb::handle h : operands) tensors.push_back(nb::cast<Tensor>(h));
    }
    return einsum(equation, tensors);
  });
}

void bind_activations(TensorClass& cls, nb::module_& m) {
  def_method_and_function(
      cls, m, "softmax",
      [](T t, int64_t dim, nb::handle dtype_arg) {
        const Dtype dtype = to_optional_dtype(dtype_arg);
        return t.softmax(dim, dtype);
      },
      nb::arg("dim"), nb::arg("dtype") = nb::none());
  def_method_and_function(
      cls, m, "log_softmax",
      [](T t, int64_t dim, nb::handle dtype_arg) {
        const Dtype dtype = to_optional_dtype(dtype_arg);
        return t.log_softmax(dim, dtype);
      },
      nb::arg("dim"), nb::arg("dtype") = nb::none());
  def_method_and_function(
      cls, m, "gelu", [](T t, std::string_view approximate) { return t.gelu(approximate); }, nb::kw_only(),
      nb::arg("approximate") = "none");
  for (const char* name : {"isnan", "isinf", "isfinite", "signbit", "isposinf", "isneginf"}) {
    using Predicate = Tensor (Tensor::*)() const;
    const std::string_view n = name;
    const Predicate p = n == "isnan"      ? &Tensor::isnan
                        : n == "isinf"    ? &Tensor::isinf
                        : n == "isfinite" ? &Tensor::isfinite
                        : n == "signbit"  ? &Tensor::signbit
                        : n == "isposinf" ? &Tensor::isposinf
                                          : &Tensor::isneginf;
    def_method_and_function(cls, m, name, [p](T t) { return (t.*p)(); });
  }
}

void bind_selection(TensorClass& cls, nb::module_& m) {
  m.def(
      "where", [](T c, T a, T b) { return where(c, a, b); }, nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  m.def(
      "where", [](T c, T a, S b) { return where(c, a, b); }, nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  m.def(
      "where", [](T c, S a, T b) { return where(c, a, b); }, nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  m.def(
      "where", [](T c, S a, S b) { return where(c, scalar_tensor(a, c.device()), b); }, nb::arg("condition"),
      nb::arg("input"), nb::arg("other"));
  m.def(
      "where", [](T c) { return nb::tuple(nb::cast(c.nonzero().unbind(1))); }, nb::arg("condition"));
  cls.def(
      "where", [](T self, T c, T other) { return self.where(c, other); }, nb::arg("condition"), nb::arg("other"));
  cls.def(
      "where", [](T self, T c, S other) { return self.where(c, other); }, nb::arg("condition"), nb::arg("other"));
  using OptS = std::optional<Scalar>;
  using OptT = std::optional<Tensor>;
  for (const char* name : {"clamp", "clip"}) {
    def_method_and_function(
        cls, m, name, [](T t, OptS lo, OptS hi) { return t.clamp(lo, hi); }, nb::arg("min") = nb::none(),
        nb::arg("max") = nb::none());
    def_method_and_function(
        cls, m, name, [](T t, OptT lo, OptT hi) { return t.clamp(lo, hi); }, nb::arg("min") = nb::none(),
        nb::arg("max") = nb::none());
  }
  def_in_place(
      cls, "clamp_", [](T t, OptS lo, OptS hi) -> InPlace { return t.clamp_(lo, hi); }, nb::arg("min") = nb::none(),
      nb::arg("max") = nb::none());
  def_method_and_function(
      cls, m, "lerp", [](T t, T end, S w) { return t.lerp(end, w); }, nb::arg("end"), nb::arg("weight"));
  def_method_and_function(
      cls, m, "lerp", [](T t, T end, T w) { return t.lerp(end, w); }, nb::arg("end"), nb::arg("weight"));
  def_method_and_function(
      cls, m, "masked_fill", [](T t, T mask, S v) { return t.masked_fill(mask, v); }, nb::arg("mask"),
      nb::arg("value"));
  def_in_place(
      cls, "masked_fill_", [](T t, T mask, S v) -> InPlace { return t.masked_fill_(mask, v); }, nb::arg("mask"),
      nb::arg("value"));
  def_method_and_function(
      cls, m, "masked_select", [](T t, T mask) { return t.masked_select(mask); }, nb::arg("mask"));
  def_method_and_function(
      cls, m, "index_select", [](T t, int64_t dim, T index) { return t.index_select(dim, index); }, nb::arg("dim"),
      nb::arg("index"));
  def_method_and_function(
      cls, m, "gather", [](T t, int64_t dim, T index) { return t.gather(dim, index); }, nb::arg("dim"),
      nb::arg("index"));
  def_method_and_function(cls, m, "nonzero", [](T t) { return t.nonzero(); });
  def_method_and_function(
      cls, m, "take", [](T t, T index) { return t.take(index); }, nb::arg("index"));
}

void bind_closeness(TensorClass& cls, nb::module_& m) {
  def_method_and_function(
      cls, m, "isclose",
      [](T a, T b, double rtol, double atol, bool equal_nan) { return a.isclose(b, rtol, atol, equal_nan); },
      nb::arg("other"), nb::arg("rtol") = 1e-05, nb::arg("atol") = 1e-08, nb::arg("equal_nan") = false);
  def_method_and_function(
      cls, m, "allclose",
      [](T a, T b, double rtol, double atol, bool equal_nan) { return a.allclose(b, rtol, atol, equal_nan); },
      nb::arg("other"), nb::arg("rtol") = 1e-05, nb::arg("atol") = 1e-08, nb::arg("equal_nan") = false);
  def_method_and_function(
      cls, m, "equal", [](T a, T b) { return a.equal(b); }, nb::arg("other"));
}

// A Python sequence of tensors (list, tuple, generator) for cat and stack.
std::vector<Tensor> tensor_sequence(nb::handle h, const char* what) {
  if (nb::isinstance<Tensor>(h) || !PySequence_Check(h.ptr())) {
    throw TypeError(std::string(what) + ": expected a sequence of tensors");
  }
  std::vector<Tensor> out;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (!nb::isinstance<Tensor>(item)) throw TypeError(std::string(what) + ": every element must be a Tensor");
    out.push_back(nb::cast<Tensor>(item));
  }
  return out;
}

}  // namespace

void bind_tensor_math(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  bind_products(cls, m);
  bind_activations(cls, m);
  bind_selection(cls, m);
  bind_closeness(cls, m);
  for (const char* name : {"cat", "concat", "concatenate"}) {
    m.def(
        name, [](nb::handle tensors, int64_t dim) { return cat(tensor_sequence(tensors, "cat"), dim); },
        nb::arg("tensors"), nb::arg("dim") = 0);
  }
  m.def(
      "stack", [](nb::handle tensors, int64_t dim) { return stack(tensor_sequence(tensors, "stack"), dim); },
      nb::arg("tensors"), nb::arg("dim") = 0);
}

}  // namespace anatomy::python

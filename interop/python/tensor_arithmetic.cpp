// Python's operators on anatomy.Tensor (+ - * / // % ** @, comparisons, & | ^ << >> ~, unary
// - and abs, their reflected and in-place forms) and the element-wise methods and functions
// (add, sub, mul, div, the rows of core/op_lists.h and their in-place forms). Every overload
// takes typed C++ arguments (Tensor, then Scalar), so `a + b` goes from the interpreter to
// operator+ with no Python in between. An operand of another type makes the operator return
// NotImplemented (nb::is_operator), and Python raises its usual TypeError.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>

#include <string_view>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using T = const Tensor&;
using S = const Scalar&;

// A Python number on the left of an operator the engine only has as tensor-first: the number
// becomes a 0-dim tensor on the tensor's device, which type promotion ranks below dimensioned
// tensors of the same kind, as a Python number is.
Tensor number_tensor(S s, T like) { return scalar_tensor(s, TensorOptions().device(like.device())); }

void bind_operators(TensorClass& cls) {
  const auto op = nb::is_operator();
  const auto ref = nb::rv_policy::reference;
#define ANATOMY_PY_OPERATOR(py, cpp_op)             \
  cls.def(                                          \
      py, [](T a, T b) { return a cpp_op b; }, op); \
  cls.def(                                          \
      py, [](T a, S b) { return a cpp_op b; }, op);
#define ANATOMY_PY_REFLECTED(py, cpp_op) \
  cls.def(                               \
      py, [](T a, S b) { return b cpp_op a; }, op);
  ANATOMY_PY_OPERATOR("__add__", +)
  ANATOMY_PY_REFLECTED("__radd__", +)
  ANATOMY_PY_OPERATOR("__sub__", -)
  ANATOMY_PY_REFLECTED("__rsub__", -)
  ANATOMY_PY_OPERATOR("__mul__", *)
  ANATOMY_PY_REFLECTED("__rmul__", *)
  ANATOMY_PY_OPERATOR("__truediv__", /)
  ANATOMY_PY_REFLECTED("__rtruediv__", /)
  ANATOMY_PY_OPERATOR("__mod__", %)
  ANATOMY_PY_REFLECTED("__rmod__", %)
  ANATOMY_PY_OPERATOR("__and__", &)
  ANATOMY_PY_REFLECTED("__rand__", &)
  ANATOMY_PY_OPERATOR("__or__", |)
  ANATOMY_PY_REFLECTED("__ror__", |)
  ANATOMY_PY_OPERATOR("__xor__", ^)
  ANATOMY_PY_REFLECTED("__rxor__", ^)
  ANATOMY_PY_OPERATOR("__lshift__", <<)
  ANATOMY_PY_REFLECTED("__rlshift__", <<)
  ANATOMY_PY_OPERATOR("__rshift__", >>)
  ANATOMY_PY_REFLECTED("__rrshift__", >>)
  // Python reflects comparisons itself (1 < x is x > 1).
  ANATOMY_PY_OPERATOR("__eq__", ==)
  ANATOMY_PY_OPERATOR("__ne__", !=)
  ANATOMY_PY_OPERATOR("__lt__", <)
  ANATOMY_PY_OPERATOR("__le__", <=)
  ANATOMY_PY_OPERATOR("__gt__", >)
  ANATOMY_PY_OPERATOR("__ge__", >=)
#undef ANATOMY_PY_OPERATOR
#undef ANATOMY_PY_REFLECTED
  cls.def(
      "__floordiv__", [](T a, T b) { return floor_divide(a, b); }, op);
  cls.def(
      "__floordiv__", [](T a, S b) { return floor_divide(a, b); }, op);
  cls.def(
      "__rfloordiv__", [](T a, S b) { return floor_divide(number_tensor(b, a), a); }, op);
  cls.def(
      "__pow__", [](T a, T b) { return pow(a, b); }, op);
  cls.def(
      "__pow__", [](T a, S b) { return pow(a, b); }, op);
  cls.def(
      "__rpow__", [](T a, S b) { return pow(b, a); }, op);
  cls.def(
      "__matmul__", [](T a, T b) { return matmul(a, b); }, op);
  cls.def("__neg__", [](T a) { return -a; });
  cls.def("__pos__", [](nb::handle self) { return self; });
  cls.def("__abs__", [](T a) { return a.abs(); });
  cls.def("__invert__", [](T a) { return ~a; });

  // In place: the same Python object comes back, so `a += b` keeps a's identity and storage.
#define ANATOMY_PY_IN_PLACE(py, method)                              \
  cls.def(                                                           \
      py, [](T a, T b) -> InPlace { return a.method(b); }, op, ref); \
  cls.def(                                                           \
      py, [](T a, S b) -> InPlace { return a.method(b); }, op, ref);
  ANATOMY_PY_IN_PLACE("__iadd__", add_)
  ANATOMY_PY_IN_PLACE("__isub__", sub_)
  ANATOMY_PY_IN_PLACE("__imul__", mul_)
  ANATOMY_PY_IN_PLACE("__itruediv__", div_)
  ANATOMY_PY_IN_PLACE("__ifloordiv__", floor_divide_)
  ANATOMY_PY_IN_PLACE("__imod__", remainder_)
  ANATOMY_PY_IN_PLACE("__ipow__", pow_)
  ANATOMY_PY_IN_PLACE("__iand__", bitwise_and_)
  ANATOMY_PY_IN_PLACE("__ior__", bitwise_or_)
  ANATOMY_PY_IN_PLACE("__ixor__", bitwise_xor_)
  ANATOMY_PY_IN_PLACE("__ilshift__", bitwise_left_shift_)
  ANATOMY_PY_IN_PLACE("__irshift__", bitwise_right_shift_)
#undef ANATOMY_PY_IN_PLACE
}

// add, sub (with alpha), mul, div (with rounding_mode) and their aliases, in-place forms.
void bind_arithmetic_methods(TensorClass& cls, nb::module_& m) {
  using Mode = std::optional<std::string_view>;
#define ANATOMY_PY_ALPHA nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1
  for (const char* name : {"add"}) {
    def_method_and_function(
        cls, m, name, [](T a, T b, S alpha) { return a.add(b, alpha); }, ANATOMY_PY_ALPHA);
    def_method_and_function(
        cls, m, name, [](T a, S b, S alpha) { return a.add(b, alpha); }, ANATOMY_PY_ALPHA);
  }
  for (const char* name : {"sub", "subtract"}) {
    def_method_and_function(
        cls, m, name, [](T a, T b, S alpha) { return a.sub(b, alpha); }, ANATOMY_PY_ALPHA);
    def_method_and_function(
        cls, m, name, [](T a, S b, S alpha) { return a.sub(b, alpha); }, ANATOMY_PY_ALPHA);
  }
  def_method_and_function(
      cls, m, "rsub", [](T a, T b, S alpha) { return rsub(a, b, alpha); }, ANATOMY_PY_ALPHA);
  def_method_and_function(
      cls, m, "rsub", [](T a, S b, S alpha) { return rsub(a, b, alpha); }, ANATOMY_PY_ALPHA);
  def_in_place(
      cls, "add_", [](T a, T b, S alpha) -> InPlace { return a.add_(b, alpha); }, ANATOMY_PY_ALPHA);
  def_in_place(
      cls, "add_", [](T a, S b, S alpha) -> InPlace { return a.add_(b, alpha); }, ANATOMY_PY_ALPHA);
  def_in_place(
      cls, "sub_", [](T a, T b, S alpha) -> InPlace { return a.sub_(b, alpha); }, ANATOMY_PY_ALPHA);
  def_in_place(
      cls, "sub_", [](T a, S b, S alpha) -> InPlace { return a.sub_(b, alpha); }, ANATOMY_PY_ALPHA);
  for (const char* name : {"mul", "multiply"}) {
    def_method_and_function(
        cls, m, name, [](T a, T b) { return a.mul(b); }, nb::arg("other"));
    def_method_and_function(
        cls, m, name, [](T a, S b) { return a.mul(b); }, nb::arg("other"));
  }
  def_in_place(
      cls, "mul_", [](T a, T b) -> InPlace { return a.mul_(b); }, nb::arg("other"));
  def_in_place(
      cls, "mul_", [](T a, S b) -> InPlace { return a.mul_(b); }, nb::arg("other"));
#define ANATOMY_PY_MODE nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none()
  for (const char* name : {"div", "divide", "true_divide"}) {
    def_method_and_function(
        cls, m, name, [](T a, T b, Mode r) { return a.div(b, r); }, ANATOMY_PY_MODE);
    def_method_and_function(
        cls, m, name, [](T a, S b, Mode r) { return a.div(b, r); }, ANATOMY_PY_MODE);
  }
  def_in_place(
      cls, "div_", [](T a, T b, Mode r) -> InPlace { return a.div_(b, r); }, ANATOMY_PY_MODE);
  def_in_place(
      cls, "div_", [](T a, S b, Mode r) -> InPlace { return a.div_(b, r); }, ANATOMY_PY_MODE);
#undef ANATOMY_PY_ALPHA
#undef ANATOMY_PY_MODE
}

// One method, one function and one in-place method per row of core/op_lists.h.
void bind_element_wise_rows(TensorClass& cls, nb::module_& m) {
#define ANATOMY_PY_UNARY(e, name, ...)                                  \
  def_method_and_function(cls, m, #name, [](T a) { return a.name(); }); \
  def_in_place(cls, #name "_", [](T a) -> InPlace { return a.name##_(); });
  ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_PY_UNARY)
#undef ANATOMY_PY_UNARY
  // max(other) and min(other) are bound with the reductions of the same names
  // (tensor_reductions.cpp), which decide between a dim and a tensor.
#define ANATOMY_PY_BINARY(e, name, ...)                                                      \
  if (std::string_view(#name) != "max" && std::string_view(#name) != "min") {                \
    def_method_and_function(                                                                 \
        cls, m, #name, [](T a, T b) { return a.name(b); }, nb::arg("other"));                \
    def_method_and_function(                                                                 \
        cls, m, #name, [](T a, S b) { return a.name(b); }, nb::arg("other"));                \
    def_in_place(                                                                            \
        cls, #name "_", [](T a, T b) -> InPlace { return a.name##_(b); }, nb::arg("other")); \
    def_in_place(                                                                            \
        cls, #name "_", [](T a, S b) -> InPlace { return a.name##_(b); }, nb::arg("other")); \
  }
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_PY_BINARY)
#undef ANATOMY_PY_BINARY
  m.def(
      "pow", [](S a, T b) { return pow(a, b); }, nb::arg("self"), nb::arg("exponent"));
}

}  // namespace

void bind_tensor_arithmetic(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  bind_operators(cls);
  bind_arithmetic_methods(cls, m);
  bind_element_wise_rows(cls, m);
}

}  // namespace anatomy::python

// anatomy.library: defining an operator from its schema and registering a Python function as its
// kernel for one dispatch key, at run time, as torch.library does. The operator is then an
// operator like any other: anatomy.ops.<ns>.<name> calls it, dumps and traces show it, and C++
// code can call it through the dispatcher. A Python kernel is a boxed kernel: it receives the
// call's arguments as Python values and its result is checked against the schema's returns.
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include "bindings.h"
#include "ivalue_convert.h"
#include "ops_overload.h"

namespace anatomy::python {

namespace {

dispatch::RegKey parse_reg_key(std::string_view text) {
  std::vector<std::string_view> known;
  for (int k = 0; k < dispatch::kNumRegKeys; ++k) {
    auto key = static_cast<dispatch::RegKey>(k);
    if (dispatch::to_string(key) == text) return key;
    known.push_back(dispatch::to_string(key));
  }
  ANATOMY_THROW(ValueError, "anatomy.library.impl: unknown dispatch key '{}'; the keys are: {}", text,
                fmt::join(known, ", "));
}

// The boxed kernel of every Python implementation; ctx is the Python function (kept for the life
// of the process, as registrations are).
void python_kernel(const dispatch::OperatorHandle& op, DispatchKeySet, dispatch::Stack& stack, void* ctx) {
  nb::gil_scoped_acquire gil;
  const dispatch::Schema& schema = op.schema();
  size_t nargs = schema.arguments.size();
  size_t base = stack.size() - nargs;
  nb::object args = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nargs)));
  for (size_t i = 0; i < nargs; ++i) {
    PyTuple_SET_ITEM(args.ptr(), i, from_ivalue(stack[base + i]).release().ptr());
  }
  nb::object result = nb::borrow(static_cast<PyObject*>(ctx))(*args);
  stack.resize(base);

  size_t nreturns = schema.returns.size();
  std::vector<nb::handle> values;
  if (nreturns == 1) {
    values.push_back(result);
  } else if (nreturns > 1) {
    ANATOMY_CHECK(nb::isinstance<nb::tuple>(result) && nb::len(result) == nreturns, TypeError,
                  "{}: the Python kernel must return a tuple of {} values, got {}", op.name(), nreturns,
                  python_type_name(result));
    for (nb::handle v : nb::borrow<nb::tuple>(result)) values.push_back(v);
  }
  for (size_t r = 0; r < nreturns; ++r) {
    dispatch::IValue v;
    ANATOMY_CHECK(try_to_ivalue(values[r], schema.returns[r].type, v), TypeError,
                  "{}: the Python kernel returned {} where the schema '{}' returns {}", op.name(),
                  python_type_name(values[r]), schema.to_string(), dispatch::arg_type_name(schema.returns[r].type));
    stack.push_back(std::move(v));
  }
}

}  // namespace

void bind_library(nb::module_& m) {
  m.def(
      "_library_define",
      [](const std::string& qualified_schema) {
        size_t sep = qualified_schema.find("::");
        ANATOMY_CHECK(sep != std::string::npos && sep > 0, ValueError,
                      "anatomy.library.define: '{}' needs a namespace, as in 'myops::scale(Tensor x) -> Tensor'",
                      qualified_schema);
        std::string ns = qualified_schema.substr(0, sep);
        dispatch::OperatorHandle h =
            dispatch::Dispatcher::singleton().def(ns, qualified_schema.substr(sep + 2), "anatomy.library.define");
        ops_registry_generation.fetch_add(1, std::memory_order_release);
        return h.name();
      },
      nb::arg("schema"), "Defines an operator from 'ns::name.overload(args) -> returns'; returns its qualified name.");
  m.def(
      "_library_impl",
      [](const std::string& qualified_name, const std::string& key, nb::callable fn) {
        ANATOMY_CHECK(qualified_name.find("::") != std::string::npos, ValueError,
                      "anatomy.library.impl: '{}' needs a namespace, as in 'myops::scale'", qualified_name);
        ANATOMY_CHECK(dispatch::Dispatcher::singleton().find(qualified_name).has_value(), ValueError,
                      "anatomy.library.impl: no operator named '{}'; define its schema first", qualified_name);
        dispatch::RegisteredKernel r;
        r.kernel = dispatch::KernelFunction::from_boxed(&python_kernel, fn.inc_ref().ptr());
        r.name = fmt::format("python:{}", nb::str(nb::getattr(fn, "__qualname__", nb::str("<callable>"))).c_str());
        r.file = "<python>";
        dispatch::Dispatcher::singleton().impl(qualified_name, parse_reg_key(key), std::move(r),
                                               "anatomy.library.impl");
        ops_registry_generation.fetch_add(1, std::memory_order_release);
      },
      nb::arg("qualified_name"), nb::arg("dispatch_key"), nb::arg("fn"),
      "Registers the Python function fn as the kernel of an operator for one dispatch key.");
}

}  // namespace anatomy::python

#include "ops_overload.h"

#include <fmt/format.h>

#include <algorithm>

#include "ivalue_convert.h"

namespace anatomy::python {

using dispatch::ArgType;
using dispatch::IValue;
using dispatch::Stack;

std::atomic<uint64_t> ops_registry_generation{0};

Overload::Overload(dispatch::OperatorHandle handle) : op(handle) {
  const dispatch::Schema& s = op.schema();
  for (const dispatch::Argument& a : s.arguments) {
    names.push_back(nb::steal(PyUnicode_InternFromString(a.name.c_str())));
    defaults.push_back(a.default_value ? std::optional<IValue>(parse_default(a)) : std::nullopt);
    if (!a.kwarg_only) ++max_positional;
  }
  for (const dispatch::Return& r : s.returns) {
    int written = -1;
    if (r.alias && r.alias->is_write) {
      for (size_t i = 0; i < s.arguments.size(); ++i) {
        if (s.arguments[i].alias == r.alias) written = static_cast<int>(i);
      }
    }
    returns_argument.push_back(written);
  }
}

std::string Overload::overload_name() const {
  const std::string& name = schema().overload_name;
  return name.empty() ? "default" : name;
}

bool Overload::bind(PyObject* args, PyObject* kwargs, Stack& stack, std::string* why, bool numbers_as_tensors) const {
  const auto& arguments = schema().arguments;
  size_t npos = static_cast<size_t>(PyTuple_GET_SIZE(args));
  size_t nkw = kwargs ? static_cast<size_t>(PyDict_GET_SIZE(kwargs)) : 0;
  if (npos > max_positional) {
    if (why) *why = fmt::format("takes {} positional arguments but {} were given", max_positional, npos);
    return false;
  }
  stack.clear();
  stack.reserve(arguments.size());
  size_t used_kw = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    PyObject* value = i < npos ? PyTuple_GET_ITEM(args, i) : nullptr;
    if (nkw != 0) {
      if (PyObject* kw = PyDict_GetItem(kwargs, names[i].ptr())) {
        if (value) {
          if (why) *why = fmt::format("got multiple values for argument '{}'", arguments[i].name);
          return false;
        }
        value = kw;
        ++used_kw;
      }
    }
    if (!value) {
      if (!defaults[i]) {
        if (why) *why = fmt::format("missing required argument '{}'", arguments[i].name);
        return false;
      }
      stack.push_back(*defaults[i]);
      continue;
    }
    IValue v;
    if (!try_to_ivalue(value, arguments[i].type, v, numbers_as_tensors)) {
      if (why) {
        *why = fmt::format("argument '{}' must be {}, not {}", arguments[i].name,
                           dispatch::arg_type_name(arguments[i].type), python_type_name(value));
      }
      return false;
    }
    stack.push_back(std::move(v));
  }
  if (used_kw != nkw) {
    if (why) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(kwargs, &pos, &key, &value)) {
        auto known = std::find_if(names.begin(), names.end(),
                                  [&](const nb::object& n) { return PyUnicode_Compare(n.ptr(), key) == 0; });
        if (known == names.end()) {
          *why = fmt::format("unexpected keyword argument '{}'", nb::str(key).c_str());
          break;
        }
      }
    }
    return false;
  }
  return true;
}

PyObject* Overload::argument_object(size_t i, PyObject* args, PyObject* kwargs) const {
  if (i < static_cast<size_t>(PyTuple_GET_SIZE(args))) return PyTuple_GET_ITEM(args, i);
  return kwargs ? PyDict_GetItem(kwargs, names[i].ptr()) : nullptr;
}

nb::object Overload::call(Stack& stack, PyObject* args, PyObject* kwargs) const {
  op.call_boxed(stack);
  size_t n = returns_argument.size();
  auto result = [&](size_t r) -> nb::object {
    if (returns_argument[r] >= 0) {
      if (PyObject* given = argument_object(static_cast<size_t>(returns_argument[r]), args, kwargs)) {
        return nb::borrow(given);
      }
    }
    return from_ivalue(stack[stack.size() - n + r]);
  };
  if (n == 0) return nb::none();
  if (n == 1) return result(0);
  nb::object out = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(n)));
  for (size_t r = 0; r < n; ++r) PyTuple_SET_ITEM(out.ptr(), r, result(r).release().ptr());
  return out;
}

std::vector<std::string> overload_names(const std::string& ns, const std::string& name) {
  std::string prefix = fmt::format("{}::{}", ns, name);
  std::vector<std::string> out;
  for (std::string& q : dispatch::list_ops()) {
    if (q.starts_with(prefix) && (q.size() == prefix.size() || q[prefix.size()] == '.')) out.push_back(std::move(q));
  }
  // list_ops is sorted, so the name without an overload ("aten::sum") already comes first.
  return out;
}

}  // namespace anatomy::python

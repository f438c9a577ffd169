#include "ops_overload.h"

#include <fmt/format.h>

#include <algorithm>

#include "ivalue_convert.h"
#include "ops_typed_call.h"

namespace anatomy::python {

using dispatch::ArgType;
using dispatch::IValue;
using dispatch::Stack;

std::atomic<uint64_t> ops_registry_generation{0};

PyObject* CallArgs::keyword(PyObject* name) const {
  size_t n = nkw();
  // Keyword names written in the source are interned, as `name` is: the identity test finds them.
  for (size_t j = 0; j < n; ++j) {
    if (keyword_name(j) == name) return keyword_value(j);
  }
  for (size_t j = 0; j < n; ++j) {
    if (PyUnicode_Compare(keyword_name(j), name) == 0) return keyword_value(j);
  }
  return nullptr;
}

namespace {
// This thread's idle stacks, a free list: a call takes one and gives it back, so a nested call
// (a Python kernel calling anatomy.ops) takes another. A plain pointer, so that reaching it costs
// no thread_local initialization check.
thread_local StackLease::Node* idle_stacks = nullptr;

// Frees this thread's stacks when it exits (no call is in flight then, so all are idle).
struct FreeIdleStacks {
  ~FreeIdleStacks() {
    while (StackLease::Node* s = idle_stacks) {
      idle_stacks = s->next;
      delete s;
    }
  }
};
}  // namespace

StackLease::StackLease() {
  if (idle_stacks) {
    node_ = idle_stacks;
    idle_stacks = node_->next;
    return;
  }
  thread_local FreeIdleStacks free_at_exit;  // set up with the thread's first stack
  (void)free_at_exit;
  node_ = new Node;
}

StackLease::~StackLease() {
  node_->stack.clear();
  node_->next = idle_stacks;
  idle_stacks = node_;
}

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
  if (std::optional<TypedCall> t = TypedCall::for_overload(*this)) typed = std::make_shared<const TypedCall>(*t);
}

std::string Overload::overload_name() const {
  const std::string& name = schema().overload_name;
  return name.empty() ? "default" : name;
}

bool Overload::bind(const CallArgs& args, Stack& stack, std::string* why, bool numbers_as_tensors) const {
  const auto& arguments = schema().arguments;
  size_t npos = args.npos;
  size_t nkw = args.nkw();
  if (npos > max_positional) {
    if (why) *why = fmt::format("takes {} positional arguments but {} were given", max_positional, npos);
    return false;
  }
  // A positional Tensor or Scalar argument of the wrong kind rules this overload out before any
  // argument is converted: a packet tries its overloads in turn (add.Scalar before add.Tensor),
  // and converting the ones ahead of the misfit costs more than the check.
  if (!why) {
    for (size_t i = 0; i < npos; ++i) {
      if (!kind_fits(args.values[i], arguments[i].type, numbers_as_tensors)) return false;
    }
  }
  stack.clear();
  stack.reserve(arguments.size());
  size_t used_kw = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    PyObject* value = i < npos ? args.values[i] : nullptr;
    if (nkw != 0) {
      if (PyObject* kw = args.keyword(names[i].ptr())) {
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
    // Converted in place, on the stack.
    if (!try_to_ivalue(value, arguments[i].type, stack.emplace_back(), numbers_as_tensors)) {
      if (why) {
        *why = fmt::format("argument '{}' must be {}, not {}", arguments[i].name,
                           dispatch::arg_type_name(arguments[i].type), python_type_name(value));
      }
      return false;
    }
  }
  if (used_kw != nkw) {
    if (why) {
      for (size_t j = 0; j < nkw; ++j) {
        PyObject* key = args.keyword_name(j);
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

PyObject* Overload::argument_object(size_t i, const CallArgs& args) const {
  if (i < args.npos) return args.values[i];
  return args.keyword(names[i].ptr());
}

nb::object Overload::call(Stack& stack, const CallArgs& args) const {
  op.call_boxed(stack);
  size_t n = returns_argument.size();
  auto result = [&](size_t r) -> nb::object {
    if (returns_argument[r] >= 0) {
      if (PyObject* given = argument_object(static_cast<size_t>(returns_argument[r]), args)) {
        return nb::borrow(given);
      }
    }
    return from_ivalue(std::move(stack[stack.size() - n + r]));
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

// One operator overload as anatomy.ops calls it: its handle, its arguments' Python names and
// parsed defaults, and the binding of a Python call (positional then keyword arguments) onto a
// boxed Stack. Shared by the overload packets (ops_call.cpp) and the registration of Python
// kernels (ops_library.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

// A call's arguments as the vectorcall protocol (PEP 590) passes them: `npos` positional values,
// then the values of the keyword arguments named by the `kwnames` tuple (null without keywords),
// in place in the caller's frame: no tuple or dict is built per call.
struct CallArgs {
  PyObject* const* values;
  size_t npos;
  PyObject* kwnames;

  size_t nkw() const { return kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0; }
  PyObject* keyword_name(size_t j) const { return PyTuple_GET_ITEM(kwnames, static_cast<Py_ssize_t>(j)); }
  PyObject* keyword_value(size_t j) const { return values[npos + j]; }
  // The value passed as keyword `name` (an interned str), or nullptr.
  PyObject* keyword(PyObject* name) const;
};

// The Stack of one anatomy.ops call, taken from a per-thread pool so that a call allocates none;
// a Python kernel (anatomy.library) that calls anatomy.ops while the outer call's stack is in use
// takes another. Given back empty, so that the call's tensors go with it.
class StackLease {
 public:
  struct Node {  // an idle stack is on its thread's free list
    dispatch::Stack stack;
    Node* next = nullptr;
  };

  StackLease();
  ~StackLease();
  StackLease(const StackLease&) = delete;
  StackLease& operator=(const StackLease&) = delete;
  dispatch::Stack& operator*() const { return node_->stack; }

 private:
  Node* node_;
};

class TypedCall;

struct Overload {
  explicit Overload(dispatch::OperatorHandle handle);

  dispatch::OperatorHandle op;
  std::vector<nb::object> names;                          // the arguments' names, as interned str
  std::vector<std::optional<dispatch::IValue>> defaults;  // parsed once from the schema's literals
  size_t max_positional = 0;                              // the arguments before '*'
  // Per return: the argument whose write alias it shares ("Tensor(a!) out" -> "Tensor(a!)"), so
  // that an in-place or out= call returns the very object it was given, as PyTorch does; or -1.
  std::vector<int> returns_argument;
  // The call without a stack, for the commonest schemas (ops_typed_call.h); null for the others.
  std::shared_ptr<const TypedCall> typed;

  const dispatch::Schema& schema() const { return op.schema(); }
  // "default" for the overload without a name, as torch.ops spells it.
  std::string overload_name() const;

  // Binds a call's arguments onto `stack`. On failure returns false and,
  // when `why` is given, says why ("argument 'other' must be Tensor, not str"); the first pass of
  // overload resolution passes null so that a failing overload costs no message.
  // `numbers_as_tensors`: a Python number may stand for a Tensor argument (try_to_ivalue).
  bool bind(const CallArgs& args, dispatch::Stack& stack, std::string* why, bool numbers_as_tensors = false) const;
  // Calls the operator with a bound stack; returns None, one value, or a tuple.
  nb::object call(dispatch::Stack& stack, const CallArgs& args) const;
  // The Python value bound to argument i (nullptr when it took its default).
  PyObject* argument_object(size_t i, const CallArgs& args) const;
};

// Incremented by every registration made through anatomy.library, so that overload packets made
// before it look their overloads up again.
extern std::atomic<uint64_t> ops_registry_generation;

// The qualified names ("aten::add.Tensor") of the overloads of ns::name, in the order a packet
// tries them: the overload without a name first, then by name.
std::vector<std::string> overload_names(const std::string& ns, const std::string& name);

}  // namespace anatomy::python

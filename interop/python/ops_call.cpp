// anatomy.ops.<namespace>.<name>: every operator the dispatcher knows, called from Python through
// its schema, with no binding written per operator (anatomy/ops.py makes the namespaces).
//
// An OpOverloadPacket stands for the overloads of one name ("aten::add": add.Tensor, add.Scalar,
// add.out...) and a call tries them in order, binding the arguments against each schema, until one
// binds; an OpOverload (anatomy.ops.aten.add.Tensor) is one of them. The binding loop is here in
// C++ and the overloads with their parsed defaults are looked up once per packet, so a call costs
// a few conversions and one boxed dispatch. The registry only grows: a packet reloads its overloads
// when anatomy.library registered something since (a counter), or when no overload binds (an
// operator registered from C++ after the packet was made).
//
// Both classes are called through per-instance vectorcall (PEP 590): the interpreter calls the
// function stored in the object with the arguments where they lie, with no args tuple, kwargs dict
// or bound __call__ method in between, and the call's Stack comes from a per-thread pool.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.h"
#include "errors.h"
#include "ivalue_convert.h"
#include "ops_overload.h"
#include "ops_typed_call.h"

namespace anatomy::python {

namespace {

// The vectorcall function of a class T below: T::call with the arguments in place, the C++
// exceptions turned into Python ones as nanobind's function wrapper would.
template <typename T>
PyObject* vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) noexcept {
  try {
    CallArgs call_args{args, static_cast<size_t>(PyVectorcall_NARGS(nargsf)), kwnames};
    return nb::inst_ptr<T>(self)->call(call_args).release().ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* refuse_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", type->tp_name);
  return nullptr;
}

// The type slots of a class called through vectorcall: tp_call for callers that hold a tuple and
// dict anyway (PyObject_Call), and a tp_new that refuses, so that every instance is made from C++
// (make_callable) with its vectorcall member set.
const PyType_Slot callable_slots[] = {{Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                                      {Py_tp_new, reinterpret_cast<void*>(refuse_new)},
                                      {0, nullptr}};

// The Python object of `value`, whose class starts with the member `vectorcallfunc vectorcall`.
// nanobind keeps the C++ object inside the Python instance at a fixed offset; the type learns the
// member's offset from its first instance and every later one is checked against it.
template <typename T>
nb::object make_callable(T value) {
  nb::object obj = nb::cast(std::move(value));
  auto* type = reinterpret_cast<PyTypeObject*>(obj.type().ptr());
  Py_ssize_t offset = reinterpret_cast<char*>(&nb::inst_ptr<T>(obj)->vectorcall) - reinterpret_cast<char*>(obj.ptr());
  if (!PyType_HasFeature(type, Py_TPFLAGS_HAVE_VECTORCALL)) {
    type->tp_vectorcall_offset = offset;
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
  }
  ANATOMY_INTERNAL_ASSERT(type->tp_vectorcall_offset == offset, "{}: the vectorcall member moved in the instance",
                          type->tp_name);
  return obj;
}

class OpOverloadPacket {
 public:
  OpOverloadPacket(std::string ns, std::string name) : ns_(std::move(ns)), name_(std::move(name)) { reload(); }

  vectorcallfunc vectorcall = &python::vectorcall<OpOverloadPacket>;

  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }
  std::string qualified_name() const { return fmt::format("{}::{}", ns_, name_); }
  const std::vector<std::shared_ptr<const Overload>>& overloads() const { return overloads_; }

  // Loads the overloads from the dispatcher; false when there are none.
  bool reload() {
    generation_ = ops_registry_generation.load(std::memory_order_acquire);
    std::vector<std::string> names = overload_names(ns_, name_);
    if (names.size() == overloads_.size()) return !names.empty();
    overloads_.clear();
    for (const std::string& q : names) {
      overloads_.push_back(std::make_shared<const Overload>(*dispatch::Dispatcher::singleton().find(q)));
    }
    return !overloads_.empty();
  }

  nb::object call(const CallArgs& args) {
    if (generation_ != ops_registry_generation.load(std::memory_order_relaxed)) reload();
    // The first pass tries each overload's typed call before its binding: where the typed call
    // takes the arguments, the binding would have taken them too, so the order is the same.
    StackLease stack;
    for (const auto& o : overloads_) {
      if (o->typed) {
        if (PyObject* result = o->typed->try_call(args)) return nb::steal(result);
      }
      if (o->bind(args, *stack, nullptr)) return o->call(*stack, args);
    }
    for (const auto& o : overloads_) {
      if (o->bind(args, *stack, nullptr, /*numbers_as_tensors=*/true)) return o->call(*stack, args);
    }
    // An overload registered from C++ since the packet was made may be the one that binds.
    size_t before = overloads_.size();
    reload();
    if (overloads_.size() != before) return call(args);
    throw_no_match(args);
  }

  std::string doc() const {
    std::string out = fmt::format("{}: an operator with {} overload{}, tried in this order:\n", qualified_name(),
                                  overloads_.size(), overloads_.size() == 1 ? "" : "s");
    for (const auto& o : overloads_) out += fmt::format("  {}\n", o->schema().to_string());
    return out;
  }

 private:
  [[noreturn]] void throw_no_match(const CallArgs& args) const {
    std::vector<std::string> given;
    for (size_t i = 0; i < args.npos; ++i) given.push_back(python_type_name(args.values[i]));
    for (size_t j = 0; j < args.nkw(); ++j) {
      given.push_back(
          fmt::format("{}={}", nb::str(args.keyword_name(j)).c_str(), python_type_name(args.keyword_value(j))));
    }
    std::string tried;
    dispatch::Stack stack;
    for (const auto& o : overloads_) {
      std::string why;
      o->bind(args, stack, &why, /*numbers_as_tensors=*/true);
      tried += fmt::format("\n  {}: {}", o->schema().to_string(), why);
    }
    throw nb::type_error(fmt::format("{}() got arguments ({}) that bind no overload; tried:{}", qualified_name(),
                                     fmt::join(given, ", "), tried)
                             .c_str());
  }

  std::string ns_, name_;
  std::vector<std::shared_ptr<const Overload>> overloads_;
  uint64_t generation_ = 0;
};

// anatomy.ops.aten.add.Tensor: one overload, called with exactly its schema.
struct OpOverload {
  explicit OpOverload(std::shared_ptr<const Overload> o) : overload(std::move(o)) {}

  vectorcallfunc vectorcall = &python::vectorcall<OpOverload>;
  std::shared_ptr<const Overload> overload;

  nb::object call(const CallArgs& args) const {
    if (overload->typed) {
      if (PyObject* result = overload->typed->try_call(args)) return nb::steal(result);
    }
    StackLease stack;
    if (!overload->bind(args, *stack, nullptr) && !overload->bind(args, *stack, nullptr, /*numbers_as_tensors=*/true)) {
      std::string why;
      overload->bind(args, *stack, &why, /*numbers_as_tensors=*/true);
      throw nb::type_error(
          fmt::format("{}(): {} (schema: {})", overload->op.name(), why, overload->schema().to_string()).c_str());
    }
    return overload->call(*stack, args);
  }
};

// (name, type, kwarg_only, default) per argument, the default as a Python value or absent (a
// one-element tuple), for anatomy/ops.py's inspect.Signature.
nb::list argument_info(const Overload& o) {
  nb::list out;
  const auto& arguments = o.schema().arguments;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const dispatch::Argument& a = arguments[i];
    std::string type(dispatch::arg_type_name(a.type));
    if (o.defaults[i]) {
      out.append(nb::make_tuple(a.name, type, a.kwarg_only, from_ivalue(*o.defaults[i])));
    } else {
      out.append(nb::make_tuple(a.name, type, a.kwarg_only));
    }
  }
  return out;
}

nb::object make_overload(const std::shared_ptr<const Overload>& o) {
  nb::object obj = make_callable(OpOverload(o));
  nb::setattr(obj, "__doc__", nb::str(fmt::format("{}\n", o->schema().to_string()).c_str()));
  return obj;
}

}  // namespace

void bind_ops(nb::module_& m) {
  bind_memory_format(m);

  nb::class_<OpOverload>(m, "OpOverload", nb::dynamic_attr(), nb::type_slots(callable_slots),
                         "One overload of an operator (anatomy.ops.aten.add.Tensor), called with its schema.")
      .def_prop_ro("name", [](const OpOverload& self) { return self.overload->op.name(); })
      .def_prop_ro("overload_name", [](const OpOverload& self) { return self.overload->overload_name(); })
      .def_prop_ro("schema", [](const OpOverload& self) { return self.overload->schema().to_string(); })
      .def_prop_ro("arguments", [](const OpOverload& self) { return argument_info(*self.overload); })
      .def_prop_ro("returns",
                   [](const OpOverload& self) {
                     std::vector<std::string> out;
                     for (const auto& r : self.overload->schema().returns) out.emplace_back(arg_type_name(r.type));
                     return out;
                   })
      // inspect.signature reads it: anatomy/ops.py builds it from `arguments`.
      .def_prop_ro("__signature__",
                   [](nb::handle self) { return nb::module_::import_("anatomy.ops").attr("signature")(self); })
      .def_prop_ro("is_inplace_or_out",
                   [](const OpOverload& self) { return self.overload->schema().is_inplace_or_out(); })
      .def("__repr__",
           [](const OpOverload& self) { return fmt::format("<OpOverload '{}'>", self.overload->op.name()); });

  nb::class_<OpOverloadPacket>(m, "OpOverloadPacket", nb::dynamic_attr(), nb::type_slots(callable_slots),
                               "The overloads of one operator name (anatomy.ops.aten.add); a call picks the first "
                               "whose schema binds the arguments.")
      .def(
          "__getattr__",
          [](nb::handle self, const std::string& overload_name) -> nb::object {
            const OpOverloadPacket& p = nb::cast<const OpOverloadPacket&>(self);
            std::string wanted = overload_name == "default" ? "" : overload_name;
            for (const auto& o : p.overloads()) {
              if (o->schema().overload_name == wanted) {
                nb::object obj = make_overload(o);
                nb::setattr(self, overload_name.c_str(), obj);  // later lookups hit the instance dict
                return obj;
              }
            }
            throw nb::attribute_error(
                fmt::format("'{}' has no overload named '{}'", p.qualified_name(), overload_name).c_str());
          },
          nb::arg("name"))
      .def(
          "overloads",
          [](const OpOverloadPacket& self) {
            std::vector<std::string> out;
            for (const auto& o : self.overloads()) out.push_back(o->overload_name());
            return out;
          },
          "The names of the overloads ('default' for the one without a name), in the order a call tries them.")
      .def_prop_ro("name", &OpOverloadPacket::qualified_name)
      .def("__repr__",
           [](const OpOverloadPacket& self) { return fmt::format("<OpOverloadPacket '{}'>", self.qualified_name()); });

  m.def(
      "_ops_packet",
      [](const std::string& ns, const std::string& name) -> nb::object {
        OpOverloadPacket packet(ns, name);
        if (packet.overloads().empty()) {
          throw nb::attribute_error(fmt::format("no operator named '{}::{}'", ns, name).c_str());
        }
        std::string doc = packet.doc();
        nb::object obj = make_callable(std::move(packet));
        nb::setattr(obj, "__doc__", nb::str(doc.c_str()));
        return obj;
      },
      nb::arg("namespace"), nb::arg("name"),
      "The overload packet of ns::name; AttributeError when the dispatcher has no such operator.");
  m.def(
      "_ops_list", []() { return dispatch::list_ops(); },
      "The qualified names of every operator with a schema ('aten::add.Tensor', 'myops::scale', ...).");
}

}  // namespace anatomy::python

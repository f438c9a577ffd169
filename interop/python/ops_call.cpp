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
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.h"
#include "ivalue_convert.h"
#include "ops_overload.h"

namespace anatomy::python {

namespace {

class OpOverloadPacket {
 public:
  OpOverloadPacket(std::string ns, std::string name) : ns_(std::move(ns)), name_(std::move(name)) { reload(); }

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

  nb::object call(PyObject* args, PyObject* kwargs) {
    if (generation_ != ops_registry_generation.load(std::memory_order_relaxed)) reload();
    dispatch::Stack stack;
    for (bool numbers_as_tensors : {false, true}) {
      for (const auto& o : overloads_) {
        if (o->bind(args, kwargs, stack, nullptr, numbers_as_tensors)) return o->call(stack, args, kwargs);
      }
    }
    // An overload registered from C++ since the packet was made may be the one that binds.
    size_t before = overloads_.size();
    reload();
    if (overloads_.size() != before) return call(args, kwargs);
    throw_no_match(args, kwargs);
  }

  std::string doc() const {
    std::string out = fmt::format("{}: an operator with {} overload{}, tried in this order:\n", qualified_name(),
                                  overloads_.size(), overloads_.size() == 1 ? "" : "s");
    for (const auto& o : overloads_) out += fmt::format("  {}\n", o->schema().to_string());
    return out;
  }

 private:
  [[noreturn]] void throw_no_match(PyObject* args, PyObject* kwargs) const {
    std::vector<std::string> given;
    for (nb::handle a : nb::borrow<nb::tuple>(args)) given.push_back(python_type_name(a));
    if (kwargs) {
      for (auto [k, v] : nb::borrow<nb::dict>(kwargs)) {
        given.push_back(fmt::format("{}={}", nb::str(k).c_str(), python_type_name(v)));
      }
    }
    std::string tried;
    dispatch::Stack stack;
    for (const auto& o : overloads_) {
      std::string why;
      o->bind(args, kwargs, stack, &why, /*numbers_as_tensors=*/true);
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
  std::shared_ptr<const Overload> overload;

  nb::object call(PyObject* args, PyObject* kwargs) const {
    dispatch::Stack stack;
    std::string why;
    if (!overload->bind(args, kwargs, stack, nullptr) &&
        !overload->bind(args, kwargs, stack, nullptr, /*numbers_as_tensors=*/true)) {
      overload->bind(args, kwargs, stack, &why, /*numbers_as_tensors=*/true);
      throw nb::type_error(
          fmt::format("{}(): {} (schema: {})", overload->op.name(), why, overload->schema().to_string()).c_str());
    }
    return overload->call(stack, args, kwargs);
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
  nb::object obj = nb::cast(OpOverload{o});
  nb::setattr(obj, "__doc__", nb::str(fmt::format("{}\n", o->schema().to_string()).c_str()));
  return obj;
}

}  // namespace

void bind_ops(nb::module_& m) {
  bind_memory_format(m);

  nb::class_<OpOverload>(m, "OpOverload", nb::dynamic_attr(),
                         "One overload of an operator (anatomy.ops.aten.add.Tensor), called with its schema.")
      .def(
          "__call__",
          [](const OpOverload& self, nb::args args, nb::kwargs kwargs) { return self.call(args.ptr(), kwargs.ptr()); },
          nb::sig("def __call__(self, *args: object, **kwargs: object) -> object"))
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

  nb::class_<OpOverloadPacket>(m, "OpOverloadPacket", nb::dynamic_attr(),
                               "The overloads of one operator name (anatomy.ops.aten.add); a call picks the first "
                               "whose schema binds the arguments.")
      .def(
          "__call__",
          [](OpOverloadPacket& self, nb::args args, nb::kwargs kwargs) { return self.call(args.ptr(), kwargs.ptr()); },
          nb::sig("def __call__(self, *args: object, **kwargs: object) -> object"))
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
        nb::object obj = nb::cast(std::move(packet));
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

#include "ivalue_convert.h"

#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include <cstdlib>
#include <limits>
#include <string_view>
#include <utility>

#include "convert.h"
#include "tensor_object.h"

namespace anatomy::python {

using dispatch::ArgType;
using dispatch::IValue;

namespace {

bool is_none(nb::handle h) { return h.is_none(); }
// An int for an int argument: a Python int or anything with __index__ (NumPy's integers), not a
// bool, since True is not a dimension.
// A tensor has __index__ (a one-element integer tensor converts), but an `int` argument takes
// a Python integer only, so that max(t, other) binds max.other rather than max.dim.
bool is_int_like(nb::handle h) { return !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()) && !is_tensor(h); }
// A number for a Scalar argument: bool, int, float, or a real number of another library (NumPy's
// float64...), but not a tensor, whose overload is a separate one.
bool is_number(nb::handle h) {
  if (is_scalar(h)) return true;
  return !is_tensor(h) && PyNumber_Check(h.ptr()) && !PyComplex_Check(h.ptr()) && !PySequence_Check(h.ptr());
}
// A float for a float argument: a Python float or int (not a bool), or another library's real
// number.
bool is_float_like(nb::handle h) { return !PyBool_Check(h.ptr()) && is_number(h); }
// A list of ints: an int (repeated, as int[N] schemas read one) or a sequence of ints.
bool is_int_list(nb::handle h) {
  if (is_int_like(h)) return true;
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) return false;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (!is_int_like(item)) return false;
  }
  return true;
}
bool is_tensor_list(nb::handle h) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) return false;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (!is_tensor(item)) return false;
  }
  return true;
}

// The non-optional form of an optional type, and whether `type` is optional at all.
ArgType base_type(ArgType type) {
  switch (type) {
    case ArgType::OptionalTensor:
      return ArgType::Tensor;
    case ArgType::OptionalScalar:
      return ArgType::Scalar;
    case ArgType::OptionalInt:
      return ArgType::Int;
    case ArgType::OptionalFloat:
      return ArgType::Float;
    case ArgType::OptionalIntList:
      return ArgType::IntList;
    case ArgType::OptionalScalarType:
      return ArgType::ScalarType;
    case ArgType::OptionalDevice:
      return ArgType::Device;
    case ArgType::OptionalString:
      return ArgType::String;
    case ArgType::OptionalMemoryFormat:
      return ArgType::MemoryFormat;
    default:
      return type;
  }
}

double to_double(nb::handle h) {
  double v = PyFloat_AsDouble(h.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

// The literal of a default value, trimmed of the quotes a string default carries.
std::string unquote(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front()) {
    return std::string(text.substr(1, text.size() - 2));
  }
  return std::string(text);
}

int64_t parse_int_literal(std::string_view text, const dispatch::Argument& arg) {
  std::string s(text);
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  ANATOMY_CHECK(!s.empty() && *end == '\0', ValueError, "default of '{}': '{}' is not an int", arg.name, text);
  return static_cast<int64_t>(v);
}

double parse_float_literal(std::string_view text, const dispatch::Argument& arg) {
  std::string s(text);
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  ANATOMY_CHECK(!s.empty() && *end == '\0', ValueError, "default of '{}': '{}' is not a number", arg.name, text);
  return v;
}

MemoryFormat parse_memory_format(std::string_view text, const dispatch::Argument& arg) {
  for (MemoryFormat f :
       {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d, MemoryFormat::Preserve}) {
    if (to_string(f) == text) return f;
  }
  ANATOMY_THROW(ValueError, "default of '{}': '{}' is not a memory format", arg.name, text);
}

// A Python number as a tensor argument: 0-dim, on the CPU, marked as a wrapped number so that it
// does not decide the result's dtype beyond its category (as binary ops treat a Scalar).
Tensor wrapped_number(const Scalar& s) {
  Tensor t = scalar_tensor(s, TensorOptions().dtype(s.dtype()));
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace

std::string python_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

bool kind_fits(nb::handle h, ArgType type, bool numbers_as_tensors) {
  switch (type) {  // not optional: None is no Tensor and no Scalar
    case ArgType::Tensor:
      return is_tensor(h) || (numbers_as_tensors && is_number(h));
    case ArgType::Scalar:
      return is_number(h);
    default:
      return true;
  }
}

bool try_to_ivalue(nb::handle h, ArgType type, IValue& out, bool numbers_as_tensors) {
  ArgType base = base_type(type);
  if (base != type && is_none(h)) {
    out = IValue();
    return true;
  }
  switch (base) {
    case ArgType::Tensor:
      if (const Tensor* t = exact_tensor(h)) {
        out = *t;
        return true;
      }
      if (is_tensor(h)) {
        out = nb::cast<Tensor>(h);
        return true;
      }
      if (!numbers_as_tensors || !is_number(h)) return false;
      out = wrapped_number(to_scalar(h));
      return true;
    case ArgType::TensorList:
      if (!is_tensor_list(h)) return false;
      {
        std::vector<Tensor> list;
        list.reserve(nb::len(h));
        for (nb::handle item : nb::borrow<nb::sequence>(h)) list.push_back(to_tensor(item));
        out = std::move(list);
      }
      return true;
    case ArgType::Scalar:
      if (!is_number(h)) return false;
      out = to_scalar(h);
      return true;
    case ArgType::Int:
      if (!is_int_like(h)) return false;
      out = to_int(h, "int argument");
      return true;
    case ArgType::Float:
      if (!is_float_like(h)) return false;
      out = to_double(h);
      return true;
    case ArgType::Bool:
      if (!PyBool_Check(h.ptr())) return false;
      out = h.ptr() == Py_True;
      return true;
    case ArgType::IntList:
      if (!is_int_list(h)) return false;
      out = to_int_list(h);
      return true;
    case ArgType::ScalarType:
      if (!nb::isinstance<DType>(h)) return false;
      out = nb::cast<DType>(h);
      return true;
    case ArgType::Device:
      if (!nb::isinstance<Device>(h) && !nb::isinstance<nb::str>(h) && !is_int_like(h)) return false;
      out = to_device(h);
      return true;
    case ArgType::String:
      if (!nb::isinstance<nb::str>(h)) return false;
      out = nb::cast<std::string>(h);
      return true;
    case ArgType::MemoryFormat:
      if (!nb::isinstance<MemoryFormat>(h)) return false;
      out = nb::cast<MemoryFormat>(h);
      return true;
    default:
      return false;
  }
}

IValue parse_default(const dispatch::Argument& arg) {
  const std::string& text = *arg.default_value;
  ArgType base = base_type(arg.type);
  if (text == "None") {
    ANATOMY_CHECK(base != arg.type, ValueError, "default of '{}': None for the non-optional type {}", arg.name,
                  dispatch::arg_type_name(arg.type));
    return IValue();
  }
  switch (base) {
    case ArgType::Bool:
      ANATOMY_CHECK(text == "True" || text == "False", ValueError, "default of '{}': '{}' is not a bool", arg.name,
                    text);
      return IValue(text == "True");
    case ArgType::Int:
      return IValue(parse_int_literal(text, arg));
    case ArgType::Float:
      return IValue(parse_float_literal(text, arg));
    case ArgType::Scalar:
      if (text == "True" || text == "False") return IValue(Scalar(text == "True"));
      if (text.find_first_of(".eEn") == std::string::npos) return IValue(Scalar(parse_int_literal(text, arg)));
      return IValue(Scalar(parse_float_literal(text, arg)));
    case ArgType::IntList: {
      // "[0,1]", "[]", or one int that stands for every element of an int[N].
      std::vector<int64_t> list;
      if (text.front() != '[') return IValue(std::vector<int64_t>{parse_int_literal(text, arg)});
      ANATOMY_CHECK(text.back() == ']', ValueError, "default of '{}': '{}' is not a list", arg.name, text);
      std::string_view body = std::string_view(text).substr(1, text.size() - 2);
      while (!body.empty()) {
        size_t comma = body.find(',');
        list.push_back(parse_int_literal(body.substr(0, comma), arg));
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
      }
      return IValue(std::move(list));
    }
    case ArgType::String:
      return IValue(unquote(text));
    case ArgType::ScalarType:
      return IValue(parse_dtype(text));
    case ArgType::Device:
      return IValue(Device(unquote(text)));
    case ArgType::MemoryFormat:
      return IValue(parse_memory_format(text, arg));
    default:
      ANATOMY_THROW(ValueError, "default of '{}': {} arguments take no default but None, got '{}'", arg.name,
                    dispatch::arg_type_name(arg.type), text);
  }
}

nb::object from_ivalue(const IValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return from_scalar(x);
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          nb::list out;
          for (const Tensor& t : x) out.append(tensor_object(t));
          return out;
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          nb::list out;
          for (int64_t i : x) out.append(nb::int_(i));
          return out;
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return tensor_object(x);
        } else {
          return nb::cast(x);
        }
      },
      v.variant());
}

nb::object from_ivalue(IValue&& v) {
  if (v.is<Tensor>()) return tensor_object(std::move(v.get<Tensor>()));
  return from_ivalue(std::as_const(v));
}

void bind_memory_format(nb::module_& m) {
  // Whichever part of the module binds MemoryFormat first owns the type; a second nb::enum_ for the
  // same C++ type would fail at import.
  if (!nb::type<MemoryFormat>().is_valid()) {
    nb::enum_<MemoryFormat>(m, "memory_format", "How a tensor's dimensions are laid out in memory.")
        .value("contiguous_format", MemoryFormat::Contiguous)
        .value("channels_last", MemoryFormat::ChannelsLast)
        .value("channels_last_3d", MemoryFormat::ChannelsLast3d)
        .value("preserve_format", MemoryFormat::Preserve);
  } else if (!nb::hasattr(m, "memory_format")) {
    m.attr("memory_format") = nb::type<MemoryFormat>();
  }
}

}  // namespace anatomy::python

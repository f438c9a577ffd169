#include "ops_typed_call.h"

#include <exception>
#include <string>

#include "convert.h"
#include "ivalue_convert.h"
#include "tensor_object.h"

namespace anatomy::python {

using dispatch::ArgType;

std::optional<TypedCall> TypedCall::for_overload(const Overload& o) {
  const dispatch::Schema& s = o.schema();
  const auto& arguments = s.arguments;
  if (s.returns.size() != 1 || s.returns[0].type != ArgType::Tensor || o.returns_argument[0] >= 0 ||
      arguments.empty() || arguments.size() > 3) {
    return std::nullopt;
  }
  std::string kinds;  // "T" for a Tensor argument, "S" for a Scalar
  for (const dispatch::Argument& a : arguments) {
    if (a.type == ArgType::Tensor) kinds += 'T';
    else if (a.type == ArgType::Scalar) kinds += 'S';
    else return std::nullopt;
  }
  std::array<std::optional<Scalar>, 3> defaults{};
  size_t required = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!o.defaults[i]) {
      if (i != required) return std::nullopt;  // a required argument after one with a default
      ++required;
    } else if (kinds[i] == 'S' && o.defaults[i]->is<Scalar>()) {
      defaults[i] = o.defaults[i]->get<Scalar>();
    } else {
      return std::nullopt;
    }
  }
  if (kinds[0] != 'T' || required == 0) return std::nullopt;
  // Only where a typed kernel has fixed the operator's C++ signature: every kernel registered
  // later must then have it too, so the handle below never meets one of another type. (An
  // operator with Python kernels alone has none fixed yet.)
  if (!o.op.entry().cpp_signature()) return std::nullopt;
  try {
    auto handle = [&]() -> std::optional<Handle> {
      if (kinds == "T") return Handle(o.op.typed<TensorT>());
      if (kinds == "TT") return Handle(o.op.typed<TensorTensorT>());
      if (kinds == "TS") return Handle(o.op.typed<TensorScalarT>());
      if (kinds == "TTS") return Handle(o.op.typed<TensorTensorScalarT>());
      if (kinds == "TSS") return Handle(o.op.typed<TensorScalarScalarT>());
      return std::nullopt;
    }();
    if (!handle) return std::nullopt;
    return TypedCall(std::move(*handle), arguments.size(), required, o.max_positional, std::move(defaults));
  } catch (const std::exception&) {
    return std::nullopt;  // the kernels are typed with another C++ signature: the boxed path
  }
}

bool TypedCall::scalar_at(const CallArgs& args, size_t i, Scalar& out) const {
  if (i >= args.npos) {
    out = *defaults_[i];  // set: the call passed at least the required arguments
    return true;
  }
  if (!kind_fits(args.values[i], ArgType::Scalar)) return false;
  out = to_scalar(args.values[i]);
  return true;
}

PyObject* TypedCall::try_call(const CallArgs& args) const {
  const size_t npos = args.npos;
  if (args.nkw() != 0 || npos < required_ || npos > max_positional_ || npos > nargs_) return nullptr;
  const Tensor* self = exact_tensor(args.values[0]);
  if (!self) return nullptr;
  Tensor result;
  Scalar a, b;
  switch (handle_.index()) {
    case 0:
      result = std::get<0>(handle_).call(*self);
      break;
    case 1: {
      const Tensor* other = exact_tensor(args.values[1]);
      if (!other) return nullptr;
      result = std::get<1>(handle_).call(*self, *other);
      break;
    }
    case 2:
      if (!scalar_at(args, 1, a)) return nullptr;
      result = std::get<2>(handle_).call(*self, a);
      break;
    case 3: {
      const Tensor* other = exact_tensor(args.values[1]);
      if (!other || !scalar_at(args, 2, a)) return nullptr;
      result = std::get<3>(handle_).call(*self, *other, a);
      break;
    }
    default:
      if (!scalar_at(args, 1, a) || !scalar_at(args, 2, b)) return nullptr;
      result = std::get<4>(handle_).call(*self, a, b);
      break;
  }
  return tensor_object(std::move(result)).release().ptr();
}

}  // namespace anatomy::python

// anatomy.ops calls without the boxed stack, for the schemas most calls have. An overload whose
// arguments are a Tensor, then a Tensor or a Scalar, then Scalars (at most three arguments), and
// whose one result is a new Tensor, is called through its typed handle, as the Tensor methods call
// the operator: the arguments become C++ values directly, with no IValue stack, boxed kernel
// wrapper or result unboxing (about 80 ns of a 0.25 us call on the CPU before). Anything else
// (keywords, tensor subclasses, a number for a Tensor) takes the boxed path, which binds the same
// arguments the same way: this path only skips work.
#pragma once

#include <array>
#include <optional>
#include <variant>

#include "ops_overload.h"

namespace anatomy::python {

class TypedCall {
 public:
  // Empty when the overload's schema is not one of those shapes, when no typed kernel has fixed
  // the operator's C++ type yet (Python kernels alone), or when that type is not the one the
  // shape calls (the typed handle's check).
  static std::optional<TypedCall> for_overload(const Overload& o);

  // The result (a new reference) when every argument is positional, each Tensor argument an exact
  // anatomy.Tensor and each Scalar argument a number, and the overload takes that many; else null,
  // with no Python error set, and the call goes the boxed way.
  PyObject* try_call(const CallArgs& args) const;

 private:
  using TensorT = Tensor(const Tensor&);
  using TensorTensorT = Tensor(const Tensor&, const Tensor&);
  using TensorScalarT = Tensor(const Tensor&, const Scalar&);
  using TensorTensorScalarT = Tensor(const Tensor&, const Tensor&, const Scalar&);
  using TensorScalarScalarT = Tensor(const Tensor&, const Scalar&, const Scalar&);
  using Handle =
      std::variant<dispatch::TypedOperatorHandle<TensorT>, dispatch::TypedOperatorHandle<TensorTensorT>,
                   dispatch::TypedOperatorHandle<TensorScalarT>, dispatch::TypedOperatorHandle<TensorTensorScalarT>,
                   dispatch::TypedOperatorHandle<TensorScalarScalarT>>;

  TypedCall(Handle handle, size_t nargs, size_t required, size_t max_positional,
            std::array<std::optional<Scalar>, 3> defaults)
      : handle_(std::move(handle)),
        nargs_(nargs),
        required_(required),
        max_positional_(max_positional),
        defaults_(std::move(defaults)) {}

  // Argument i as a Scalar: the call's number, or the default when the call stopped before it.
  bool scalar_at(const CallArgs& args, size_t i, Scalar& out) const;

  Handle handle_;
  size_t nargs_;                                   // the schema's arguments
  size_t required_;                                // the leading arguments without a default
  size_t max_positional_;                          // the arguments a call may pass by position
  std::array<std::optional<Scalar>, 3> defaults_;  // the Scalars' defaults, where they have one
};

}  // namespace anatomy::python
